import os from 'node:os';
import { machineLine } from '../submit/report.ts';
import type { CatchUpResult } from './catch-up.ts';
import type { FanOutLevel, FanOutResult } from './fan-out.ts';
import type { FirstEventSummary } from './first-event.ts';
import type { EventKind } from './subscriber-protocol.ts';

export const TARGETS = {
  fanOutStreams: 5_000,
  p99Ms: 100,
  broadcasterShare: 0.5,
  catchUpEvents: 10_000,
  catchUpMs: 1_000,
  firstEventP50Ms: 30,
} as const;

export interface FanOutPair {
  level: FanOutLevel;
  gateway: FanOutResult;
  broadcaster: FanOutResult;
}

export interface StreamRun {
  date: Date;
  commit: string;
  isQuick: boolean;
  /** Every setting the gateway ran with that is not its default, with why. */
  settings: Record<string, string>;
  catchUpSettings: Record<string, string>;
  fanOut: FanOutPair[];
  catchUp: CatchUpResult;
  firstEvents: FirstEventSummary[];
}

/** A self-contained dated section: RESULTS.md's introduction describes only the submit benchmark. */
export function formatSection(run: StreamRun): string {
  const settings = (values: Record<string, string>) => Object.entries(values).map(([name, value]) => `${name}=${value}`).join(', ');
  const [{ level }] = run.fanOut;
  return [
    `## SSE streams: fan-out, catch-up, first event: ${run.date.toISOString()} (commit ${run.commit})${run.isQuick ? ' (quick mode)' : ''}`,
    '',
    `\`npm run bench:stream\` (\`bench/stream/run.ts\`). ${machineLine()}; LOG_LEVEL=warn, fresh embedded Postgres, other settings at their defaults.`,
    `Gateway settings changed for the benchmark: ${settings(run.settings)} (authentication by API key instead of development `
      + 'skip-auth; the per-key stream cap, default 100, and the per-key rate limit, default 60/min with a burst of a third of it per '
      + `second, would refuse most of the stream opens). The long log of (b) was written by the same gateway started with ${settings(run.catchUpSettings)}, `
      + 'then restarted with the settings above.',
    '',
    `### (a) Fan-out: ${level.tasks} running tasks, subscribers spread evenly over them`,
    '',
    `Each task's mock model (\`mock-large\`) answers ${level.answerWords} words over ${level.answerMs / 1000} s. The tasks are held before their first token (submitted `
      + 'with a token budget of 1, they pause for budget) and released (budget raised, resumed) once every stream is open; the window runs '
      + 'from the release to the last event received, and only events committed inside it count. '
      + 'Latency: event `timestamp` (set by Postgres when the event is appended, millisecond precision) → receipt in the client, same clock. '
      + `Clients: ${level.clientWorkers} worker threads in the benchmark process, raw \`node:http\` on a keep-alive agent per worker, \`eventsource-parser\`, `
      + '64 stream opens in flight per worker. The broadcaster (`bench/stream/broadcaster-server.ts`, child process, bare `node:http`) offers '
      + `the load the tasks offer when nothing slows them: per channel (task), one event every ${level.partialIntervalMs} ms (EVENT_PARTIAL_INTERVAL_MS) `
      + `for ${level.answerMs / 1000} s, \`data\` the mean size the gateway's subscribers received, to the same number of subscribers.`,
    '',
    '| streams | server | streams open (refused) | opening took s | events delivered / expected | delivered events/s | commit → receipt p50 / p90 / p99 / max ms | seq gaps, error events | RSS before → peak MiB |',
    `|${' --- |'.repeat(9)}`,
    ...run.fanOut.flatMap((pair) => [fanOutRow('gateway', pair.gateway), fanOutRow('bare broadcaster', pair.broadcaster)]),
    '',
    `CPU over each window, percent of one core (${os.cpus().length} cores):`,
    '',
    '| streams | server | server CPU | postgres CPU | clients (benchmark process) CPU | rest of the machine | machine busy just before | gateway ÷ broadcaster deliveries/s |',
    `|${' --- |'.repeat(8)}`,
    ...run.fanOut.flatMap((pair) => [
      cpuRow('gateway', pair.gateway, share(pair)),
      cpuRow('bare broadcaster', pair.broadcaster, '—'),
    ]),
    '',
    'Commit → receipt by kind of event (the gateway only; the broadcaster sends partial deltas alone):',
    '',
    ...KIND_TABLE_HEAD,
    ...run.fanOut.map((pair) => latencyByKindRow(pair.gateway)),
    '',
    ...run.fanOut.map(({ gateway: { subscribers, flow, stats }, broadcaster }) => `Event flow at ${subscribers} streams: each task wrote `
      + `${flow.eventsPerChannel} events in the window, one every ${fixed(flow.intervalMs, 1)} ms on average (the broadcaster: `
      + `${broadcaster.flow.eventsPerChannel}, one every ${fixed(broadcaster.flow.intervalMs, 0)} ms), \`data\` ${flow.dataBytes} bytes on average; `
      + `${stats.eventsBeforeWindow} events committed before the window were replayed to the subscribers (not measured).`),
    '',
    '### (b) Catch-up after a reconnect',
    '',
    `A task whose log holds ${run.catchUp.log.events} events (${fixed(run.catchUp.log.writtenInMs / 1000, 1)} s to write). A client that had read `
      + `the first 5 reconnects with \`Last-Event-ID: ${run.catchUp.lastEventId}\` (the 5th event's stream id) and reads ${run.catchUp.events} events, `
      + 'timed from sending the request (on a kept-alive connection) to the last of them.',
    '',
    '| events read | runs ms | median ms | events/s (median) |',
    '| --- | --- | --- | --- |',
    `| ${run.catchUp.events} | ${run.catchUp.runsMs.map((ms) => fixed(ms, 0)).join(', ')} | ${fixed(median(run.catchUp.runsMs), 0)} | `
      + `${fixed(run.catchUp.events / (median(run.catchUp.runsMs) / 1000), 0)} |`,
    '',
    '### (c) Submit → first event',
    '',
    'Each client submits a task (`POST /api/v1/tasks`, mock model without delay), opens its stream at once on the same kept-alive agent, '
      + 'times the first event, and reads the stream to its end before the next submission. After 5 untimed submissions.',
    '',
    '| clients | submissions | submit → first event p50 / p90 / p99 / max ms | submit answered p50 ms | stream request → first event p50 ms | first event |',
    `|${' --- |'.repeat(6)}`,
    ...run.firstEvents.map((summary) => `| ${summary.clients} | ${summary.samples} | ${fixed(summary.total.p50, 1)} / ${fixed(summary.total.p90, 1)} / `
      + `${fixed(summary.total.p99, 1)} / ${fixed(summary.total.max, 1)} | ${fixed(summary.submitP50, 1)} | ${fixed(summary.streamP50, 1)} | ${summary.firstTypes} |`),
    '',
    'Targets:',
    '',
    ...formatTargets(run),
    '',
  ].join('\n');
}

export function fanOutRow(server: string, result: FanOutResult): string {
  const { latencyMs: latency, stats, open } = result;
  return `| ${result.subscribers} | ${server} | ${open.opened} (${open.failed}) | ${fixed(open.openMs / 1000, 1)} | ${stats.events} / ${result.expectedDeliveries} | `
    + `${fixed(result.deliveredPerSecond, 0)} | ${fixed(latency.p50, 1)} / ${fixed(latency.p90, 1)} / ${fixed(latency.p99, 1)} / ${fixed(latency.max, 1)} | `
    + `${stats.gaps}, ${stats.errorEvents} | ${fixed(result.rss.startMiB, 0)} → ${fixed(result.rss.peakMiB, 0)} |`;
}

export const KIND_TABLE_HEAD = [
  '| streams | partial deltas: deliveries, p50 / p99 / max ms | completion frames | other events |',
  `|${' --- |'.repeat(4)}`,
];

export function latencyByKindRow(result: FanOutResult): string {
  const cell = (kind: EventKind) => {
    const { count, p50, p99, max } = result.latencyByKindMs[kind];
    return `${count}, ${fixed(p50, 1)} / ${fixed(p99, 1)} / ${fixed(max, 1)}`;
  };
  return `| ${result.subscribers} | ${cell('delta')} | ${cell('completed')} | ${cell('other')} |`;
}

function cpuRow(server: string, result: FanOutResult, ratio: string): string {
  const { cpu } = result;
  return `| ${result.subscribers} | ${server} | ${fixed(cpu.server, 0)} % | ${fixed(cpu.postgres, 0)} % | ${fixed(cpu.bench, 0)} % | ${fixed(cpu.other, 0)} % | `
    + `${fixed(result.busyBefore, 0)} % | ${ratio} |`;
}

const share = (pair: FanOutPair) => `${fixed((100 * pair.gateway.deliveredPerSecond) / pair.broadcaster.deliveredPerSecond, 0)} %`;

function formatTargets(run: StreamRun): string[] {
  const largest = run.fanOut.at(-1)!;
  const ratio = largest.gateway.deliveredPerSecond / largest.broadcaster.deliveredPerSecond;
  const isComplete = largest.gateway.stats.events === largest.gateway.expectedDeliveries && largest.gateway.open.failed === 0;
  const isFanOutMet = largest.level.subscribers >= TARGETS.fanOutStreams && largest.gateway.latencyMs.p99 <= TARGETS.p99Ms
    && ratio >= TARGETS.broadcasterShare && isComplete;
  const catchUpMs = median(run.catchUp.runsMs);
  const isCatchUpMet = run.catchUp.events >= TARGETS.catchUpEvents && catchUpMs <= TARGETS.catchUpMs;
  const [sequential] = run.firstEvents;
  return [
    `- p99 commit → receipt ≤ ${TARGETS.p99Ms} ms at ${TARGETS.fanOutStreams} SSE streams and ≥ ${TARGETS.broadcasterShare * 100} % of the bare `
      + `broadcaster's deliveries/s: **${isFanOutMet ? 'met' : 'not met'}** (${largest.level.subscribers} streams: p99 ${fixed(largest.gateway.latencyMs.p99, 1)} ms, `
      + `${fixed(100 * ratio, 0)} % of the broadcaster's ${fixed(largest.broadcaster.deliveredPerSecond, 0)}/s, `
      + `${largest.gateway.stats.events} of ${largest.gateway.expectedDeliveries} deliveries, ${largest.gateway.open.failed} refused)`,
    `- ${TARGETS.catchUpEvents}-event catch-up ≤ ${TARGETS.catchUpMs} ms: **${isCatchUpMet ? 'met' : 'not met'}** `
      + `(${run.catchUp.events} events, median ${fixed(catchUpMs, 0)} ms)`,
    `- submit → first event p50 ≤ ${TARGETS.firstEventP50Ms} ms: **${sequential.total.p50 <= TARGETS.firstEventP50Ms ? 'met' : 'not met'}** `
      + `(one client: p50 ${fixed(sequential.total.p50, 1)} ms over ${sequential.samples} submissions)`,
  ];
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor((sorted.length - 1) / 2)];
}

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : '—');
