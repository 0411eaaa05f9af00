import type { FastifyInstance } from 'fastify';
import { badRequest } from '../errors.ts';

/** Deeper than any request of this API needs; much deeper JSON overflows the stack of whatever walks it. */
const MAX_DEPTH = 64;

/**
 * Finds the first value Postgres cannot store or that is not Unicode text: a NUL character (text and jsonb
 * refuse it), an unpaired surrogate (it has no UTF-8 form), or nesting deeper than MAX_DEPTH. Keys are
 * checked like values. Walks without recursion, so hostile depth cannot overflow the stack here either.
 */
export function findUnstorableInput(value: unknown, root: string): string | undefined {
  const pending: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: root, depth: 0 }];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    if (typeof item.value === 'string') {
      const problem = textProblem(item.value);
      if (problem) return `${item.path}: ${problem}`;
      continue;
    }
    if (item.value === null || typeof item.value !== 'object') continue;
    if (item.depth >= MAX_DEPTH) return `${item.path}: nested more than ${MAX_DEPTH} levels deep`;
    for (const [key, child] of Object.entries(item.value)) {
      const keyProblem = textProblem(key);
      if (keyProblem) return `a key of ${item.path}: ${keyProblem}`;
      pending.push({ value: child, path: Array.isArray(item.value) ? `${item.path}[${key}]` : `${item.path}.${key}`, depth: item.depth + 1 });
    }
  }
  return undefined;
}

function textProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain NUL (\\u0000) characters';
  if (!text.isWellFormed()) return 'contains an unpaired surrogate: not valid Unicode';
  return undefined;
}

/** Every body, query string and path parameter is checked before validation: bad text is a 400, never a 500. */
export function installStorableInputCheck(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const problem = findUnstorableInput(request.body, 'body') ?? findUnstorableInput(request.query, 'query string')
      ?? findUnstorableInput(request.params, 'path');
    if (problem) throw badRequest(`invalid ${problem.replace(/^body[.:]\s?/, '')}`);
  });
}
