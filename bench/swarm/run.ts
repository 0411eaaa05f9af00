/**
 * Swarm benchmark (issue 28): a 5-agent swarm with the mock model answering after MODEL_DELAY_MS per call, over the
 * fixture corpus. Swarms run one at a time, with agents searching SEARCHES[0] times, then SEARCHES[1] times. Per
 * swarm: wall time (started_at → completed_at, server clock), model calls, messages, agent turns, and write
 * transactions (by transaction id, over the whole gateway while it ran: the engine's step records, ours, and any
 * background sweep). Writes per agent turn are the difference between the two kinds of swarm over the difference in
 * turns (so the submission, the lead's plan, the synthesis and the completion cancel out; a round's checkpoint and the
 * lead's step stay in, shared by its five turns). The gateway's share of wall time is what is left once the model's
 * time on the critical path is taken out: the lead's calls and the synthesis one after another, and one call per round
 * (the agents of a round answer at once), each call as long as the mock takes alone (measured here, in-process).
 * Prints a Markdown section and appends it to bench/RESULTS.md. Usage: node bench/swarm/run.ts [--no-record]
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { loadModelCatalog } from '../../src/llm/model-catalog.ts';
import { createModelRegistry } from '../../src/llm/provider-registry.ts';
import { streamModelText } from '../../src/llm/stream-model-text.ts';
import { AgentActionSchema } from '../../src/workflows/modes/swarm/swarm-answers.ts';
import { openPool } from '../submit/database-pool.ts';
import { describeCommit } from '../submit/describe-commit.ts';
import { startGateway, type Gateway } from '../submit/gateway-process.ts';
import { appendSection, machineLine } from '../submit/report.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const MODEL_DELAY_MS = 200;
const SWARMS = 3;
const SEARCHES = [2, 4] as const;
const TARGETS = { writeTransactionsPerTurn: 3, gatewayShare: 0.05 };
const TASKS = [
  'How geothermal plants make electricity', 'How tidal power works', 'How heat pumps heat a house',
  'How hydropower stores energy', 'How batteries store electricity',
];

interface SwarmRun {
  searches: number;
  wallMs: number;
  modelCalls: number;
  leadCalls: number;
  rounds: number;
  turns: number;
  messages: number;
  writes: number;
}

async function main(argv: string[]): Promise<void> {
  const commit = describeCommit(ROOT);
  log('starting the gateway on a fresh embedded Postgres');
  const gateway = await startGateway({ root: ROOT, profileDir: undefined, env: { WEB_SEARCH_PROVIDER: 'fixture' } });
  const pool = openPool(gateway.databaseUrl, 2);
  const runs: SwarmRun[] = [];
  try {
    log('warm-up swarm');
    await runSwarm(gateway, pool, SEARCHES[0]);
    for (const searches of SEARCHES) {
      for (let index = 0; index < SWARMS; index += 1) {
        runs.push(await runSwarm(gateway, pool, searches));
        log(`swarm of ${searches} searches per agent: ${runs.at(-1)!.wallMs.toFixed(0)} ms`);
      }
    }
  } finally {
    await pool.end();
    await gateway.stop();
  }
  const section = formatSection(commit, runs, await measureMockCall());
  console.log(`\n${section}`);
  if (!argv.includes('--no-record')) await appendSection(path.join(ROOT, 'bench/RESULTS.md'), section);
}

async function runSwarm(gateway: Gateway, pool: pg.Pool, searches: number): Promise<SwarmRun> {
  const before = await transactionId(pool);
  const response = await fetch(`${gateway.url}/api/v1/tasks`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'Explain five ways of making or storing clean energy.',
      context: { force_swarm: true, mock_delay_ms: MODEL_DELAY_MS, mock_swarm: { tasks: TASKS, search_turns: searches } },
    }),
  });
  if (response.status !== 200) throw new Error(`submit answered ${response.status}: ${await response.text()}`);
  const { task_id: taskId } = await response.json() as { task_id: string };
  await waitForCompletion(pool, taskId);
  const writes = Number(await transactionId(pool) - before) - 1;
  const { rows } = await pool.query(`
    select extract(epoch from (t.completed_at - t.started_at)) * 1000 as wall_ms,
      (select count(*) from usage_records u where u.task_id = t.id)::int as model_calls,
      (select count(*) from swarm_turns s where s.task_id = t.id and s.agent = 'lead')::int as lead_calls,
      (select count(*) from swarm_turns s where s.task_id = t.id and s.agent != 'lead')::int as turns,
      (select count(distinct s.round) from swarm_turns s where s.task_id = t.id and s.agent != 'lead')::int as rounds,
      (select count(*) from swarm_messages m where m.task_id = t.id)::int as messages
    from tasks t where t.id = $1`, [taskId]);
  const row = rows[0];
  return { searches, wallMs: Number(row.wall_ms), modelCalls: row.model_calls, leadCalls: row.lead_calls, rounds: row.rounds, turns: row.turns, messages: row.messages, writes };
}

async function waitForCompletion(pool: pg.Pool, taskId: string): Promise<void> {
  for (;;) {
    const { rows } = await pool.query<{ status: string; error: string | null }>('select status, error from tasks where id = $1', [taskId]);
    if (rows[0].status === 'COMPLETED') return;
    if (['FAILED', 'CANCELLED', 'TIMEOUT'].includes(rows[0].status)) throw new Error(`swarm ${taskId} ended ${rows[0].status}: ${rows[0].error}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function transactionId(pool: pg.Pool): Promise<bigint> {
  const { rows } = await pool.query<{ id: string }>('select pg_current_xact_id()::text as id');
  return BigInt(rows[0].id);
}

/** One mock call alone, in this process, with the swarm's delay and a structured answer: a model call's share of a round. */
async function measureMockCall(): Promise<number> {
  const registry = createModelRegistry(loadModelCatalog(path.join(ROOT, 'config/models.yaml')), {});
  const state = { name: 'ada', task: { id: 'T1', description: TASKS[0] }, teammates: [{ name: 'ben' }], tools: ['web_search'], history: [], inbox: [] };
  const call = () => streamModelText(registry, {
    selection: { modelTier: 'medium' }, system: 'You are ada.', messages: [{ role: 'user', content: `Request\n\n## State\n${JSON.stringify(state)}` }],
    maxOutputTokens: 2048, responseSchema: AgentActionSchema as never, mockDelayMs: MODEL_DELAY_MS, mockOptions: { purpose: 'swarm-agent', script: {} },
  });
  await call();
  const started = performance.now();
  for (let index = 0; index < 10; index += 1) await call();
  return (performance.now() - started) / 10;
}

/** The model's time on the critical path: every lead call and the synthesis in turn, and one call per round. */
const modelCriticalMs = (run: SwarmRun, callMs: number) => (run.leadCalls + 1 + run.rounds) * callMs;

function formatSection(commit: string, runs: SwarmRun[], callMs: number): string {
  const mean = (of: SwarmRun[], value: (run: SwarmRun) => number) => of.reduce((sum, run) => sum + value(run), 0) / of.length;
  const [fewer, more] = SEARCHES.map((searches) => runs.filter((run) => run.searches === searches));
  const writesPerTurn = (mean(more, (run) => run.writes) - mean(fewer, (run) => run.writes)) / (mean(more, (run) => run.turns) - mean(fewer, (run) => run.turns));
  const shareOf = (run: SwarmRun) => (run.wallMs - modelCriticalMs(run, callMs)) / run.wallMs;
  const share = mean(runs, shareOf);
  const met = (value: number, target: number) => (value <= target ? 'met' : 'missed');
  return [
    `## Swarm (\`bench/swarm/run.ts\`), ${new Date().toISOString().slice(0, 19)}`,
    '',
    `${machineLine()}; commit ${commit}; ${SWARMS} swarms of each kind one at a time after one warm-up; 5 agents, each searching ${SEARCHES.join(' or ')} times, `
      + `then messaging a teammate or publishing, then going idle; mock model answering after ${MODEL_DELAY_MS} ms per call (${callMs.toFixed(1)} ms `
      + 'measured alone, in-process), fixture web search.',
    '',
    '| searches per agent | wall ms | model calls | lead calls | rounds | agent turns | messages | write transactions | model on the critical path ms | gateway share |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...runs.map((run) => `| ${run.searches} | ${run.wallMs.toFixed(0)} | ${run.modelCalls} | ${run.leadCalls} | ${run.rounds} | ${run.turns} | ${run.messages} | ${run.writes} | `
      + `${modelCriticalMs(run, callMs).toFixed(0)} | ${(100 * shareOf(run)).toFixed(1)} % |`),
    '',
    `Write transactions per agent turn: ${writesPerTurn.toFixed(2)} (the difference between the two kinds of swarm over the difference in turns). `
      + `Targets (issue 28): ≤ ${TARGETS.writeTransactionsPerTurn} write transactions per agent turn (${met(writesPerTurn, TARGETS.writeTransactionsPerTurn)}); `
      + `gateway share of wall time ≤ ${TARGETS.gatewayShare * 100} % (${(share * 100).toFixed(1)} %: ${met(share, TARGETS.gatewayShare)}).`,
  ].join('\n');
}

const log = (message: string) => console.error(`[bench] ${message}`);

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exit(1);
});
