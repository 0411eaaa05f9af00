import { appendFile, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import type { WorkPerTask } from './database-work.ts';
import type { LoadResult } from './load.ts';
import type { CpuShare } from './measure-load.ts';
import type { CompletionSummary } from './task-completions.ts';
import {
  describeWorkflowCeiling, formatCeilingComparison, formatCeilingTargets, workflowCeilingCostRow, workflowCeilingResultRow,
} from './ceiling-comparison.ts';
import type { WorkflowCeilingResult } from './workflow-ceiling-scenario.ts';

export const TARGETS = { submissionsPerSecond: 2_000, p99Ms: 50, completedPerSecond: 150 } as const;

export interface ScenarioResult {
  name: string;
  load: LoadResult;
  /** `peakBacklog`: the most tasks seen queued or running at once while polling. */
  completions?: CompletionSummary & { isDrained: boolean; peakBacklog: number };
  /** Percent of one core over the load window; the machine has os.cpus().length of them. */
  cpu: CpuShare;
  /** Percent of one core the whole machine used just before the load (the idle server included). */
  busyBefore: number;
  /** Per task written (gateway: submit and execution; ceiling: one request). */
  work: WorkPerTask;
}

export interface RunDescription {
  date: Date;
  commit: string;
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
  settings: Record<string, string>;
}

export function formatResultsTable(scenarios: ScenarioResult[], workflowCeiling?: WorkflowCeilingResult): string {
  const header = '| scenario | submissions/s | p50 ms | p90 ms | p99 ms | max ms | non-2xx | errors | tasks completed/s | completed/s during load | first submit → last completion s | task latency p50 / p99 ms |';
  const rows = scenarios.map(({ name, load, completions }) => `| ${name} | ${[
    fixed(load.submissionsPerSecond, 0), fixed(load.latency.p50, 1), fixed(load.latency.p90, 1), fixed(load.latency.p99, 1),
    fixed(load.latency.max, 1), load.non2xx, load.errors,
    completions ? fixed(completions.completedPerSecond, 0) : '—',
    completions ? fixed(completions.completedPerSecondDuringLoad, 0) : '—',
    completions ? fixed(completions.drainSeconds, 1) + (completions.isDrained ? '' : ' (cap hit)') : '—',
    completions ? `${fixed(completions.latency.p50, 0)} / ${fixed(completions.latency.p99, 0)}` : '—',
  ].join(' | ')} |`);
  if (workflowCeiling) rows.push(workflowCeilingResultRow(workflowCeiling));
  return [header, `|${' --- |'.repeat(12)}`, ...rows].join('\n');
}

export function formatCostTable(scenarios: ScenarioResult[], workflowCeiling?: WorkflowCeilingResult): string {
  const rows = scenarios.map(({ name, cpu, work, busyBefore }) => `| ${name} | ${[
    `${fixed(cpu.server, 0)} %`, `${fixed(cpu.postgres, 0)} %`, `${fixed(cpu.bench, 0)} %`, `${fixed(cpu.other, 0)} %`, `${fixed(busyBefore, 0)} %`,
    fixed(work.writeTransactionsPerTask, 1), fixed(work.walBytesPerTask / 1024, 1),
  ].join(' | ')} |`);
  return [
    '| scenario | server (node) CPU | postgres CPU | load generator CPU | rest of the machine | machine busy just before | write transactions per task | WAL kB per task |',
    `|${' --- |'.repeat(8)}`,
    ...rows,
    ...(workflowCeiling ? [workflowCeilingCostRow(workflowCeiling)] : []),
  ].join('\n');
}

/** One line per target, saying plainly whether this run met it. */
export function formatTargets(gateway: ScenarioResult): string[] {
  const { load, completions } = gateway;
  const isSubmitMet = load.submissionsPerSecond >= TARGETS.submissionsPerSecond && load.latency.p99 <= TARGETS.p99Ms && load.non2xx === 0;
  const completed = completions?.completedPerSecond ?? 0;
  return [
    `- ≥ ${TARGETS.submissionsPerSecond} submissions/s at p99 ≤ ${TARGETS.p99Ms} ms: **${isSubmitMet ? 'met' : 'not met'}** `
      + `(${fixed(load.submissionsPerSecond, 0)}/s, p99 ${fixed(load.latency.p99, 1)} ms, ${load.non2xx} non-2xx)`,
    `- ≥ ${TARGETS.completedPerSecond} simple tasks completed/s: **${completed >= TARGETS.completedPerSecond ? 'met' : 'not met'}** `
      + `(${fixed(completed, 0)}/s to the last completion, ${fixed(completions?.completedPerSecondDuringLoad ?? 0, 0)}/s during the load)`,
  ];
}

/** `scenarios`: the gateway, then the Fastify + 1 INSERT ceiling. */
export function formatSection(run: RunDescription, scenarios: ScenarioResult[], workflowCeiling?: WorkflowCeilingResult): string {
  const [gateway, fastify] = scenarios;
  const settings = Object.entries(run.settings).map(([name, value]) => `${name}=${value}`).join(', ') || 'gateway defaults';
  const completions = gateway.completions;
  return [
    `## ${run.date.toISOString()} (commit ${run.commit})`,
    '',
    `${machineLine()}; ${run.connections} keep-alive clients, ${run.warmupSeconds} s warm-up, ${run.durationSeconds} s load; ${settings}.`,
    completions ? `Gateway run: ${completions.submitted} tasks written, ${completions.completed} completed, ${completions.failed} ended otherwise; `
      + `up to ${completions.peakBacklog} queued or running at once; `
      + `a task waited ${fixed(completions.queueWaitP50, 0)} ms in the queue (p50) and ran ${fixed(completions.executionP50, 0)} ms `
      + `(p50; p99 ${fixed(completions.executionP99, 0)} ms) from started_at to completed_at.` : '',
    '',
    workflowCeiling ? describeWorkflowCeiling(workflowCeiling) : '',
    '',
    formatResultsTable(scenarios, workflowCeiling),
    '',
    `Cost: CPU during the load window in percent of one core (the machine has ${os.cpus().length}); database work per task.`,
    '',
    formatCostTable(scenarios, workflowCeiling),
    '',
    ...(workflowCeiling && fastify ? ['Against the ceilings:', '', formatCeilingComparison(gateway, fastify, workflowCeiling), ''] : []),
    'Targets:',
    '',
    ...formatTargets(gateway),
    ...(workflowCeiling && fastify ? formatCeilingTargets(gateway, fastify, workflowCeiling) : []),
    '',
  ].filter((line, index, lines) => line !== '' || lines[index - 1] !== '').join('\n') + '\n';
}

export async function appendSection(resultsPath: string, section: string): Promise<void> {
  const existing = await readFile(resultsPath, 'utf8').catch(() => undefined);
  if (existing === undefined) await writeFile(resultsPath, RESULTS_INTRO);
  await appendFile(resultsPath, `\n${section}`);
}

export function machineLine(): string {
  const model = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
  return `${os.cpus().length} cores (${model}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

export const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : '—');

const RESULTS_INTRO = `# Benchmarks

## Submit path (\`bench/submit/run.ts\`)

Rerun with \`npm run bench:submit\` (add \`-- --no-record\` to print without appending here). Each run appends
a dated section below; its numbers are never averaged or edited by hand.

What it measures, on one machine (2 cores, so the gateway, its Postgres and the load generator share them):

- **Gateway.** The real gateway (\`src/main.ts serve\`) as a child process with LOG_LEVEL=warn, on a new
  embedded Postgres in a temporary DATA_DIR (removed afterwards), mock model provider without delay.
  After a 2 s warm-up (and once the warm-up's tasks are done), 64 keep-alive clients POST
  \`/api/v1/tasks\` with small distinct queries for 10 s, each sending its next request as soon as the previous
  one is answered (autocannon, in the benchmark's own process, against 127.0.0.1 only).
  - *submissions/s*: 2xx answers per second; latencies are of 2xx answers, client side.
  - *tasks completed/s*: COMPLETED tasks of the run / (last \`completed_at\` − first \`created_at\`), read
    from the \`tasks\` table; the wait for the last task is capped at 120 s after the load.
  - *completed/s during load*: tasks whose \`completed_at\` falls inside the 10 s load window, per second.
  - *task latency*: \`completed_at − created_at\` of the run's completed tasks.
- **Ceiling.** A bare Fastify server (\`bench/submit/ceiling-server.ts\`, child process, pool of 20 like the
  gateway) whose one route does one \`INSERT\` into \`bench_ceiling\` (uuid, text, timestamptz) on the same
  embedded Postgres, under the same 2 s + 10 s, 64-client load. It is what the submit path could reach if it
  cost one insert.
- **Workflow ceiling.** A bare DBOS workflow (\`bench/submit/workflow-ceiling-worker.ts\`, child process, DBOS on
  its own database \`bench_workflow_ceiling\` of the same embedded Postgres, pools of 20 like the gateway's)
  with as many steps as the gateway's completed tasks recorded in \`dbos.operation_outputs\` (the most frequent
  count, read after the gateway run), each step one small \`INSERT\`; 64 workflows in flight, each slot starting
  the next (\`DBOS.startWorkflow\` under a new id, no queue) when its last one has returned, for the same
  2 s + 10 s. It is what task execution could reach if a task cost the engine's bookkeeping and one write per
  step. Its load loop runs inside the child, so the child's CPU includes it.
- CPU: user + system time of the server process, of all Postgres processes, and of the benchmark process,
  over the load window, as a percentage of one core; and the rest of the machine's busy time (/proc/stat):
  other sessions' work on this shared machine, and interrupt time. When that column is large, the run was
  disturbed and its numbers are low. Before each measured load the script waits (up to 3 minutes) until the
  whole machine uses under 30 % of a core, and reports what it saw (*machine busy just before*).
- Database work per task: write transactions (the transaction id's advance) and WAL bytes, for the gateway
  from the load's start to its last completion (submission and execution), for the ceiling over its load.

Optional: \`WORKER_CONCURRENCY\` and \`DB_POOL_SIZE\` in the environment are passed to the gateway (and
the pool size to the ceiling). Diagnostics: \`BENCH_CPU_PROF=1\` writes a \`--cpu-prof\` profile of the gateway
to \`bench/submit/profiles/\`; \`BENCH_SAMPLE_ACTIVITY=1\` samples \`pg_stat_activity\` every 20 ms and prints
what Postgres's backends wait on, during the load and after it; \`node bench/submit/statements.ts\` repeats
the gateway run with \`pg_stat_statements\` loaded and prints the costliest statements and their calls per task.

Targets on this 2-core machine: ≥ ${TARGETS.submissionsPerSecond} submissions/s at p99 ≤ ${TARGETS.p99Ms} ms, and ≥ ${TARGETS.completedPerSecond} simple tasks
completed/s; against the ceilings: submissions/s ≥ 25 % of the Fastify ceiling at p99 ≤ 50 ms, tasks
completed/s (during the load and to the last completion) ≥ 50 % of the workflow ceiling, and ≤ 6 write
transactions per task. Each section says whether its run met them.
`;
