/** The provider sent nothing for the stall limit: a timeout (its name says so), retried like a dropped stream. */
export class ProviderStallError extends Error {
  constructor(stallMs: number) {
    super(`the provider sent nothing for ${stallMs / 1000} s (PROVIDER_STALL_SECONDS)`);
    this.name = 'TimeoutError';
  }
}

export type StallWatch = {
  /** The call's own signal joined with the stall's: what the provider request runs under. */
  signal: AbortSignal;
  /** Something arrived: the limit counts again from now. */
  touch(): void;
  /** Set once the limit passed with nothing arriving (and the request was aborted for it). */
  readonly stalled: ProviderStallError | undefined;
  stop(): void;
};

/**
 * Gives up on a provider request that goes quiet: no answer at all, or a stream that stops sending in the middle.
 * A connection that stays open says nothing, so only a limit on silence tells a stall from a slow answer.
 */
export function watchForStall(signal: AbortSignal | undefined, stallMs: number): StallWatch {
  const controller = new AbortController();
  let stalled: ProviderStallError | undefined;
  const timer = setTimeout(() => {
    stalled = new ProviderStallError(stallMs);
    controller.abort(stalled);
  }, stallMs);
  return {
    signal: signal === undefined ? controller.signal : AbortSignal.any([signal, controller.signal]),
    touch: () => void timer.refresh(),
    get stalled() {
      return stalled;
    },
    stop: () => clearTimeout(timer),
  };
}
