/**
 * The bare engine's cost of a step, measured in a process of its own (DBOS is one engine per process): a
 * workflow of `steps` steps, each one small INSERT, run one at a time under fresh ids on the gateway's
 * Postgres (its own database). Forked by run.ts, it answers one message with the measurements.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DBOS } from '@dbos-inc/dbos-sdk';
import pg from 'pg';

export interface StepCostRequest { databaseUrl: string; workflows: number; stepCounts: number[] }
export interface StepCostRun { steps: number; meanWorkflowMs: number; writeTransactionsPerWorkflow: number }

async function main(request: StepCostRequest): Promise<StepCostRun[]> {
  const pool = new pg.Pool({ connectionString: request.databaseUrl, max: 4 });
  pool.on('error', () => {});
  const workflow = DBOS.registerWorkflow(async (steps: number) => {
    for (let step = 0; step < steps; step += 1) {
      await DBOS.runStep(async () => {
        await pool.query('insert into bench_steps (workflow_id, step) values ($1, $2)', [DBOS.workflowID, step]);
      }, { name: `write-${step}` });
    }
  }, { name: 'bench.steps' });
  DBOS.setConfig({
    name: 'bench-steps', systemDatabaseUrl: request.databaseUrl, systemDatabasePoolSize: 4, applicationVersion: 'bench-steps-1',
    logger: { info: () => {}, debug: () => {}, warn: (entry) => console.error(String(entry)), error: (entry) => console.error(entry) },
  });
  await DBOS.launch();
  await pool.query('create table if not exists bench_steps (workflow_id text, step int, primary key (workflow_id, step))');
  const runs: StepCostRun[] = [];
  for (const steps of request.stepCounts) {
    const runOne = async () => (await DBOS.startWorkflow(workflow, { workflowID: randomUUID() })(steps)).getResult();
    for (let warm = 0; warm < 5; warm += 1) await runOne();
    const before = await transactionId(pool);
    const started = performance.now();
    for (let index = 0; index < request.workflows; index += 1) await runOne();
    const elapsed = performance.now() - started;
    const writes = Number(await transactionId(pool) - before) - 1;
    runs.push({ steps, meanWorkflowMs: elapsed / request.workflows, writeTransactionsPerWorkflow: writes / request.workflows });
  }
  await DBOS.shutdown();
  await pool.end();
  return runs;
}

async function transactionId(pool: pg.Pool): Promise<bigint> {
  const { rows } = await pool.query<{ id: string }>('select pg_current_xact_id()::text as id');
  return BigInt(rows[0].id);
}

process.once('message', (request: StepCostRequest) => {
  main(request).then((runs) => process.send!(runs, () => process.exit(0)), (error) => {
    console.error(error);
    process.exit(1);
  });
});
