import type { FastifyError, FastifyInstance } from 'fastify';
import { isAppError } from '../errors.ts';

interface ValidationIssue { instancePath: string; message?: string; keyword: string; params: Record<string, unknown> }

/** Names the field and the rule it broke, e.g. `body/max_iterations must be <= 50`. */
export function describeValidation(context: string, issues: ValidationIssue[]): string {
  const issue = issues[0];
  if (issue.keyword === 'required') return `${String(issue.params.missingProperty)} is required`;
  const field = `${context}${issue.instancePath}`.replace(/^body\//, '').replaceAll('/', '.');
  const allowed = issue.keyword === 'enum' ? `: ${(issue.params.allowedValues as unknown[]).join(', ')}` : '';
  return `invalid ${field}: ${issue.message ?? 'is invalid'}${allowed}`;
}

const FASTIFY_CLIENT_ERRORS: Record<string, { status: number; message: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, message: 'invalid JSON body' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, message: 'invalid JSON body: empty' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, message: 'request body too large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, message: 'unsupported media type: send application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, message: 'invalid content-length' },
};

/** One mapping from any error to the spec's `{error}` body (STYLE.md §3). */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (isAppError(error)) {
      return reply.status(error.statusCode).headers(error.headers).send({ error: error.message, ...error.extras });
    }
    if (error.validation) {
      return reply.status(400).send({ error: describeValidation(error.validationContext ?? 'body', error.validation as ValidationIssue[]) });
    }
    const known = FASTIFY_CLIENT_ERRORS[error.code];
    if (known) return reply.status(known.status).send({ error: known.message });
    if (error instanceof SyntaxError || (error.statusCode && error.statusCode >= 400 && error.statusCode < 500)) {
      return reply.status(error.statusCode ?? 400).send({ error: error.message });
    }
    request.log.error({ err: error }, 'request failed');
    return reply.status(500).send({ error: 'Internal server error' });
  });
  app.setNotFoundHandler((request, reply) => reply.status(404).send({ error: `Route ${request.method} ${request.url.split('?')[0]} not found` }));
}
