import type { FastifyError, FastifyInstance } from 'fastify';
import { isDatabaseUnavailable, isQueryTimeout, isTransientConflict } from '../db/database-errors.ts';
import { isAppError, serviceUnavailable, type AppError } from '../errors.ts';

interface ValidationIssue { instancePath: string; message?: string; keyword: string; params: Record<string, unknown> }

/** Names the field and the rule it broke, e.g. `body/max_iterations must be <= 50`. */
export function describeValidation(context: string, issues: ValidationIssue[]): string {
  const issue = mostSpecific(issues);
  if (issue.keyword === 'required') return `${String(issue.params.missingProperty)} is required`;
  if (issue.keyword === 'additionalProperties') {
    const place = `${context}${issue.instancePath}`.replaceAll('/', '.');
    return `unknown field in ${place}: ${String(issue.params.additionalProperty)}`;
  }
  const field = `${context}${issue.instancePath}`.replace(/^body\//, '').replaceAll('/', '.');
  const allowed = issue.keyword === 'enum' ? `: ${(issue.params.allowedValues as unknown[]).join(', ')}` : '';
  return `invalid ${field}: ${issue.message ?? 'is invalid'}${allowed}`;
}

/**
 * The issue to report. A value that fails a union (content: a string, null or a list of parts) gets one issue per
 * branch; the deepest is where the value came closest to matching, e.g. the unknown field of a part in the list,
 * not "must be string" of the first branch. Of issues equally deep, the first.
 */
function mostSpecific(issues: ValidationIssue[]): ValidationIssue {
  const depth = (issue: ValidationIssue) => issue.instancePath.split('/').length;
  return issues.reduce((best, issue) => (depth(issue) > depth(best) ? issue : best));
}

const FASTIFY_CLIENT_ERRORS: Record<string, { status: number; message: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, message: 'invalid JSON body' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, message: 'invalid JSON body: empty' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, message: 'request body too large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, message: 'unsupported media type: send application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, message: 'invalid content-length' },
};

/** Seconds a client is asked to wait when the database cannot answer. */
const DATABASE_RETRY_AFTER_SECONDS = 2;

/**
 * A database that is down, restarting, frozen or losing lock races is a temporary condition of the
 * service, not a fault of the request: 503 with Retry-After, so clients and their libraries retry.
 */
export function databaseUnavailable(error: unknown): AppError | undefined {
  if (!isDatabaseUnavailable(error) && !isQueryTimeout(error) && !isTransientConflict(error)) return undefined;
  return serviceUnavailable('Service temporarily unavailable: the database is not answering; retry shortly', DATABASE_RETRY_AFTER_SECONDS);
}

/** One mapping from any error to the spec's `{error}` body (STYLE.md §3). */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((raised: FastifyError, request, reply) => {
    const unavailable = databaseUnavailable(raised);
    if (unavailable) request.log.warn({ err: raised }, 'database unavailable');
    const error = unavailable ?? raised;
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
