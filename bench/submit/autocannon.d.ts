// The part of autocannon's programmatic API this benchmark uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }

  interface Options {
    url: string;
    connections: number;
    duration: number;
    /** Requests to send in all; when set, `duration` is ignored. */
    amount?: number;
    method?: string;
    headers?: Record<string, string>;
    timeout?: number;
    requests?: Array<Request & { setupRequest?: (request: Request) => Request }>;
  }

  interface Result {
    /** Connection errors, timeouts included. */
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
  }

  interface Instance extends EventEmitter, PromiseLike<Result> {
    on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): this;
  }

  function autocannon(options: Options): Instance;
  export default autocannon;
}
