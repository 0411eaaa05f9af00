/** Aborts when `touch` has not been called for `timeoutMs` (spec 8: streams close after 5 idle minutes). */
export function createInactivityTimer(timeoutMs: number, parent: AbortSignal) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const onParentAbort = () => controller.abort();
  parent.addEventListener('abort', onParentAbort, { once: true });
  controller.signal.addEventListener('abort', () => {
    clearTimeout(timer);
    parent.removeEventListener('abort', onParentAbort);
  }, { once: true });
  return {
    signal: controller.signal,
    get expired() { return controller.signal.aborted && !parent.aborted; },
    touch() {
      // Called for every batch a stream writes: restarting the one timer allocates nothing.
      if (!controller.signal.aborted) timer.refresh();
    },
    dispose() { controller.abort(); },
  };
}
