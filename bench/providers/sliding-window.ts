/** The busiest stretch of `windowMs`: how many of the moments fall in it, and the first and last of them. */
export type BusiestWindow = { count: number; startAt: number; endAt: number };

/**
 * The most moments (ms) that fall in any half-open window [t, t + windowMs), wherever t is: a provider counting
 * its limit over a sliding minute sees no more than this. Such a window holding the most can always start at a
 * moment, so each moment is tried as a start (two pointers over the sorted moments).
 */
export function busiestWindow(moments: readonly number[], windowMs: number): BusiestWindow {
  const sorted = moments.toSorted((left, right) => left - right);
  let busiest: BusiestWindow = { count: 0, startAt: sorted[0] ?? 0, endAt: sorted[0] ?? 0 };
  let end = 0;
  for (const [start, startAt] of sorted.entries()) {
    while (end < sorted.length && sorted[end] < startAt + windowMs) end += 1;
    if (end - start > busiest.count) busiest = { count: end - start, startAt, endAt: sorted[end - 1] };
  }
  return busiest;
}
