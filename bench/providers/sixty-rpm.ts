/**
 * Issue 30's providers acceptance item, literally: 200 tasks against a stand-in allowing 60 RPM; every task
 * completes, the stand-in never sees more than its limit in any minute, the 429s it returns are retried after their
 * Retry-After with no task failed, and two gateway processes together stay within the same limit.
 *
 * An OpenAI-compatible stand-in serves 60 requests a minute and answers 429 with Retry-After beyond them: by default
 * counted over the minute before each request (a sliding minute, the strict reading of "any minute"), with
 * `--stand-in-window fixed` per fixed minute aligned to the epoch. A fixed window's count is not "any minute" (two
 * full windows back to back can hold 120 requests within one sliding minute), so either way every request's arrival
 * time at the stand-in is recorded and the busiest sliding 60 s is computed from them (sliding-window.ts).
 * Two real gateway processes (`src/main.ts serve`) share one embedded Postgres; the catalogue gives the stand-in's
 * only deployment `rpm: 60`; every other setting is the default. Half the tasks go to each process, all at once,
 * `mode: simple`, 20 to a session: a session's first completed task has its session titled by a model call too, so
 * 10 sessions add 10 to 20 calls (two processes may title one session at once) rather than 200. Every request the
 * stand-in receives (agent calls, titles, refused ones) is counted.
 * Takes about four minutes. Exits non-zero when a check fails.
 * Usage: node bench/providers/sixty-rpm.ts [--tasks N] [--tasks-per-session N] [--stand-in-window sliding|fixed] [--no-record]
 */
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { start as startStandIn, type RecordedRequest, type StandIn } from '../../test/fixtures/openai-stand-in.ts';
import { startBenchPostgres } from '../scale/postgres-server.ts';
import { startChildServer, type ChildServer } from '../submit/child-server.ts';
import { withPool } from '../submit/database-pool.ts';
import type pg from 'pg';
import { describeCommit } from '../submit/describe-commit.ts';
import { freePort } from '../submit/free-port.ts';
import { serviceEnvironment, serviceSettings } from '../submit/gateway-process.ts';
import { appendSection, machineLine } from '../submit/report.ts';
import { isTitleCall, submitTask } from './gateway-tasks.ts';
import { busiestWindow } from './sliding-window.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const RPM = 60;
const MINUTE_MS = 60_000;
const DEPLOYMENT = 'sixty';
const ANSWER = 'Answered within the limit.';
const FINISH_CAP_MS = 15 * MINUTE_MS;
const READY_TIMEOUT_MS = 120_000;

type TaskRow = { id: string; status: string; error: string | null; result: string | null; provider: string | null };

/** A 429 the stand-in answered and the same call's next arrival (callKey), if it came again. */
type Refusal = { refused: RecordedRequest; retryAfterSeconds: number; again?: RecordedRequest };

type Check = { name: string; ok: boolean; detail: string };

type Titles = { sessions: number; byModel: number };

async function main(argv: string[]): Promise<void> {
  const tasks = Number(option(argv, '--tasks') ?? 200);
  const perSession = Number(option(argv, '--tasks-per-session') ?? 20);
  const window = option(argv, '--stand-in-window') ?? 'sliding';
  if (window !== 'sliding' && window !== 'fixed') throw new Error(`--stand-in-window is sliding or fixed, not ${window}`);
  const loadBefore = os.loadavg();
  const standIn = await startStandIn({ answer: ANSWER, rateLimit: { requests: RPM, windowMs: MINUTE_MS, sliding: window === 'sliding' } });
  const postgres = await startBenchPostgres();
  const catalogFile = writeCatalog();
  const gateways: ChildServer[] = [];
  try {
    const databaseUrl = await postgres.createDatabase('sixty_rpm');
    // One after the other: the first applies the migrations.
    for (const executorId of ['sixty-rpm-a', 'sixty-rpm-b']) {
      gateways.push(await startGatewayProcess(databaseUrl, executorId, { MODELS_CONFIG: catalogFile, OPENAI_COMPATIBLE_SIXTY_URL: `${standIn.url}/v1` }));
    }
    log(`${tasks} tasks, ${perSession} to a session, half to each of 2 gateway processes; the stand-in allows ${RPM} requests a ${window} minute`);
    const startedAt = Date.now();
    const sessionPrefix = `sixty-rpm-${startedAt}`;
    const taskIds = await Promise.all(Array.from({ length: tasks }, (_, index) =>
      submitTask(gateways[index % 2].url, `Question number ${index}: say a few words.`, { session_id: `${sessionPrefix}-${Math.floor(index / perSession)}` })));
    const { rows, titles } = await withPool(databaseUrl, async (pool) => {
      const rows = await waitForTasks(pool, taskIds);
      return { rows, titles: await sessionTitles(pool, taskIds) };
    });
    const wallMs = Date.now() - startedAt;
    const { section, failed } = formatSection({ tasks, perSession, window, rows, titles, standIn, wallMs, commit: describeCommit(ROOT), loadBefore, finishedAll: rows.every(isFinished) });
    console.log(`\n${section}`);
    if (!argv.includes('--no-record')) await appendSection(path.join(ROOT, 'bench/RESULTS.md'), section);
    if (failed) process.exitCode = 1;
  } finally {
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    await postgres.stop();
    await standIn.close();
    rmSync(catalogFile, { force: true });
  }
}

function writeCatalog(): string {
  const file = path.join(os.tmpdir(), `agentgate-bench-sixty-rpm-${process.pid}.yaml`);
  writeFileSync(file, [
    'default_tier: small',
    'providers:',
    `  ${DEPLOYMENT}: { kind: openai-compatible, base_url_env: OPENAI_COMPATIBLE_SIXTY_URL, rpm: ${RPM} }`,
    'models:',
    `  - { name: sixty-model, provider: ${DEPLOYMENT}, tier: small, priority: 1, context_window: 100000, max_output_tokens: 1000, pricing: { input_per_million: 1, output_per_million: 2 } }`,
  ].join('\n'));
  return file;
}

async function startGatewayProcess(databaseUrl: string, executorId: string, settings: Record<string, string>): Promise<ChildServer> {
  const port = await freePort();
  return startChildServer({
    script: 'src/main.ts', args: ['serve'], cwd: ROOT, port, readyTimeoutMs: READY_TIMEOUT_MS,
    env: serviceEnvironment({ PORT: String(port), DATABASE_URL: databaseUrl, EXECUTOR_ID: executorId }, serviceSettings(settings)),
  });
}

const isFinished = (row: TaskRow) => ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT'].includes(row.status);

/** The tasks' rows once all have ended, or as they stand when the cap is reached. */
async function waitForTasks(pool: pg.Pool, taskIds: string[]): Promise<TaskRow[]> {
  const deadline = Date.now() + FINISH_CAP_MS;
  for (let reported = 0; ; ) {
    const { rows } = await pool.query<TaskRow>(`select id, status, error, result, provider from tasks where id = any($1::uuid[])`, [taskIds]);
    const finished = rows.filter(isFinished).length;
    if (finished === taskIds.length || Date.now() > deadline) return rows;
    if (finished - reported >= 20) log(`${(reported = finished)} of ${taskIds.length} tasks finished`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** The tasks' sessions, and how many the model titled (a title call's usage row); the others took their title from the query. */
async function sessionTitles(pool: pg.Pool, taskIds: string[]): Promise<Titles> {
  const { rows: [row] } = await pool.query<Titles>(`
    select count(distinct t.session_id)::int as sessions, count(distinct u.session_id)::int as "byModel"
    from tasks t left join usage_records u on u.session_id = t.session_id and u.agent_id = 'title_generator'
    where t.id = any($1::uuid[])`, [taskIds]);
  return row;
}

/**
 * Which call a request is: a task's agent call or its session's title call, and the query it is about (its last user
 * message; each task's query is unique). Not the whole messages: a call that parked for capacity is made again by
 * its step's re-run, which reads the session's history afresh, and other tasks of the session may have joined it.
 */
const callKey = (body: any) => `${isTitleCall(body) ? 'title' : 'agent'}: ${body?.messages?.findLast((message: any) => message.role === 'user')?.content}`;

/** Each 429 with the next request of the same call: the call sent again. */
function refusalsOf(requests: RecordedRequest[]): Refusal[] {
  return requests.flatMap((request, index) => {
    if (request.status !== 429) return [];
    const again = requests.slice(index + 1).find((later) => callKey(later.body) === callKey(request.body));
    return [{ refused: request, retryAfterSeconds: Math.ceil(request.retryAfterMs! / 1000), again }];
  });
}

type Report = { tasks: number; perSession: number; window: 'sliding' | 'fixed'; rows: TaskRow[]; titles: Titles; standIn: StandIn; wallMs: number; commit: string; loadBefore: number[]; finishedAll: boolean };

/** The run's section for bench/RESULTS.md, and whether any check failed. */
function formatSection({ tasks, perSession, window, rows, titles: sessions, standIn, wallMs, commit, loadBefore, finishedAll }: Report): { section: string; failed: boolean } {
  const requests = standIn.requests;
  const served = requests.filter((request) => request.status === 200);
  const titles = requests.filter((request) => isTitleCall(request.body));
  const completed = rows.filter((row) => row.status === 'COMPLETED');
  const answeredHere = completed.filter((row) => row.provider === DEPLOYMENT && row.result === ANSWER);
  const failures = countBy(rows.filter((row) => row.status !== 'COMPLETED').map((row) => `${row.status}: ${row.error?.slice(0, 120)}`));
  const busiestServed = busiestWindow(served.map((request) => request.at), MINUTE_MS);
  const busiestReceived = busiestWindow(requests.map((request) => request.at), MINUTE_MS);
  const busiestFixed = Math.max(0, ...standIn.stats.servedPerWindow.values());
  const refusals = refusalsOf(requests);
  const retriedLate = (of: Refusal[]) => of.filter(({ refused, again, retryAfterSeconds }) => again !== undefined && again.at - refused.at >= retryAfterSeconds * 1000);
  const agentRefusals = refusals.filter(({ refused }) => !isTitleCall(refused.body));
  const titleRefusals = refusals.filter(({ refused }) => isTitleCall(refused.body));
  const spanMinutes = served.length > 1 ? (served.at(-1)!.at - served[0].at) / MINUTE_MS : 0;
  const achievedRpm = spanMinutes > 0 ? (served.length - 1) / spanMinutes : 0;
  const gapsMs = served.slice(1).map((request, index) => request.at - served[index].at).toSorted((left, right) => left - right);
  const checks: Check[] = [
    { name: 'every task completed', ok: finishedAll && completed.length === tasks, detail: `${completed.length} of ${tasks} completed, ${rows.length - completed.length} not${finishedAll ? '' : ' (the 15 min cap was reached)'}` },
    { name: 'each answered by the stand-in', ok: answeredHere.length === tasks, detail: `${answeredHere.length} with the stand-in's answer from deployment ${DEPLOYMENT}` },
    { name: `at most ${RPM} served in any sliding minute`, ok: busiestServed.count <= RPM, detail: `${busiestServed.count} (the first at ${clock(busiestServed.startAt)}, the last ${busiestServed.endAt - busiestServed.startAt} ms later)` },
    { name: `at most ${RPM} in any of the stand-in's own minutes`, ok: window === 'sliding' || busiestFixed <= RPM, detail: window === 'sliding' ? 'its minutes are the sliding ones above' : `${busiestFixed}` },
    { name: 'each 429 of a task\'s call sent again after its Retry-After', ok: retriedLate(agentRefusals).length === agentRefusals.length, detail: `${retriedLate(agentRefusals).length} of ${agentRefusals.length}` },
  ];
  const met = (check: Check) => `${check.name}: ${check.detail}: ${check.ok ? 'met' : '**FAILED**'}`;
  const outcomes = refusals.map(({ refused, again, retryAfterSeconds }) => `${isTitleCall(refused.body) ? 'a title call' : 'a task\'s call'} at ${clock(refused.at)}, `
    + `Retry-After ${retryAfterSeconds} s: ${again ? `sent again ${again.at - refused.at} ms later (answered ${again.status})` : 'not sent again'}`);
  const section = [
    `## Providers acceptance at 60 RPM (\`npm run bench:providers:sixty-rpm\`), ${new Date().toISOString().slice(0, 19)}`,
    '',
    `${machineLine()}; load average ${loadBefore.map((load) => load.toFixed(2)).join(', ')} before and ${os.loadavg().map((load) => load.toFixed(2)).join(', ')} at the end (1, 5, 15 min; the machine is shared); commit ${commit}. `
      + `${tasks} \`mode: simple\` tasks submitted at once, alternately to two gateway processes (\`src/main.ts serve\`, EXECUTOR_IDs sixty-rpm-a and -b) on one embedded Postgres, ${perSession} tasks to a session `
      + `(${Math.ceil(tasks / perSession)} sessions; a session is titled by a model call once its first task completes); the catalogue's only deployment is an OpenAI-compatible stand-in declared \`rpm: ${RPM}\`, `
      + `which itself serves ${RPM} requests ${window === 'sliding' ? 'in the minute before each request (a sliding minute)' : 'per fixed minute aligned to the epoch'} and answers 429 with Retry-After beyond them. Every gateway setting at its default.`,
    '',
    '| stand-in window | tasks | completed | failed | requests at the stand-in | of them titles | 429s | busiest sliding minute (served) | busiest sliding minute (all received) | busiest fixed minute | achieved requests/min | share of 60 | wall s |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    `| ${window} | ${tasks} | ${completed.length} | ${rows.length - completed.length} | ${requests.length} | ${titles.length} | ${refusals.length} | ${busiestServed.count} | ${busiestReceived.count} | ${busiestFixed} | ${achievedRpm.toFixed(1)} | ${(100 * achievedRpm / RPM).toFixed(1)} % | ${(wallMs / 1000).toFixed(1)} |`,
    '',
    `Achieved rate: the requests served from the first to the last, over that time (${(spanMinutes * 60).toFixed(1)} s). `
      + `Time between consecutive served requests at the stand-in: min ${gapsMs[0] ?? 0} ms, 1st percentile ${percentileOf(gapsMs, 0.01)} ms, median ${percentileOf(gapsMs, 0.5)} ms. `
      + `A 429 is matched to the next request of the same call: the same kind (a task's or a title call) about the same query (each names its task; not the same messages, as a parked call's retry reads its session's history afresh): `
      + `${outcomes.length === 0 ? 'there were none' : outcomes.join('; ')}. `
      + `Title calls: ${titles.length} reached the stand-in (${titleRefusals.length} of them refused, ${retriedLate(titleRefusals).length} of those sent again after Retry-After); `
      + `${sessions.byModel} of the ${sessions.sessions} sessions were titled by the model, the others from their first query (the titler gives up after its 30 s timeout, waiting for capacity included). Task failures: ${[...failures].map(([reason, count]) => `${count} × ${reason}`).join('; ') || 'none'}.`,
    '',
    ...checks.map((check) => `- ${met(check)}`),
    '',
  ].join('\n');
  return { section, failed: checks.some((check) => !check.ok) };
}

const clock = (at: number) => new Date(at).toISOString().slice(11, 23);

const percentileOf = (sorted: number[], share: number) => sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? 0;

function countBy(values: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

function option(argv: string[], name: string): string | undefined {
  const index = argv.indexOf(name);
  return index === -1 ? undefined : argv[index + 1];
}

const log = (message: string) => console.error(`[sixty-rpm] ${message}`);

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exit(1);
});
