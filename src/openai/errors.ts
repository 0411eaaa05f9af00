import type { FastifyError, FastifyInstance } from 'fastify';
import { isAppError } from '../errors.ts';
import { databaseUnavailable, describeValidation } from '../http/error-handler.ts';

const TYPES: Record<number, { type: string; code: string }> = {
  400: { type: 'invalid_request_error', code: 'invalid_request' },
  401: { type: 'authentication_error', code: 'invalid_api_key' },
  403: { type: 'permission_error', code: 'invalid_request' },
  404: { type: 'invalid_request_error', code: 'model_not_found' },
  413: { type: 'invalid_request_error', code: 'invalid_request' },
  415: { type: 'invalid_request_error', code: 'invalid_request' },
  429: { type: 'rate_limit_error', code: 'rate_limit_exceeded' },
  500: { type: 'server_error', code: 'internal_error' },
  503: { type: 'server_error', code: 'service_unavailable' },
};

/** The envelope of an error; `code` replaces the status's usual one (an AppError's `extras.code`). */
export function openAiError(status: number, message: string, code?: unknown) {
  const kind = TYPES[status] ?? (status >= 500 ? TYPES[500] : TYPES[400]);
  return { error: { message, type: kind.type, code: typeof code === 'string' ? code : kind.code } };
}

/** The OpenAI envelope `{error: {message, type, code}}` for every error of this layer (spec 7), auth included. */
export function installOpenAiErrorHandler(scope: FastifyInstance): void {
  scope.setErrorHandler((raised: FastifyError, request, reply) => {
    const unavailable = databaseUnavailable(raised);
    if (unavailable) request.log.warn({ err: raised }, 'database unavailable');
    const error = unavailable ?? raised;
    if (isAppError(error)) return reply.status(error.statusCode).headers(error.headers).send(openAiError(error.statusCode, error.message, error.extras.code));
    if (error.validation) return reply.status(400).send(openAiError(400, describeValidation(error.validationContext ?? 'body', error.validation as never)));
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'chat completion failed');
    return reply.status(status).send(openAiError(status, status === 500 ? 'Internal server error' : error.message));
  });
}
