/** Made once, as the stream's own reason is (events/sse.ts): a stream ends with its parent or is disposed. */
const DISPOSED = new DOMException('the stream is over', 'AbortError');

/**
 * Aborts when `touch` has not been called for `timeoutMs` (spec 8: streams close after 5 idle minutes). A touch
 * only notes the time (a stream touches once per batch it writes); the timer, when it fires, sleeps on for what
 * is left of the timeout since the last touch.
 */
export function createInactivityTimer(timeoutMs: number, parent: AbortSignal) {
  const controller = new AbortController();
  let lastTouchMs = performance.now();
  const expireOrWait = () => {
    const idleMs = performance.now() - lastTouchMs;
    if (idleMs >= timeoutMs) controller.abort();
    else timer = setTimeout(expireOrWait, timeoutMs - idleMs);
  };
  let timer = setTimeout(expireOrWait, timeoutMs);
  const onParentAbort = () => controller.abort(parent.reason);
  parent.addEventListener('abort', onParentAbort, { once: true });
  controller.signal.addEventListener('abort', () => {
    clearTimeout(timer);
    parent.removeEventListener('abort', onParentAbort);
  }, { once: true });
  return {
    signal: controller.signal,
    get expired() { return controller.signal.aborted && !parent.aborted; },
    touch() {
      lastTouchMs = performance.now();
    },
    dispose() { controller.abort(DISPOSED); },
  };
}
