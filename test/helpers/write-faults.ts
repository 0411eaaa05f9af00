import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chown, mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { honouringRetryAfter, waitFor, type Cleanup, type Gateway } from './gateway.ts';

const execFileAsync = promisify(execFile);

/**
 * A superuser session on a test's own Postgres, opened before a fault: it stays writable (the database's defaults
 * apply at a session's start) and so can undo a read-only switch it made.
 */
export async function adminSession(t: Cleanup, databaseUrl: string): Promise<pg.Client> {
  const admin = new pg.Client({ connectionString: databaseUrl });
  admin.on('error', () => {});
  await admin.connect();
  t.after(() => admin.end().catch(() => {}));
  return admin;
}

/**
 * What a failover to a standby (or a provider's storage-full switch) does to the gateway: every transaction that
 * writes fails with SQLSTATE 25006, and the sessions it had are cut. `false` undoes it the way a failover back
 * does: writable again, and the sessions opened meanwhile are cut too.
 */
export async function setReadOnly(admin: pg.Client, readOnly: boolean): Promise<void> {
  const { rows: [{ name }] } = await admin.query('select current_database() as name');
  await admin.query(readOnly
    ? `alter database ${name} set default_transaction_read_only = on`
    : `alter database ${name} reset default_transaction_read_only`);
  await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
}

/**
 * Makes the engine's record of a step fail as a read-only server refuses it (SQLSTATE 25006), while the gateway's
 * own writes go through: every step's record, or only those of the step named `step`. `refuseFor` starts a refusal
 * lasting that many seconds.
 */
export async function refusingStepRecords(sql: pg.Pool, step?: string): Promise<{ refuseFor(seconds: number): Promise<void> }> {
  await sql.query(`
    create table refuse_step_records (on_until timestamptz not null);
    create function refuse_step_records() returns trigger language plpgsql as $$
    begin
      if ${step === undefined ? 'true' : 'new.function_name = $step$' + step + '$step$'} and exists (select 1 from refuse_step_records where on_until > now()) then
        raise exception 'cannot execute INSERT in a read-only transaction' using errcode = '25006';
      end if;
      return new;
    end $$;
    create trigger refuse_step_records before insert on dbos.operation_outputs for each row execute function refuse_step_records()`);
  return {
    async refuseFor(seconds) {
      await sql.query(`insert into refuse_step_records values (now() + make_interval(secs => $1))`, [seconds]);
    },
  };
}

/** Submits five-agent DAG tasks (mock provider); each agent's answer takes `delayMs`. */
export async function submitDagTasks(gateway: Gateway, count: number, delayMs: number): Promise<string[]> {
  const subtasks = ['a1', 'a2', 'a3', 'a4', 'a5'].map((id) => ({ id, description: `part ${id}` }));
  // A retry needs no Idempotency-Key: a 503 never leaves a task behind (issue 26). Sending none also keeps the
  // idempotency table empty, which the disk-full test relies on (its first row needs a page the full disk refuses).
  const answers = await Promise.all(Array.from({ length: count }, (_, index) => honouringRetryAfter(() => gateway.request('POST', '/api/v1/tasks', {
    query: `five agents ${index}`, mode: 'standard',
    context: { mock_delay_ms: delayMs, mock_plan: { complexity_score: 0.8, subtasks, execution_strategy: 'parallel' } },
  }))));
  for (const answer of answers) assert.equal(answer.status, 200, answer.text);
  return answers.map((answer) => answer.body.task_id);
}

/** Waits until at least `minimum` of the tasks have an agent at work (past planning, before synthesis). */
export async function waitUntilAgentsRun(gateway: Gateway, taskIds: string[], minimum: number): Promise<void> {
  await waitFor('agents to be at work', async () => {
    const { rows } = await gateway.sql.query(`select count(distinct task_id)::int as count from task_events
      where type = 'AGENT_STARTED' and agent_id like 'a_' and task_id = any($1)`, [taskIds]);
    return rows[0].count >= minimum ? true : undefined;
  }, 60_000);
}

/**
 * Every task completed exactly once: one answer, one end, each of the five agents completed once and billed once,
 * gap-free events.
 */
export async function assertDagTasksCompletedOnce(gateway: Gateway, taskIds: string[]): Promise<void> {
  const { rows } = await gateway.sql.query(`
    select t.id, t.status, t.error, array_agg(e.seq order by e.seq) as seqs,
      (select count(*)::int from usage_records u where u.task_id = t.id and u.agent_id like 'a_') as agent_usage,
      count(*) filter (where e.type = 'AGENT_COMPLETED' and e.agent_id like 'a_')::int as agents_completed,
      count(*) filter (where e.type = 'WORKFLOW_COMPLETED')::int as completions,
      count(*) filter (where e.type = 'ERROR_OCCURRED')::int as failures,
      count(*) filter (where e.type = 'STREAM_END')::int as ends
    from tasks t join task_events e on e.task_id = t.id where t.id = any($1) group by t.id`, [taskIds]);
  assert.equal(rows.length, taskIds.length);
  for (const row of rows) {
    assert.deepEqual([row.status, row.agent_usage, row.agents_completed, row.completions, row.failures, row.ends],
      ['COMPLETED', 5, 5, 1, 0, 1], `task ${row.id} (${row.error})`);
    assert.deepEqual(row.seqs, row.seqs.map((_: number, index: number) => index + 1), `gap-free events of ${row.id}`);
  }
}

/** Waits until every task has ended, whatever its status. */
export async function waitForAllEnded(gateway: Gateway, taskIds: string[], timeoutMs: number): Promise<void> {
  await waitFor(`all ${taskIds.length} tasks to end`, async () => {
    const { rows } = await gateway.sql.query(`select count(*)::int as count from tasks where id = any($1) and status in ('COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT')`, [taskIds]);
    return rows[0].count === taskIds.length ? true : undefined;
  }, timeoutMs);
}

export interface SmallDisk {
  /** Where the tmpfs is mounted (owned by the Postgres server's user). */
  dir: string;
  /** Fills what is left of it, so that the next file extension fails with "No space left on device". */
  fill(): Promise<void>;
  /** Frees the space `fill` took. */
  free(): Promise<void>;
}

/**
 * A tmpfs of `sizeMb` for a Postgres tablespace: the database's files live on it, the server's WAL does not, so a
 * full disk refuses the writes that need new space (53100) instead of stopping the server. The reason instead
 * when this machine does not let the test mount one (not root, or in a container without the right).
 */
export async function mountSmallDisk(t: Cleanup, sizeMb: number, ownerOf: string): Promise<SmallDisk | string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agentgate-small-disk-'));
  try {
    await execFileAsync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir]);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    return `mounting a tmpfs is not permitted here: ${(error as Error).message.split('\n')[0]}`;
  }
  t.after(async () => {
    await execFileAsync('umount', ['-l', dir]).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  });
  const owner = await stat(ownerOf);
  await chown(dir, owner.uid, owner.gid);
  const filler = path.join(dir, 'filler');
  return {
    dir,
    async fill() {
      // Written until the disk refuses more (dd then fails, as expected), whatever the server adds meanwhile.
      await execFileAsync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1M']).catch((error: Error) => {
        if (!error.message.includes('No space left on device')) throw error;
      });
    },
    free: () => rm(filler, { force: true }),
  };
}
