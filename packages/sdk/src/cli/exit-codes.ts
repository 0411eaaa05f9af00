import { AgentgateError } from '../errors.ts';
import { UsageError } from './config.ts';

/** The exit codes scripts can rely on (packages/sdk/README.md lists them). */
export const EXIT = {
  ok: 0,
  /** The task ended failed, cancelled or timed out; or an unexpected error. */
  failed: 1,
  /** Wrong flags or arguments, or the server refused the request as malformed (400). */
  usage: 2,
  /** No credential, a wrong one, or one without the right (401, 403). */
  auth: 3,
  /** No such task, session, schedule… (404). */
  notFound: 4,
  /** The resource's state does not allow it (409: pausing a finished task…). */
  conflict: 5,
  /** The server could not be reached, was overloaded or failed (connection error, 429, 5xx) after retries. */
  unavailable: 6,
  /** Interrupted (Ctrl-C). */
  interrupted: 130,
} as const;

export function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError) return EXIT.usage;
  if (!(error instanceof AgentgateError)) return EXIT.failed;
  if (error.status === 0) return error.code === 'connection_failed' || error.code === 'stream_lost' ? EXIT.unavailable : EXIT.failed;
  if (error.status === 400 || error.status === 413 || error.status === 422) return EXIT.usage;
  if (error.status === 401 || error.status === 403) return EXIT.auth;
  if (error.status === 404 || error.status === 410) return EXIT.notFound;
  if (error.status === 409) return EXIT.conflict;
  if (error.status === 429 || error.status >= 500) return EXIT.unavailable;
  return EXIT.failed;
}
