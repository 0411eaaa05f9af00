import type { ScenarioResult } from './report.ts';
import type { WorkflowCeilingResult } from './workflow-ceiling-scenario.ts';

/** The gateway against its two ceilings (issue targets). */
export const CEILING_TARGETS = { submitShare: 0.25, p99Ms: 50, completedShare: 0.5, writeTransactionsPerTask: 6 } as const;

/** A row of the results table: the bare workflow has no submissions, only completions. */
export function workflowCeilingResultRow(ceiling: WorkflowCeilingResult): string {
  return `| ${ceiling.name} | ${['—', '—', '—', '—', '—', '—', '—',
    fixed(ceiling.completedPerSecond, 0), fixed(ceiling.completedPerSecond, 0), fixed(ceiling.seconds, 1),
    `${fixed(ceiling.latency.p50, 0)} / ${fixed(ceiling.latency.p99, 0)}`].join(' | ')} |`;
}

export function workflowCeilingCostRow(ceiling: WorkflowCeilingResult): string {
  const { cpu, work } = ceiling;
  return `| ${ceiling.name} | ${[
    `${fixed(cpu.server, 0)} % (its own load loop included)`, `${fixed(cpu.postgres, 0)} %`, `${fixed(cpu.bench, 0)} %`, `${fixed(cpu.other, 0)} %`,
    `${fixed(ceiling.busyBefore, 0)} %`, fixed(work.writeTransactionsPerTask, 1), fixed(work.walBytesPerTask / 1024, 1),
  ].join(' | ')} |`;
}

export function describeWorkflowCeiling(ceiling: WorkflowCeilingResult): string {
  const { steps } = ceiling;
  return `Bare DBOS workflow: ${steps.steps} step${steps.steps === 1 ? '' : 's'}, the number DBOS recorded (\`dbos.operation_outputs\`) for ${steps.tasksWithSteps} of the `
    + `${steps.tasks} completed \`agentgate.task\` workflows (range ${steps.min}–${steps.max}; theirs: ${steps.names}); each of its steps inserts `
    + `one row; ${ceiling.concurrency} in flight, each slot starting the next workflow (\`DBOS.startWorkflow\` under a new id, no queue) when its `
    + `last one has returned; ${ceiling.completed} workflows completed.`;
}

export function formatCeilingComparison(gateway: ScenarioResult, fastify: ScenarioResult, workflow: WorkflowCeilingResult): string {
  const completions = gateway.completions;
  const share = (value: number, ceiling: number) => `${fixed((100 * value) / ceiling, 1)} %`;
  const completedRow = (measure: string, value: number) => `| ${measure} | ${fixed(value, 0)} | ${fixed(workflow.completedPerSecond, 0)} (bare DBOS workflow) | `
    + `${share(value, workflow.completedPerSecond)} | ≥ ${CEILING_TARGETS.completedShare * 100} % |`;
  return [
    '| measure | gateway | ceiling | gateway ÷ ceiling | target |',
    `|${' --- |'.repeat(5)}`,
    `| submissions/s (p99 ms) | ${fixed(gateway.load.submissionsPerSecond, 0)} (${fixed(gateway.load.latency.p99, 1)}) | `
      + `${fixed(fastify.load.submissionsPerSecond, 0)} (${fixed(fastify.load.latency.p99, 1)}) (Fastify + 1 INSERT) | `
      + `${share(gateway.load.submissionsPerSecond, fastify.load.submissionsPerSecond)} | ≥ ${CEILING_TARGETS.submitShare * 100} % at p99 ≤ ${CEILING_TARGETS.p99Ms} ms |`,
    completedRow('tasks completed/s during the load', completions?.completedPerSecondDuringLoad ?? Number.NaN),
    completedRow('tasks completed/s to the last completion', completions?.completedPerSecond ?? Number.NaN),
    `| write transactions per task | ${fixed(gateway.work.writeTransactionsPerTask, 1)} | ${fixed(workflow.work.writeTransactionsPerTask, 1)} per workflow `
      + `(bare DBOS workflow) | — | ≤ ${CEILING_TARGETS.writeTransactionsPerTask} |`,
  ].join('\n');
}

export function formatCeilingTargets(gateway: ScenarioResult, fastify: ScenarioResult, workflow: WorkflowCeilingResult): string[] {
  const submitShare = gateway.load.submissionsPerSecond / fastify.load.submissionsPerSecond;
  const isSubmitMet = submitShare >= CEILING_TARGETS.submitShare && gateway.load.latency.p99 <= CEILING_TARGETS.p99Ms && gateway.load.non2xx === 0;
  const duringLoad = (gateway.completions?.completedPerSecondDuringLoad ?? 0) / workflow.completedPerSecond;
  const toLast = (gateway.completions?.completedPerSecond ?? 0) / workflow.completedPerSecond;
  const isCompletedMet = Math.min(duringLoad, toLast) >= CEILING_TARGETS.completedShare;
  const writes = gateway.work.writeTransactionsPerTask;
  return [
    `- submissions/s ≥ ${CEILING_TARGETS.submitShare * 100} % of the Fastify + 1 INSERT ceiling at p99 ≤ ${CEILING_TARGETS.p99Ms} ms: `
      + `**${isSubmitMet ? 'met' : 'not met'}** (${fixed(100 * submitShare, 1)} %, p99 ${fixed(gateway.load.latency.p99, 1)} ms)`,
    `- tasks completed/s ≥ ${CEILING_TARGETS.completedShare * 100} % of the bare DBOS workflow ceiling, during the load and to the last completion: `
      + `**${isCompletedMet ? 'met' : 'not met'}** (${fixed(100 * duringLoad, 1)} % and ${fixed(100 * toLast, 1)} % of ${fixed(workflow.completedPerSecond, 0)}/s)`,
    `- ≤ ${CEILING_TARGETS.writeTransactionsPerTask} write transactions per task: **${writes <= CEILING_TARGETS.writeTransactionsPerTask ? 'met' : 'not met'}** `
      + `(${fixed(writes, 1)})`,
  ];
}

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : '—');
