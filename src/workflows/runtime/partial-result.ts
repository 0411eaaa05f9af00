import type { PartialResult } from '../../task-state/lifecycle.ts';

export type { PartialResult };

// Kept beside the error rather than inside it, so that errors keep the names by which the workflow recognises them.
const partials = new WeakMap<object, PartialResult>();

/**
 * `error`, carrying what the task produced before it (issue 27 Scope 7: a research task's report so far, its
 * citations, the phase it failed in) to the FAILED or TIMEOUT status it ends the task with.
 */
export function withPartialResult<E>(error: E, partial: PartialResult): E {
  if (typeof error === 'object' && error !== null) partials.set(error, partial);
  return error;
}

export function partialResultOf(error: unknown): PartialResult | undefined {
  return typeof error === 'object' && error !== null ? partials.get(error) : undefined;
}
