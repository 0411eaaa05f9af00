/** Messages between workflow-ceiling-scenario.ts and its forked workflow-ceiling-worker.ts. */
export interface WorkflowCeilingRequest {
  type: 'run';
  /** A database of its own on the gateway's Postgres (DBOS creates it). */
  databaseUrl: string;
  steps: number;
  concurrency: number;
  warmupSeconds: number;
  loadSeconds: number;
}

export interface WorkflowLoad {
  /** Epoch ms. */
  startedAt: number;
  finishedAt: number;
  /** Start → result of each workflow of the run, in ms. */
  latencies: number[];
}

/** From the child. */
export type WorkflowCeilingMessage = { type: 'warmed' } | { type: 'measured'; load: WorkflowLoad };

/** To the child. */
export type WorkflowCeilingCommand = WorkflowCeilingRequest | { type: 'measure' } | { type: 'stop' };
