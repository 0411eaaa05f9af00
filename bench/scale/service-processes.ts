import { startChildProcess, startChildServer, type ChildProcessHandle, type ChildServer } from '../submit/child-server.ts';
import { freePort } from '../submit/free-port.ts';
import { serviceEnvironment } from '../submit/gateway-process.ts';

const READY_TIMEOUT_MS = 120_000;
/** A process has started once it logs this (whatever LOG_LEVEL says). */
const STARTED_LINE = /"msg":"agentgate started"/;

export interface ServiceOptions {
  root: string;
  databaseUrl: string;
  /** Settings every process of the run gets (EXECUTOR_DEAD_AFTER_SECONDS, tuned pool sizes...). */
  settings: Record<string, string>;
}

export interface Worker extends ChildProcessHandle {
  executorId: string;
}

/** `src/main.ts serve --role gateway`: serves HTTP and enqueues tasks, runs none. */
export async function startGatewayOnly(options: ServiceOptions): Promise<ChildServer> {
  const port = await freePort();
  return startChildServer({
    script: 'src/main.ts',
    args: ['serve', '--role', 'gateway'],
    cwd: options.root,
    env: serviceEnvironment({ PORT: String(port), DATABASE_URL: options.databaseUrl, EXECUTOR_ID: 'scale-gateway' }, options.settings),
    port,
    readyTimeoutMs: READY_TIMEOUT_MS,
  });
}

/**
 * `src/main.ts serve --role worker` under its own executor id: runs tasks from the queue, and serves only its
 * probes and /metrics (on a port of its own, so that several run on one machine).
 */
export async function startWorker(options: ServiceOptions, executorId: string): Promise<Worker> {
  const child = await startChildProcess({
    script: 'src/main.ts',
    args: ['serve', '--role', 'worker'],
    cwd: options.root,
    env: serviceEnvironment({ PORT: String(await freePort()), DATABASE_URL: options.databaseUrl, EXECUTOR_ID: executorId }, options.settings),
    readyOutput: STARTED_LINE,
    readyTimeoutMs: READY_TIMEOUT_MS,
  });
  return { ...child, executorId };
}

export const workerIds = (count: number) => Array.from({ length: count }, (_, index) => `scale-worker-${index + 1}`);
