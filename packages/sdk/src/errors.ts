/**
 * Errors the SDK throws. An answer of the server that is not a success becomes an `AgentgateError` subclass
 * chosen by its status, carrying the status, a short code and the server's own message (`{"error": "..."}`,
 * or the OpenAI layer's `{"error": {"message", "code"}}`).
 */
export class AgentgateError extends Error {
  /** The HTTP status; 0 when no answer came (see ConnectionError). */
  readonly status: number;
  /** The server's code when it sent one (`consumer_too_slow`, `invalid_api_key`…), else one named after the status. */
  readonly code: string;
  /** The parsed error body as the server sent it. */
  readonly body: unknown;
  /** The request id the server answered with (`x-request-id`), for its logs. */
  readonly requestId: string | undefined;
  /** Seconds the server asked the client to wait (`Retry-After`), when it did. */
  readonly retryAfterSeconds: number | undefined;

  constructor(message: string, details: { status: number; code: string; body?: unknown; requestId?: string; retryAfterSeconds?: number; cause?: unknown }) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.status = details.status;
    this.code = details.code;
    this.body = details.body;
    this.requestId = details.requestId;
    this.retryAfterSeconds = details.retryAfterSeconds;
  }
}

/** 400: the request was malformed; the message names the field. */
export class BadRequestError extends AgentgateError {}
/** 401: no credential, or one the server does not accept. */
export class AuthenticationError extends AgentgateError {}
/** 403: the credential may not do this (not the owner, a scope missing, a policy denial). */
export class PermissionDeniedError extends AgentgateError {}
/** 404: no such resource for this caller (a foreign tenant's resources are not found either). */
export class NotFoundError extends AgentgateError {}
/** 409: the resource is in a state that does not allow this (pausing a finished task…). */
export class ConflictError extends AgentgateError {}
/** 413: the body is over the server's limit. */
export class PayloadTooLargeError extends AgentgateError {}
/** 429: over a rate or concurrency limit; `retryAfterSeconds` says when to come back. */
export class RateLimitError extends AgentgateError {}
/** 5xx: the server failed or is unavailable (retried first for calls that are safe to repeat). */
export class ServerError extends AgentgateError {}
/** No answer at all: the connection failed or dropped (retried first for calls that are safe to repeat). */
export class ConnectionError extends AgentgateError {}
/** A task ended in a state other than completed, for `tasks.wait(id, { throwOnFailure: true })`. */
export class TaskFailedError extends AgentgateError {}

const CODES: Record<number, string> = {
  400: 'bad_request', 401: 'unauthorized', 403: 'forbidden', 404: 'not_found', 409: 'conflict', 410: 'gone',
  413: 'payload_too_large', 415: 'unsupported_media_type', 429: 'rate_limited', 500: 'internal_error',
  502: 'bad_gateway', 503: 'unavailable', 504: 'gateway_timeout',
};

function classFor(status: number): typeof AgentgateError {
  if (status === 400 || status === 422) return BadRequestError;
  if (status === 401) return AuthenticationError;
  if (status === 403) return PermissionDeniedError;
  if (status === 404 || status === 410) return NotFoundError;
  if (status === 409) return ConflictError;
  if (status === 413) return PayloadTooLargeError;
  if (status === 429) return RateLimitError;
  if (status >= 500) return ServerError;
  return AgentgateError;
}

/** The server's message and code in either error shape the gateway uses. */
function describe(body: unknown, status: number): { message: string; code: string } {
  const fallback = CODES[status] ?? `http_${status}`;
  if (typeof body === 'string' && body.trim() !== '') return { message: body.trim().slice(0, 2_000), code: fallback };
  if (body === null || typeof body !== 'object') return { message: `HTTP ${status}`, code: fallback };
  const { error, code, message } = body as { error?: unknown; code?: unknown; message?: unknown };
  if (error !== null && typeof error === 'object') {
    const inner = error as { message?: unknown; code?: unknown };
    return { message: String(inner.message ?? `HTTP ${status}`), code: typeof inner.code === 'string' ? inner.code : fallback };
  }
  return {
    message: typeof error === 'string' ? error : typeof message === 'string' ? message : `HTTP ${status}`,
    code: typeof code === 'string' ? code : fallback,
  };
}

export function retryAfterSeconds(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

/** The typed error for an answer that is not a success; `body` is its parsed JSON or its text. */
export function errorFromResponse(response: Response, body: unknown): AgentgateError {
  const { message, code } = describe(body, response.status);
  const ErrorClass = classFor(response.status);
  return new ErrorClass(message, {
    status: response.status, code, body, requestId: response.headers.get('x-request-id') ?? undefined,
    retryAfterSeconds: retryAfterSeconds(response.headers),
  });
}

/** Reads an error answer's body (JSON when it is JSON) and makes the typed error. */
export async function errorFromFailedResponse(response: Response): Promise<AgentgateError> {
  const text = await response.text().catch(() => '');
  let body: unknown = text;
  try { body = JSON.parse(text); } catch { /* a text body */ }
  return errorFromResponse(response, body);
}

export function connectionError(error: unknown, url: string): ConnectionError {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const reason = cause?.code ?? cause?.message ?? (error as Error)?.message ?? String(error);
  return new ConnectionError(`could not reach ${url}: ${reason}`, { status: 0, code: 'connection_failed', cause: error });
}
