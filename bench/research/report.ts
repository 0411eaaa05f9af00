import { fixed, machineLine } from '../submit/report.ts';
import type { TaskTimeline } from './task-timeline.ts';

export const TARGET_GATEWAY_SHARE = 0.05;

export interface MeasuredRun extends TaskTimeline {
  /** CPU the gateway process and the whole Postgres used while the task ran (submission to the workflow's end). */
  gatewayCpuMs: number;
  postgresCpuMs: number;
}

export interface BenchDescription {
  commit: string;
  modelLatencyMs: number;
  /** Load averages (1, 5, 15 min) before the gateway started and after the last task. */
  loadBefore: number[];
  loadAfter: number[];
  idleXidsPerSecond: number;
  runs: MeasuredRun[];
}

const share = (run: TaskTimeline) => run.gatewayMs / run.wallMs;
const percent = (value: number) => `${fixed(value * 100, 1)} %`;
const load = (averages: number[]) => averages.map((average) => fixed(average, 2)).join(', ');

export function formatSection(bench: BenchDescription): string {
  const median = [...bench.runs].sort((left, right) => share(left) - share(right))[Math.floor(bench.runs.length / 2)];
  return [
    `## Deep research (\`bench/research/run.ts\`), ${new Date().toISOString()} (commit ${bench.commit})`,
    '',
    `${machineLine()}; load average ${load(bench.loadBefore)} before, ${load(bench.loadAfter)} after (1, 5, 15 min; the machine is shared). `
      + `One \`deep\` task at a time after 2 warm-up tasks; mock latency ${bench.modelLatencyMs} ms per model call; `
      + `the idle gateway took ${fixed(bench.idleXidsPerSecond, 1)} transaction ids/s by itself (leases, sweeps), counted in the figures below.`,
    '',
    '| task | wall ms | model calls | tool calls | model + tool waits on the critical path ms | gateway ms | gateway share | write transactions | gateway CPU ms | Postgres CPU ms |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...bench.runs.map((run, index) => `| ${index + 1} | ${[
      fixed(run.wallMs, 0), run.modelCalls, run.toolCalls, fixed(run.criticalWaitMs, 0), fixed(run.gatewayMs, 0), percent(share(run)),
      run.writeTransactions, fixed(run.gatewayCpuMs, 0), fixed(run.postgresCpuMs, 0),
    ].join(' | ')} |`),
    '',
    `Phases of the median task (task ${bench.runs.indexOf(median) + 1}, by gateway share):`,
    '',
    '| phase | wall ms | model calls | tool calls | critical waits ms | gateway ms | of which: checkpoints | in steps | between steps | write transactions |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...[...median.phases, { ...median, name: '**task**' }].map((phase) => `| ${phase.name} | ${[
      fixed(phase.wallMs, 0), phase.modelCalls, phase.toolCalls, fixed(phase.criticalWaitMs, 0), fixed(phase.gatewayMs, 0),
      fixed(phase.gateway.checkpointsMs, 0), fixed(phase.gateway.inStepsMs, 0), fixed(phase.gateway.betweenStepsMs, 0), phase.writeTransactions,
    ].join(' | ')} |`),
    '',
    `Target (issue 27): gateway share ≤ ${percent(TARGET_GATEWAY_SHARE)} of wall time; median ${percent(share(median))}: `
      + `${share(median) <= TARGET_GATEWAY_SHARE ? 'met' : 'missed'}.`,
  ].join('\n');
}
