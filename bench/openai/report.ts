import os from 'node:os';
import type { CpuShare } from '../submit/measure-load.ts';
import { machineLine } from '../submit/report.ts';
import type { Segment } from './latency-breakdown.ts';
import type { TtftSummary } from './summary.ts';

/** Issue 13: the time to first token the gateway adds at p50, by the number of concurrent streams. */
export const ADDED_P50_TARGETS_MS: Record<number, number> = { 1: 15, 32: 60 };

export interface ConcurrencyLevel {
  concurrency: number;
  durationSeconds: number;
  gateway: TtftSummary;
  mock: TtftSummary;
  segments: Segment[];
  /** Over the gateway's load window, percent of one core. */
  cpu: CpuShare;
  busyBefore: { gateway: number; mock: number };
}

export interface OpenAiRun {
  date: Date;
  commit: string;
  warmupSeconds: number;
  settings: Record<string, string>;
  levels: ConcurrencyLevel[];
}

/** A self-contained dated section: RESULTS.md's introduction describes only the submit benchmark. */
export function formatSection(run: OpenAiRun): string {
  const settings = Object.entries(run.settings).map(([name, value]) => `${name}=${value}`).join(', ');
  return [
    `## OpenAI streaming, time to first token: ${run.date.toISOString()} (commit ${run.commit})`,
    '',
    `\`npm run bench:openai\` (\`bench/openai/run.ts\`). ${machineLine()}; ${settings}, LOG_LEVEL=warn, fresh embedded Postgres.`,
    `Closed-loop loads (${run.levels.map((level) => `${streams(level.concurrency)} for ${level.durationSeconds} s`).join(', then ')}), each after a `
      + `${run.warmupSeconds} s warm-up and a quiet machine. Gateway: \`POST /v1/chat/completions\` (\`service-chat\`, \`stream: true\`) from the `
      + 'official `openai` client in the benchmark process; TTFT is from sending the request to the first chunk with non-empty '
      + '`choices[0].delta.content`. Mock: the same `streamModelText` call the agent makes (mock provider, same delay and prompt), in the '
      + 'benchmark process, while the gateway idles; TTFT is to its first text delta.',
    '',
    '| streams | measured | requests | answered/s | errors | TTFT p50 ms | p90 ms | p99 ms | max ms |',
    `|${' --- |'.repeat(9)}`,
    ...run.levels.flatMap(levelRows),
    '',
    'Where the gateway\'s TTFT goes (per request, split at the task\'s Postgres timestamps; percentiles of each segment separately):',
    '',
    `| segment | ${run.levels.map((level) => `${streams(level.concurrency)}: p50 / p90 / p99 ms`).join(' | ')} |`,
    `|${' --- |'.repeat(run.levels.length + 1)}`,
    ...run.levels[0].segments.map((segment, index) => `| ${segment.name} | ${run.levels.map((level) => {
      const { p50, p90, p99 } = level.segments[index];
      return `${fixed(p50)} / ${fixed(p90)} / ${fixed(p99)}`;
    }).join(' | ')} |`),
    '',
    ...run.levels.map((level) => `CPU over the ${level.concurrency}-stream gateway load, percent of one core (${os.cpus().length} cores): `
      + `gateway ${fixed(level.cpu.server, 0)} %, postgres ${fixed(level.cpu.postgres, 0)} %, benchmark ${fixed(level.cpu.bench, 0)} %, `
      + `rest of the machine ${fixed(level.cpu.other, 0)} %; machine busy just before: ${fixed(level.busyBefore.gateway, 0)} % (gateway load), `
      + `${fixed(level.busyBefore.mock, 0)} % (mock load).`),
    '',
    ...run.levels.filter((level) => ADDED_P50_TARGETS_MS[level.concurrency] !== undefined).map(targetLine),
    '',
  ].join('\n');
}

function targetLine(level: ConcurrencyLevel): string {
  const limit = ADDED_P50_TARGETS_MS[level.concurrency];
  const added = level.gateway.p50 - level.mock.p50;
  const isMet = added <= limit && level.gateway.errors === 0;
  return `- Target: ≤ ${limit} ms added at p50 with ${streams(level.concurrency)}: **${isMet ? 'met' : 'not met'}** (${fixed(added)} ms added, ${level.gateway.errors} errors).`;
}

function levelRows(level: ConcurrencyLevel): string[] {
  const added = (key: 'p50' | 'p90' | 'p99') => fixed(level.gateway[key] - level.mock[key]);
  return [
    row(level.concurrency, 'gateway (`/v1/chat/completions`)', level.gateway),
    row(level.concurrency, 'mock model alone', level.mock),
    `| ${level.concurrency} | **added by the gateway** | — | — | — | **${added('p50')}** | ${added('p90')} | ${added('p99')} | — |`,
  ];
}

function row(concurrency: number, name: string, summary: TtftSummary): string {
  return `| ${concurrency} | ${name} | ${summary.requests} | ${fixed(summary.requestsPerSecond, 1)} | ${summary.errors} | ${fixed(summary.p50)} | ${fixed(summary.p90)} | ${fixed(summary.p99)} | ${fixed(summary.max)} |`;
}

const streams = (count: number) => `${count} stream${count === 1 ? '' : 's'}`;

const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : '—');
