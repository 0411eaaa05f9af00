/**
 * Providers benchmark (issue 30): TASKS `mode: simple` tasks submitted at once to a real gateway process whose only
 * provider is an OpenAI-compatible stand-in limited to RPM requests and TPM prompt tokens a minute, each answer
 * streaming over about ANSWER_SECONDS; beside it, in the same run, the same prompts through a bare AI SDK client
 * (`streamText`, default retries) against a second stand-in with the same limits. The stand-ins enforce the limits
 * quantized per second (RPM / 60 requests and TPM / 60 tokens in each second, as OpenAI documents it may), which
 * punishes bursts the way a real provider does. Reports tasks failed, 429s the stand-ins sent, the achieved request
 * rate as a share of the limit, and the gateway's worker slots in use (sampled from /metrics each second) against
 * the streams the provider was serving: the rest were waiting for capacity.
 * Usage: node bench/providers/run.ts [--tasks N] [--worker-concurrency N|default] [--no-record]
 */
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ModelMessage } from 'ai';
import { start as startStandIn, type StandIn } from '../../test/fixtures/openai-stand-in.ts';
import { openPool } from '../submit/database-pool.ts';
import { describeCommit } from '../submit/describe-commit.ts';
import { startGateway, type Gateway } from '../submit/gateway-process.ts';
import { appendSection, machineLine } from '../submit/report.ts';
import { runBareClient, type BareRun } from './bare-client.ts';
import { isTitleCall, submitTask, waitUntil } from './gateway-tasks.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const RPM = 600;
const TPM = 200_000;
const ANSWER_WORDS = 50;
const ANSWER_SECONDS = 5;
const TARGETS = { failedTasks: 0, rateShare: 0.9 };

type Sample = { at: number; active: number; queued: number; streaming: number };

type GatewayRun = {
  completed: number; failed: number; errors: Map<string, number>; wallMs: number; samples: Sample[];
  agentCalls: number; titleCalls: number; rateLimited: number; busiestSecond: number;
  /** From the first agent call served to the last, and every call (titles too) served in between. */
  span: { firstAt: number; lastAt: number; calls: number };
};

function spanOf(served: StandIn['requests']): { span: GatewayRun['span'] } {
  const agent = served.filter((request) => !isTitleCall(request.body));
  const firstAt = agent[0]?.at ?? 0;
  const lastAt = agent.at(-1)?.at ?? 0;
  return { span: { firstAt, lastAt, calls: served.filter((request) => request.at >= firstAt && request.at <= lastAt).length } };
}

async function main(argv: string[]): Promise<void> {
  const tasks = Number(option(argv, '--tasks') ?? 1000);
  const workerConcurrency = option(argv, '--worker-concurrency') ?? '200';
  const commit = describeCommit(ROOT);
  const limit = { requests: RPM / 60, tokens: Math.floor(TPM / 60), windowMs: 1000 };
  const answer = Array.from({ length: ANSWER_WORDS }, (_, index) => `word${index}`).join(' ');
  const wordDelayMs = (ANSWER_SECONDS * 1000) / ANSWER_WORDS;
  const forGateway = await startStandIn({ answer, wordDelayMs, rateLimit: limit, usage: { promptTokens: 100, completionTokens: ANSWER_WORDS } });
  const forBare = await startStandIn({ answer, wordDelayMs, rateLimit: limit, usage: { promptTokens: 100, completionTokens: ANSWER_WORDS } });
  const catalogFile = writeCatalog();
  // `--worker-concurrency default` keeps the shipped WORKER_CONCURRENCY and TENANT_WORKER_SHARE.
  const workers: Record<string, string> = workerConcurrency === 'default' ? {} : { WORKER_CONCURRENCY: workerConcurrency, TENANT_WORKER_SHARE: '1' };
  const settings = { ...workers, PROVIDER_TENANT_SHARE: '1' };
  log(`starting the gateway (${JSON.stringify(settings)}) on a fresh embedded Postgres`);
  const gateway = await startGateway({ root: ROOT, profileDir: undefined, env: { MODELS_CONFIG: catalogFile, OPENAI_COMPATIBLE_BENCH_URL: `${forGateway.url}/v1`, ...settings } });
  try {
    const prompt = await warmUp(gateway, forGateway);
    // Let the warm-up's calls leave the stand-in's windows and the gateway's pacing.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const queries = Array.from({ length: tasks }, (_, index) => `Question number ${index}: say a few words.`);
    log(`${tasks} tasks through the gateway and ${tasks} bare AI SDK calls, at once`);
    const [gatewayRun, bareRun] = await Promise.all([
      runThroughGateway(gateway, forGateway, queries),
      runBareClient(`${forBare.url}/v1`, queries.map((query) => ({ system: prompt.system, messages: [{ role: 'user', content: query }] as ModelMessage[] }))),
    ]);
    const section = formatSection({ commit, tasks, workers: JSON.stringify(workers).replace(/[{}"]/g, '').replace(/:/g, '=') || 'the defaults (WORKER_CONCURRENCY=64, TENANT_WORKER_SHARE=0.5)', gatewayRun, bareRun, bareStandIn: forBare, prompt });
    console.log(`\n${section}`);
    if (!argv.includes('--no-record')) await appendSection(path.join(ROOT, 'bench/RESULTS.md'), section);
  } finally {
    await gateway.stop();
    await forGateway.close();
    await forBare.close();
    rmSync(catalogFile, { force: true });
  }
}

function writeCatalog(): string {
  const file = path.join(os.tmpdir(), `agentgate-bench-providers-${process.pid}.yaml`);
  writeFileSync(file, [
    'default_tier: small',
    'providers:',
    `  bench: { kind: openai-compatible, base_url_env: OPENAI_COMPATIBLE_BENCH_URL, rpm: ${RPM}, tpm: ${TPM} }`,
    'models:',
    '  - { name: bench-model, provider: bench, tier: small, priority: 1, context_window: 100000, max_output_tokens: 1000, pricing: { input_per_million: 1, output_per_million: 2 } }',
  ].join('\n'));
  return file;
}

/** One task before the run: its call to the stand-in gives the system prompt the bare client sends too. */
async function warmUp(gateway: Gateway, standIn: StandIn): Promise<{ system?: string; promptChars: number }> {
  const taskId = await submitTask(gateway.url, 'Warm-up question: say a few words.');
  const pool = openPool(gateway.databaseUrl, 1);
  try {
    await waitUntil(async () => (await pool.query(`select count(*)::int as n from tasks where id = $1 and status in ('COMPLETED', 'FAILED')`, [taskId])).rows[0].n === 1, 60_000);
  } finally {
    await pool.end();
  }
  const call = standIn.requests.find((request) => request.status === 200 && !isTitleCall(request.body));
  if (!call) throw new Error('the warm-up task made no call to the stand-in');
  const system = call.body.messages.find((message: any) => message.role === 'system')?.content;
  return { system, promptChars: JSON.stringify(call.body.messages).length };
}

async function runThroughGateway(gateway: Gateway, standIn: StandIn, queries: string[]): Promise<GatewayRun> {
  const started = Date.now();
  const refusedBefore = standIn.stats.rateLimited;
  const samples: Sample[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      samples.push({ at: Date.now(), ...await scrape(gateway), streaming: standIn.stats.inFlight });
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  })();
  const taskIds = await submitAll(gateway, queries);
  const pool = openPool(gateway.databaseUrl, 2);
  let rows: Array<{ status: string; error: string | null }> = [];
  try {
    await waitUntil(async () => {
      ({ rows } = await pool.query(`select status, error from tasks where id = any($1::uuid[])`, [taskIds]));
      return rows.every((row) => ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT'].includes(row.status));
    }, 30 * 60_000);
  } finally {
    await pool.end();
  }
  const wallMs = Date.now() - started;
  sampling = false;
  await sampler;
  const errors = new Map<string, number>();
  for (const row of rows.filter((row) => row.status !== 'COMPLETED')) errors.set(`${row.status}: ${row.error?.slice(0, 100)}`, (errors.get(`${row.status}: ${row.error?.slice(0, 100)}`) ?? 0) + 1);
  const served = standIn.requests.filter((request) => request.at >= started && request.status === 200);
  const perSecond = new Map<number, number>();
  for (const request of served) perSecond.set(Math.floor(request.at / 1000), (perSecond.get(Math.floor(request.at / 1000)) ?? 0) + 1);
  return {
    completed: rows.filter((row) => row.status === 'COMPLETED').length, failed: rows.filter((row) => row.status !== 'COMPLETED').length, errors, wallMs, samples,
    agentCalls: served.filter((request) => !isTitleCall(request.body)).length, titleCalls: served.filter((request) => isTitleCall(request.body)).length,
    ...spanOf(served),
    rateLimited: standIn.stats.rateLimited - refusedBefore, busiestSecond: Math.max(0, ...perSecond.values()),
  };
}

/** All at once, as a burst of clients would. */
async function submitAll(gateway: Gateway, queries: string[]): Promise<string[]> {
  return Promise.all(queries.map((query) => submitTask(gateway.url, query)));
}

async function scrape(gateway: Gateway): Promise<{ active: number; queued: number }> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const gauge = (pattern: RegExp) => [...text.matchAll(pattern)].reduce((sum, match) => sum + Number(match[1]), 0);
  return { active: gauge(/^agentgate_workflows_active (\S+)$/gm), queued: gauge(/^agentgate_queue_depth\{[^}]*\} (\S+)$/gm) };
}

type Report = { commit: string; tasks: number; workers: string; gatewayRun: GatewayRun; bareRun: BareRun; bareStandIn: StandIn; prompt: { promptChars: number } };

function formatSection({ commit, tasks, workers, gatewayRun: run, bareRun: bare, bareStandIn, prompt }: Report): string {
  const minutes = (run.span.lastAt - run.span.firstAt) / 60_000;
  const achievedRpm = minutes > 0 ? (run.span.calls - 1) / minutes : 0;
  const promptTokens = Math.ceil(prompt.promptChars / 4);
  const allowedRpm = Math.min(RPM, TPM / promptTokens);
  const busy = run.samples.filter((sample) => sample.active > 0);
  const mean = (values: number[]) => (values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length);
  const waiting = busy.map((sample) => Math.max(0, sample.active - sample.streaming));
  const bareFailures = [...bare.failures].map(([reason, count]) => `${count} × ${reason}`).join('; ') || 'none';
  const errors = [...run.errors].map(([reason, count]) => `${count} × ${reason}`).join('; ') || 'none';
  const met = (ok: boolean) => (ok ? 'met' : 'missed');
  return [
    `## Providers (\`npm run bench:providers\`), ${new Date().toISOString().slice(0, 19)}`,
    '',
    `${machineLine()}; load average ${os.loadavg().map((load) => load.toFixed(1)).join(', ')} at the end (the machine is shared); commit ${commit}. `
      + `${tasks} \`mode: simple\` tasks submitted at once to one gateway process (workers: ${workers}; PROVIDER_TENANT_SHARE=1; `
      + `catalogue rpm ${RPM}, tpm ${TPM}); its only provider an OpenAI-compatible stand-in allowing ${RPM / 60} requests and ${Math.floor(TPM / 60)} prompt tokens in each second `
      + `(${RPM} RPM / ${TPM / 1000}k TPM quantized per second), each answer ${ANSWER_WORDS} words over ${ANSWER_SECONDS} s. Beside it, in the same run, the same prompts `
      + `(the gateway's system prompt and the query, about ${promptTokens} tokens) through a bare AI SDK client (\`streamText\`, @ai-sdk/openai-compatible, default retries), `
      + 'all at once, against a second stand-in with the same limits.',
    '',
    '| client | tasks | completed | failed | 429s from the stand-in | wall s | achieved requests/min | share of the limit |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    `| gateway | ${tasks} | ${run.completed} | ${run.failed} | ${run.rateLimited} | ${(run.wallMs / 1000).toFixed(1)} | ${achievedRpm.toFixed(0)} | ${(100 * achievedRpm / allowedRpm).toFixed(1)} % |`,
    `| bare AI SDK | ${tasks} | ${bare.completed} | ${bare.failed} | ${bareStandIn.stats.rateLimited} | ${(bare.wallMs / 1000).toFixed(1)} | — | — |`,
    '',
    `Gateway: ${run.agentCalls} agent calls and ${run.titleCalls} session-title calls served (both count against the limit); achieved rate: the calls served from the first agent call to the last, over that time; `
      + `the allowed rate is ${allowedRpm.toFixed(0)} requests/min (the lower of ${RPM} RPM and ${TPM} TPM over ${promptTokens}-token prompts); busiest second ${run.busiestSecond} calls. `
      + `Worker slots in use (agentgate_workflows_active, sampled each second while any was): mean ${mean(busy.map((sample) => sample.active)).toFixed(1)}, max ${Math.max(0, ...busy.map((sample) => sample.active))}; `
      + `of them not streaming from the provider (waiting for capacity, or between calls): mean ${mean(waiting).toFixed(1)}, max ${Math.max(0, ...waiting)}; `
      + `tasks queued behind the workers: max ${Math.max(0, ...run.samples.map((sample) => sample.queued))}. Task failures: ${errors}.`,
    '',
    `Bare client failures: ${bareFailures}.`,
    '',
    `Targets (issue 30): 0 failed tasks (${run.failed}: ${met(run.failed === TARGETS.failedTasks)}); ≥ ${TARGETS.rateShare * 100} % of the allowed rate `
      + `(${(100 * achievedRpm / allowedRpm).toFixed(1)} %: ${met(achievedRpm / allowedRpm >= TARGETS.rateShare)}).`,
  ].join('\n');
}

function option(argv: string[], name: string): string | undefined {
  const index = argv.indexOf(name);
  return index === -1 ? undefined : argv[index + 1];
}

const log = (message: string) => console.error(`[bench] ${message}`);

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exit(1);
});
