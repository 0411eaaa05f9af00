import { api } from './client';

/** How long a prefetched answer may wait for the screen that asked for it before it counts as stale. */
const FRESH_MS = 5_000;
const pending = new Map<string, { at: number; answer: Promise<unknown> }>();

/**
 * Starts a GET now, so that a screen's first request runs beside the sign-in check (`/auth/me`) instead of after
 * it: one round trip less on a cold load. A failure (not signed in yet) is kept quiet here.
 */
export function prefetch(path: string): void {
  const answer = api<unknown>('GET', path);
  answer.catch(() => {});
  pending.set(path, { at: Date.now(), answer });
}

/** The prefetched answer for `path` (once), else a new request; a failed prefetch is asked again. */
export function getOnce<T>(path: string): Promise<T> {
  const early = pending.get(path);
  pending.delete(path);
  if (!early || Date.now() - early.at > FRESH_MS) return api<T>('GET', path);
  return (early.answer as Promise<T>).catch(() => api<T>('GET', path));
}
