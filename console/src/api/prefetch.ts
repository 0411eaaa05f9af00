import { api, ApiError } from './client';

/** How long a prefetched answer may wait for the screen that asked for it before it counts as stale. */
const FRESH_MS = 5_000;
interface Early { at: number; answer: Promise<unknown>; value?: unknown; settled: boolean }
const pending = new Map<string, Early>();

/**
 * Starts a GET now, before the app first renders, so that a screen's first request runs beside the sign-in check
 * (`/auth/me`) instead of after it, and neither waits for an effect to run after the first paint. A failure (not
 * signed in yet) is kept quiet here: the screen asks again.
 */
export function prefetch(path: string): void {
  const early: Early = { at: Date.now(), answer: api<unknown>('GET', path), settled: false };
  early.answer.then((value) => { early.value = value; early.settled = true; }, () => {});
  pending.set(path, early);
}

function take(path: string): Early | undefined {
  const early = pending.get(path);
  pending.delete(path);
  return early && Date.now() - early.at <= FRESH_MS ? early : undefined;
}

/**
 * The prefetched answer for `path` (once), else a new request. A prefetch that failed is asked again, unless the
 * gateway refused the credential: asking again would be refused again, and each refusal counts against the address.
 */
export function getOnce<T>(path: string): Promise<T> {
  const early = take(path);
  if (!early) return api<T>('GET', path);
  return (early.answer as Promise<T>).catch((error: unknown) => {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) throw error;
    return api<T>('GET', path);
  });
}

/** The prefetched answer for `path` if it has already arrived (once): a screen can draw it in its first render. */
export function takeArrived<T>(path: string): T | undefined {
  const early = pending.get(path);
  if (!early?.settled) return undefined;
  return take(path)?.value as T | undefined;
}
