/** The one error type services throw; app.ts maps it to the spec's `{error}` body. */
export class AppError extends Error {
  readonly statusCode: number;
  readonly extras: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(statusCode: number, message: string, options: {
    extras?: Record<string, unknown>;
    headers?: Record<string, string>;
    cause?: unknown;
  } = {}) {
    super(message, { cause: options.cause });
    this.name = 'AppError';
    this.statusCode = statusCode;
    this.extras = options.extras ?? {};
    this.headers = options.headers ?? {};
  }
}

export const badRequest = (message: string) => new AppError(400, message);
export const forbidden = (message = 'Forbidden') => new AppError(403, message);
export const notFound = (message: string) => new AppError(404, message);
export const conflict = (message: string, extras?: Record<string, unknown>) =>
  new AppError(409, message, { extras });
export const tooManyRequests = (retryAfterSeconds: number, message = 'Rate limit exceeded') =>
  new AppError(429, message, {
    extras: { retry_after: retryAfterSeconds },
    headers: { 'retry-after': String(retryAfterSeconds) },
  });
export const serviceUnavailable = (message: string, retryAfterSeconds?: number) =>
  new AppError(503, message, { headers: retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) } });

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
