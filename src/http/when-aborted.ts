/**
 * Calls `callback` once when `signal` aborts (at once if it has), unless the function returned is called first.
 *
 * For a signal every connection watches, such as the process's shutdown: `addEventListener` and
 * `removeEventListener` look through every listener the signal already has (to skip a duplicate), so a listener
 * per connection made each stream's open and close cost as much as the streams open: about a second of the gateway's
 * CPU over a benchmark run at 5,000 SSE streams. Here all of a signal's callbacks share one listener.
 */
export function whenAborted(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) {
    callback();
    return () => {};
  }
  // A callback of its own per call, so that the same function watched twice is called twice, as a listener would be.
  const entry = () => callback();
  const callbacks = callbacksOf(signal);
  callbacks.add(entry);
  return () => { callbacks.delete(entry); };
}

const watched = new WeakMap<AbortSignal, Set<() => void>>();

function callbacksOf(signal: AbortSignal): Set<() => void> {
  let callbacks = watched.get(signal);
  if (callbacks) return callbacks;
  const created = new Set<() => void>();
  watched.set(signal, created);
  signal.addEventListener('abort', () => {
    watched.delete(signal);
    // Every callback runs even if one throws; the first error is then thrown as a listener's would be.
    const errors: unknown[] = [];
    for (const callback of created) {
      try {
        callback();
      } catch (error) {
        errors.push(error);
      }
    }
    created.clear();
    if (errors.length > 0) throw errors[0];
  }, { once: true });
  return created;
}
