/**
 * The error to throw when `signal` has fired. Callers (and the AI SDK's `isAbortError`) recognise an
 * abort by the name `AbortError`, so a custom abort reason is kept as the cause rather than thrown.
 */
export function toAbortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  const error = new DOMException('The model call was aborted', 'AbortError');
  return Object.assign(error, { cause: reason });
}

export function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}
