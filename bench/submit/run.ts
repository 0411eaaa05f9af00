/**
 * Submit-path benchmark: the real gateway on a fresh embedded Postgres under 64 keep-alive clients, then two
 * ceilings on the same Postgres: a one-INSERT Fastify server for submissions, and a bare DBOS workflow with
 * as many steps as the gateway's tasks recorded for execution. Prints a Markdown table and appends it to
 * bench/RESULTS.md.
 * Usage: npm run bench:submit [-- --no-record]   (bench/RESULTS.md says what each number means)
 */
import path from 'node:path';
import { benchmarkCeiling } from './ceiling-scenario.ts';
import { describeCommit } from './describe-commit.ts';
import { benchmarkGateway } from './gateway-scenario.ts';
import { openPool } from './database-pool.ts';
import { startGateway, type Gateway } from './gateway-process.ts';
import { CONNECTIONS, LOAD_SECONDS, WARMUP_SECONDS } from './measure-load.ts';
import { appendSection, formatSection, type ScenarioResult } from './report.ts';
import { countTaskSteps, type TaskSteps } from './task-steps.ts';
import { benchmarkWorkflowCeiling, type WorkflowCeilingResult } from './workflow-ceiling-scenario.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const RESULTS_PATH = path.join(ROOT, 'bench/RESULTS.md');

async function main(argv: string[]): Promise<void> {
  const shouldRecord = !argv.includes('--no-record');
  const profileDir = process.env.BENCH_CPU_PROF === '1' ? path.join(ROOT, 'bench/submit/profiles') : undefined;
  // The gateway loads src/ when it starts, so that is when the tree is described.
  const commit = describeCommit(ROOT);
  log('starting the gateway on a fresh embedded Postgres');
  const gateway = await startGateway({ root: ROOT, profileDir });
  process.once('SIGINT', () => void gateway.stop().finally(() => process.exit(130)));
  let scenarios: ScenarioResult[];
  let workflowCeiling: WorkflowCeilingResult;
  try {
    scenarios = [await benchmarkGateway(gateway, log)];
    const steps = await countGatewaySteps(gateway);
    log(`gateway tasks recorded ${steps.steps} step(s) each (${steps.tasksWithSteps} of ${steps.tasks} tasks)`);
    scenarios.push(await benchmarkCeiling(ROOT, gateway, log));
    workflowCeiling = await benchmarkWorkflowCeiling(ROOT, gateway, steps, log);
  } finally {
    log('stopping the gateway and removing its data directory');
    await gateway.stop();
  }
  const section = formatSection({
    date: new Date(), commit, connections: CONNECTIONS,
    warmupSeconds: WARMUP_SECONDS, durationSeconds: LOAD_SECONDS, settings: gateway.settings,
  }, scenarios, workflowCeiling);
  console.log(`\n${section}`);
  if (shouldRecord) await appendSection(RESULTS_PATH, section);
  if (profileDir) log(`gateway CPU profile written to ${profileDir}`);
}

async function countGatewaySteps(gateway: Gateway): Promise<TaskSteps> {
  const pool = openPool(gateway.databaseUrl, 1);
  try {
    return await countTaskSteps(pool);
  } finally {
    await pool.end();
  }
}

const log = (message: string) => console.error(`[bench] ${message}`);

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
