import type { BenchPostgres } from './postgres-server.ts';

export type Log = (message: string) => void;

/** What every scenario of the benchmark shares. */
export interface ScaleContext {
  root: string;
  postgres: BenchPostgres;
  /** Settings tuned in the benchmark's environment, passed to every process (gateway-process.ts). */
  settings: Record<string, string>;
  log: Log;
}
