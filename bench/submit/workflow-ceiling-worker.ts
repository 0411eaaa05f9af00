/**
 * The ceiling for task execution: a bare DBOS workflow of `steps` steps, each one small INSERT, started
 * directly with DBOS.startWorkflow under a fresh workflow id (no queue), `concurrency` at a time, each
 * slot starting the next as soon as its last one has finished. It runs in its own system database on the
 * gateway's Postgres. Forked by workflow-ceiling-scenario.ts, which it answers over IPC:
 *   ← { type: 'run', ... }   → { type: 'warmed' }   ← { type: 'measure' }   → { type: 'measured', ... }   ← { type: 'stop' }
 * (it stays up until told to stop, so that its CPU time can still be read after the load).
 * DBOS is one engine per process, hence a process of its own.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DBOS } from '@dbos-inc/dbos-sdk';
import pg from 'pg';
import type { WorkflowCeilingCommand, WorkflowCeilingMessage, WorkflowCeilingRequest, WorkflowLoad } from './workflow-ceiling-protocol.ts';

/** As the gateway: its pool of 20, and the engine's own pool of 20 (src/engine/engine.ts). */
const POOL_SIZE = 20;

async function main(request: WorkflowCeilingRequest): Promise<void> {
  const pool = new pg.Pool({ connectionString: request.databaseUrl, max: POOL_SIZE });
  pool.on('error', () => {});
  const workflow = DBOS.registerWorkflow(async (steps: number) => {
    for (let step = 0; step < steps; step += 1) {
      await DBOS.runStep(async () => {
        await pool.query('insert into bench_workflow_steps (workflow_id, step) values ($1, $2)', [DBOS.workflowID, step]);
      }, { name: `write-${step}` });
    }
  }, { name: 'bench.ceiling' });
  DBOS.setConfig({
    name: 'bench-ceiling',
    systemDatabaseUrl: request.databaseUrl,
    systemDatabasePoolSize: POOL_SIZE,
    applicationVersion: 'bench-ceiling-1',
    logger: { info: () => {}, debug: () => {}, warn: (entry) => console.error(String(entry)), error: (entry) => console.error(entry) },
  });
  // DBOS creates the database and its system schema; the steps' table goes in the same database.
  await DBOS.launch();
  await pool.query(`create table if not exists bench_workflow_steps (
    workflow_id text not null, step int not null, written_at timestamptz not null default now(), primary key (workflow_id, step))`);
  const run = (seconds: number) => runClosedLoop(request.concurrency, seconds, async () => {
    const handle = await DBOS.startWorkflow(workflow, { workflowID: randomUUID() })(request.steps);
    await handle.getResult();
  });
  await run(request.warmupSeconds);
  send({ type: 'warmed' });
  await nextMessage('measure');
  send({ type: 'measured', load: await run(request.loadSeconds) });
  await nextMessage('stop');
  await DBOS.shutdown();
  await pool.end();
}

/** `concurrency` slots, each running the next workflow as soon as its last one finished, for `seconds`. */
async function runClosedLoop(concurrency: number, seconds: number, runWorkflow: () => Promise<void>): Promise<WorkflowLoad> {
  const latencies: number[] = [];
  const startedAt = Date.now();
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < deadline) {
      const start = performance.now();
      await runWorkflow();
      latencies.push(performance.now() - start);
    }
  }));
  return { startedAt, finishedAt: Date.now(), latencies };
}

function send(message: WorkflowCeilingMessage): void {
  process.send!(message);
}

function nextMessage<T extends WorkflowCeilingCommand['type']>(type: T): Promise<Extract<WorkflowCeilingCommand, { type: T }>> {
  return new Promise((resolve) => {
    const listener = (message: WorkflowCeilingCommand) => {
      if (message.type !== type) return;
      process.off('message', listener);
      resolve(message as Extract<WorkflowCeilingCommand, { type: T }>);
    };
    process.on('message', listener);
  });
}

nextMessage('run').then(main).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
