/**
 * Orchestration benchmark (issue 14): what the gateway adds per agent of a DAG task, beside the bare engine's
 * cost of a step measured in the same run on the same Postgres. Tasks run one at a time with the mock model
 * (no delay) and a scripted plan: 2-agent and 5-agent plans, each agent after the one before (one slot), so
 * the difference between them divided by 3 is the cost of one agent (its step, its two commits, its events)
 * with the decomposition and synthesis cancelled out. The 5-agent plan is also run in parallel (5 slots).
 * Execution time is the task's own (started_at → completed_at, server clock); write transactions are counted
 * by transaction id. Prints a Markdown section and appends it to bench/RESULTS.md.
 * Usage: npm run bench:orchestration [-- --no-record]
 */
import { fork } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { loadModelCatalog } from '../../src/llm/model-catalog.ts';
import { createModelRegistry } from '../../src/llm/provider-registry.ts';
import { streamModelText } from '../../src/llm/stream-model-text.ts';
import { openPool } from '../submit/database-pool.ts';
import { describeCommit } from '../submit/describe-commit.ts';
import { startGateway, type Gateway } from '../submit/gateway-process.ts';
import { appendSection, machineLine } from '../submit/report.ts';
import type { StepCostRequest, StepCostRun } from './dbos-steps.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TASKS_PER_SCENARIO = 40;
const WARMUP_TASKS = 5;
const TARGETS = { writeTransactionsPerAgent: 2, gatewayMsPerAgent: 5 };

interface Scenario { name: string; agents: number; slots: number }
interface ScenarioRun extends Scenario { meanTaskMs: number; p50TaskMs: number; writeTransactionsPerTask: number }

const SCENARIOS: Scenario[] = [
  { name: '2 agents, one after another', agents: 2, slots: 1 },
  { name: '5 agents, one after another', agents: 5, slots: 1 },
  { name: '5 agents in parallel', agents: 5, slots: 5 },
];

async function main(argv: string[]): Promise<void> {
  const commit = describeCommit(ROOT);
  log('starting the gateway on a fresh embedded Postgres');
  const gateway = await startGateway({ root: ROOT, profileDir: undefined, env: { MOCK_DELAY_MS: '0' } });
  const pool = openPool(gateway.databaseUrl, 2);
  let runs: ScenarioRun[];
  let steps: StepCostRun[];
  try {
    runs = [];
    for (const scenario of SCENARIOS) {
      log(`scenario: ${scenario.name}`);
      runs.push(await runScenario(gateway, pool, scenario));
    }
    log('bare engine steps');
    steps = await measureEngineSteps(gateway, pool);
  } finally {
    await pool.end();
    await gateway.stop();
  }
  const mockMs = await measureMockCall();
  const section = formatSection(commit, runs, steps, mockMs);
  console.log(`\n${section}`);
  if (!argv.includes('--no-record')) await appendSection(path.join(ROOT, 'bench/RESULTS.md'), section);
}

async function runScenario(gateway: Gateway, pool: pg.Pool, scenario: Scenario): Promise<ScenarioRun> {
  const sessionId = `bench-orchestration-${scenario.agents}-${scenario.slots}`;
  for (let index = 0; index < WARMUP_TASKS; index += 1) await runTask(gateway, pool, scenario, sessionId);
  const before = await transactionId(pool);
  const taskIds: string[] = [];
  for (let index = 0; index < TASKS_PER_SCENARIO; index += 1) taskIds.push(await runTask(gateway, pool, scenario, sessionId));
  // The polling reads take no transaction id; the marks' own read-write transactions are subtracted.
  const writes = Number(await transactionId(pool) - before) - 1;
  const { rows } = await pool.query<{ ms: number }>(`
    select extract(epoch from (completed_at - started_at)) * 1000 as ms from tasks where id = any($1) order by 1`, [taskIds]);
  const times = rows.map((row) => Number(row.ms));
  return {
    ...scenario,
    meanTaskMs: times.reduce((sum, ms) => sum + ms, 0) / times.length,
    p50TaskMs: times[Math.floor(times.length / 2)],
    writeTransactionsPerTask: writes / TASKS_PER_SCENARIO,
  };
}

async function runTask(gateway: Gateway, pool: pg.Pool, scenario: Scenario, sessionId: string): Promise<string> {
  const subtasks = Array.from({ length: scenario.agents }, (_, index) => ({ id: `a${index + 1}`, description: `Part ${index + 1} of the work` }));
  const response = await fetch(`${gateway.url}/api/v1/tasks`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'Benchmark a team of agents', mode: 'standard', session_id: sessionId, max_concurrent_agents: scenario.slots,
      context: { mock_plan: { complexity_score: 0.7, subtasks, execution_strategy: 'parallel' } },
    }),
  });
  if (response.status !== 200) throw new Error(`submit answered ${response.status}: ${await response.text()}`);
  const { task_id: taskId } = await response.json() as { task_id: string };
  for (;;) {
    const { rows } = await pool.query<{ status: string }>('select status from tasks where id = $1', [taskId]);
    if (rows[0].status === 'COMPLETED') return taskId;
    if (['FAILED', 'CANCELLED', 'TIMEOUT'].includes(rows[0].status)) throw new Error(`task ${taskId} ended ${rows[0].status}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function measureEngineSteps(gateway: Gateway, pool: pg.Pool): Promise<StepCostRun[]> {
  await pool.query('drop database if exists bench_engine_steps');
  const url = new URL(gateway.databaseUrl);
  url.pathname = '/bench_engine_steps';
  const child = fork(path.join(import.meta.dirname, 'dbos-steps.ts'), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const request: StepCostRequest = { databaseUrl: url.toString(), workflows: 200, stepCounts: [2, 5] };
  const answer = new Promise<StepCostRun[]>((resolve, reject) => {
    child.once('message', (runs) => resolve(runs as StepCostRun[]));
    child.once('exit', (code) => reject(new Error(`the engine benchmark exited with ${code}`)));
  });
  child.send(request);
  return answer;
}

/** The mock model alone, in this process: the time a model call takes that the gateway did not add. */
async function measureMockCall(): Promise<number> {
  const registry = createModelRegistry(loadModelCatalog(path.join(ROOT, 'config/models.yaml')), {});
  const call = () => streamModelText(registry, { selection: {}, system: 'You are a capable assistant.', messages: [{ role: 'user', content: 'Part 3 of the work' }], maxOutputTokens: 4096 });
  for (let index = 0; index < 20; index += 1) await call();
  const started = performance.now();
  for (let index = 0; index < 200; index += 1) await call();
  return (performance.now() - started) / 200;
}

async function transactionId(pool: pg.Pool): Promise<bigint> {
  const { rows } = await pool.query<{ id: string }>('select pg_current_xact_id()::text as id');
  return BigInt(rows[0].id);
}

function formatSection(commit: string, runs: ScenarioRun[], steps: StepCostRun[], mockMs: number): string {
  const [two, five, parallel] = runs;
  const agentMs = (five.meanTaskMs - two.meanTaskMs) / 3;
  const agentWrites = (five.writeTransactionsPerTask - two.writeTransactionsPerTask) / 3;
  const [fewSteps, moreSteps] = steps;
  const stepMs = (moreSteps.meanWorkflowMs - fewSteps.meanWorkflowMs) / (moreSteps.steps - fewSteps.steps);
  const stepWrites = (moreSteps.writeTransactionsPerWorkflow - fewSteps.writeTransactionsPerWorkflow) / (moreSteps.steps - fewSteps.steps);
  const gatewayMs = agentMs - mockMs;
  const met = (value: number, target: number) => (value <= target ? 'met' : 'missed');
  return [
    `## Orchestration (\`bench/orchestration/run.ts\`), ${new Date().toISOString().slice(0, 10)}`,
    '',
    `${machineLine()}; commit ${commit}; ${TASKS_PER_SCENARIO} tasks per scenario after ${WARMUP_TASKS} warm-up tasks, one at a time, mock model without delay.`,
    '',
    '| scenario | task execution mean ms | p50 ms | write transactions per task |',
    '| --- | --- | --- | --- |',
    ...runs.map((run) => `| ${run.name} | ${run.meanTaskMs.toFixed(1)} | ${run.p50TaskMs.toFixed(1)} | ${run.writeTransactionsPerTask.toFixed(1)} |`),
    '',
    '| per agent | ms | write transactions |',
    '| --- | --- | --- |',
    `| one agent of a DAG task ((5 agents − 2 agents) / 3, one slot) | ${agentMs.toFixed(2)} | ${agentWrites.toFixed(2)} |`,
    `| of which the mock model call (measured alone, in-process) | ${mockMs.toFixed(2)} | 0 |`,
    `| **gateway time per agent** (agent − model) | **${gatewayMs.toFixed(2)}** | |`,
    `| bare DBOS step with one INSERT (same Postgres) | ${stepMs.toFixed(2)} | ${stepWrites.toFixed(2)} |`,
    `| 5 agents in parallel: task time per agent | ${(parallel.meanTaskMs / 5).toFixed(2)} | ${(parallel.writeTransactionsPerTask / 5).toFixed(2)} |`,
    '',
    `Targets (issue 14): ≤ ${TARGETS.writeTransactionsPerAgent} write transactions per agent beyond the engine's own step record `
      + `(${(agentWrites - stepWrites + 1).toFixed(2)} counting the step's INSERT-equivalent as ours: ${met(agentWrites - stepWrites + 1, TARGETS.writeTransactionsPerAgent)}); `
      + `≤ ${TARGETS.gatewayMsPerAgent} ms of gateway time per agent (${gatewayMs.toFixed(2)} ms: ${met(gatewayMs, TARGETS.gatewayMsPerAgent)}).`,
  ].join('\n');
}

const log = (message: string) => console.error(`[bench] ${message}`);

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exit(1);
});
