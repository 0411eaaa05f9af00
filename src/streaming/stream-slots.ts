import { tooManyRequests } from '../errors.ts';

/**
 * Concurrent streams per credential (spec 8: 100 per API key), counted in this process: a stream is
 * bound to the process serving it, so the count lives where the connection does.
 */
export function createStreamSlots(maxPerKey: number) {
  const open = new Map<string, number>();
  return {
    acquire(key: string): () => void {
      const count = open.get(key) ?? 0;
      if (count >= maxPerKey) throw tooManyRequests(5, `Too many concurrent streams (at most ${maxPerKey} per API key)`);
      open.set(key, count + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const remaining = (open.get(key) ?? 1) - 1;
        if (remaining <= 0) open.delete(key);
        else open.set(key, remaining);
      };
    },
  };
}
