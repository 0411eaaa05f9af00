/**
 * Write transactions per `mode: simple` task, and what each one is (issue 30, Scope 8). The real gateway on a
 * fresh embedded Postgres logging every statement with its virtual transaction id; `tasks` simple tasks are
 * submitted (64 clients) in one session or each in its own, drained, then every transaction that took a
 * transaction id in the window is named by its statements. Records nothing.
 * Usage: node bench/submit/simple-writes.ts [tasks=200] [--own-sessions]
 */
import path from 'node:path';
import { Writable } from 'node:stream';
import type pg from 'pg';
import { pino } from 'pino';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres.ts';
import { startChildServer, type ChildServer } from './child-server.ts';
import { withPool } from './database-pool.ts';
import { databaseWorkBetween, markDatabase } from './database-work.ts';
import { freePort } from './free-port.ts';
import { createDataDir, removeDataDir, serviceEnvironment, serviceSettings } from './gateway-process.ts';
import { runLoad } from './load.ts';
import { CONNECTIONS } from './measure-load.ts';
import { waitUntilIdle } from './task-completions.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DRAIN_CAP_MS = 120_000;
const LOG_PREFIX = 'XACT|%p|%v|%x|';

async function main(argv: string[]): Promise<void> {
  const tasks = Number(argv.find((arg) => /^\d+$/.test(arg)) ?? 200);
  const ownSessions = argv.includes('--own-sessions');
  const lines: string[] = [];
  // Postgres's output reaches the embedded server's logger at debug level, one line per record.
  const capture = new Writable({ write(chunk: Buffer, _encoding, done) {
    for (const record of chunk.toString().split('\n').filter(Boolean)) {
      const line = (JSON.parse(record) as { line?: string }).line;
      if (line?.startsWith('XACT|')) lines.push(line);
      // A statement's later lines come without the prefix, indented.
      else if (line?.startsWith('\t') && lines.length > 0) lines[lines.length - 1] += ` ${line.trim()}`;
    }
    done();
  } });
  const dataDir = await createDataDir();
  const postgres = await startEmbeddedPostgres({ dataDir, port: await freePort(), logger: pino({ level: 'debug' }, capture) });
  let gateway: ChildServer | undefined;
  try {
    const databaseUrl = postgres.url;
    await withPool(databaseUrl, (pool) => pool.query(`alter system set log_line_prefix = '${LOG_PREFIX}'`).then(() => pool.query('select pg_reload_conf()')));
    const port = await freePort();
    gateway = await startChildServer({
      script: 'src/main.ts', args: ['serve'], cwd: ROOT, port, readyTimeoutMs: 120_000,
      env: serviceEnvironment({ PORT: String(port), DATABASE_URL: databaseUrl }, serviceSettings()),
    });
    const url = gateway.url;
    const sessionId = ownSessions ? undefined : `bench-simple-writes-${Date.now()}`;
    const fields = { mode: 'simple', ...(sessionId ? { session_id: sessionId } : {}) };
    await runLoad({ url: `${url}/api/v1/tasks`, connections: CONNECTIONS, durationSeconds: 0, amount: 20, label: 'warm', fields });
    const result = await withPool(databaseUrl, async (pool) => {
      await waitUntilIdle(pool, DRAIN_CAP_MS);
      await setStatementLogging(pool, 'all');
      const before = await markDatabase(pool);
      await runLoad({ url: `${url}/api/v1/tasks`, connections: CONNECTIONS, durationSeconds: 0, amount: tasks, label: 'bench', fields });
      await waitUntilIdle(pool, DRAIN_CAP_MS);
      const work = await databaseWorkBetween(pool, before, await markDatabase(pool));
      await setStatementLogging(pool, 'none');
      return work;
    });
    console.log(`${tasks} mode:simple tasks (${ownSessions ? 'each in its own session' : 'one session'}): ${(result.writeTransactions / tasks).toFixed(2)} write transactions per task, ${(result.walBytes / tasks / 1024).toFixed(1)} WAL kB per task`);
    console.log(describeTransactions(lines, tasks));
  } finally {
    await gateway?.stop();
    await postgres.stop();
    await removeDataDir(dataDir);
  }
}

async function setStatementLogging(pool: pg.Pool, level: 'all' | 'none'): Promise<void> {
  await pool.query(`alter system set log_statement = '${level}'`);
  await pool.query('select pg_reload_conf()');
  await new Promise((resolve) => setTimeout(resolve, 300));
}

/** Groups statements by (backend, virtual transaction); a transaction that took an id wrote. Names each by its statements. */
function describeTransactions(lines: string[], tasks: number): string {
  const transactions = new Map<string, { wrote: boolean; statements: string[] }>();
  let current: { wrote: boolean; statements: string[] } | undefined;
  for (const line of lines) {
    const match = /^XACT\|(\d+)\|([^|]*)\|(\d+)\|(?:LOG|STATEMENT):\s+(?:statement|execute [^:]*):\s?(.*)$/.exec(line);
    if (!match) {
      if (current && line.startsWith('XACT|')) current = undefined;
      continue;
    }
    const [, pid, vxid, xid, statement] = match;
    const key = `${pid}|${vxid}`;
    current = transactions.get(key) ?? { wrote: false, statements: [] };
    transactions.set(key, current);
    if (xid !== '0') current.wrote = true;
    current.statements.push(statement.replace(/\s+/g, ' ').slice(0, 90));
  }
  const kinds = new Map<string, number>();
  for (const transaction of transactions.values()) {
    // A statement is logged as it starts, before it takes an id: a transaction of one write shows none.
    if (!transaction.wrote && !transaction.statements.some(isWrite)) continue;
    const name = transaction.statements.filter((statement) => !/^(begin|commit|select 1|set |show )/i.test(statement)).slice(0, 5).join(' ; ');
    kinds.set(name, (kinds.get(name) ?? 0) + 1);
  }
  return [...kinds.entries()].sort((left, right) => right[1] - left[1])
    .map(([name, count]) => `${(count / tasks).toFixed(2).padStart(6)}  ${count.toString().padStart(5)}  ${name}`).join('\n');
}

const isWrite = (statement: string) => /\b(insert|update|delete)\b|append_task_event|pg_notify|store_task|submit_task|take_stream_lease/i.test(statement);

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
