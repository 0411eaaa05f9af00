import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import pg from 'pg';
import { startGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';

// Each test has its gateway and database of its own and spends most of its time waiting (on tasks that sleep, on a
// restart): two at a time.
describe('durability across kill -9', { concurrency: 2 }, () => {
  // A process with free workers starts each task's workflow at once; beyond them it enqueues (issue 13).
  const PATHS: Array<{ name: string; env: Record<string, string>; queued: (count: number) => boolean }> = [
    { name: 'started directly', env: { TENANT_WORKER_SHARE: '1' }, queued: (count: number) => count === 0 },
    { name: 'mostly taken from the queue', env: { WORKER_CONCURRENCY: '4', TENANT_WORKER_SHARE: '1' }, queued: (count: number) => count >= 10 },
  ];

  for (const path of PATHS) test(`kill -9 with 20 tasks in flight (${path.name}): after a restart each completes exactly once`, async (t) => {
    const gateway = await startGateway(t, { env: path.env });
    const submissions = await Promise.all(Array.from({ length: 20 }, (_, index) =>
      gateway.request('POST', '/api/v1/tasks', { query: `durable task ${index}`, context: { mock_delay_ms: 4000 } })));
    const taskIds = submissions.map((answer) => answer.body.task_id as string);
    assert.ok(submissions.every((answer) => answer.status === 200));
    const { rows: [{ queued }] } = await gateway.sql.query(`select count(*)::int as queued from dbos.workflow_status where workflow_uuid = any($1) and queue_name is not null`, [taskIds]);
    assert.ok(path.queued(queued), `${queued} of 20 workflows went through the queue`);

    // Kill once some answers are streaming, so the crash lands mid-step.
    await waitFor('tasks to be running', async () => {
      const { rows } = await gateway.sql.query(`select count(*)::int as count from task_events where type = 'LLM_PARTIAL' and task_id = any($1)`, [taskIds]);
      return rows[0].count >= 5 ? true : undefined;
    });
    await gateway.kill('SIGKILL');
    const { rows: unfinished } = await gateway.sql.query(`select count(*)::int as count from tasks where status <> 'COMPLETED' and id = any($1)`, [taskIds]);
    assert.ok(unfinished[0].count > 0, 'the crash interrupted tasks');
    await gateway.restart();

    for (const taskId of taskIds) {
      const task = await waitForTask(gateway, taskId, 60_000);
      assert.equal(task.status, 'TASK_STATUS_COMPLETED');
      assert.match(task.result, /Mock answer to "durable task/);
    }
    // The engine counts every start of a workflow: 2 for one recovered once.
    const { rows: [starts] } = await gateway.sql.query(`select min(recovery_attempts)::int as least, max(recovery_attempts)::int as most
      from dbos.workflow_status where workflow_uuid = any($1)`, [taskIds]);
    assert.equal(starts.most, 2, 'the tasks in flight at the crash were recovered once, no more');
    if (queued === 0) assert.equal(starts.least, 2, 'every task started directly was in flight at the crash');
    const { rows } = await gateway.sql.query(`
      select t.id,
        (select count(*)::int from usage_records u where u.task_id = t.id and u.agent_id = 'simple-agent') as usage_rows,
        (select count(*)::int from task_events e where e.task_id = t.id and e.type = 'LLM_OUTPUT' and e.agent_id = 'final_output') as final_outputs,
        (select count(*)::int from task_events e where e.task_id = t.id and e.type = 'WORKFLOW_COMPLETED') as completions,
        (select count(*)::int from task_events e where e.task_id = t.id and e.type = 'STREAM_END') as stream_ends
      from tasks t where t.id = any($1)`, [taskIds]);
    assert.equal(rows.length, 20);
    for (const row of rows) {
      assert.deepEqual([row.usage_rows, row.final_outputs, row.completions, row.stream_ends], [1, 1, 1, 1], `task ${row.id}`);
    }
    // The streamed deltas of a re-run step continue where the crash cut them: no text is repeated or lost.
    const { rows: streams } = await gateway.sql.query(`
      select t.id, t.result, string_agg(e.message, '' order by e.seq) as streamed,
        (select array_agg(seq order by seq) from task_events x where x.task_id = t.id) as seqs
      from tasks t join task_events e on e.task_id = t.id and e.type = 'LLM_PARTIAL'
      where t.id = any($1) group by t.id, t.result`, [taskIds]);
    for (const stream of streams) {
      assert.equal(stream.streamed, stream.result, `task ${stream.id}`);
      assert.deepEqual(stream.seqs, stream.seqs.map((_: number, index: number) => index + 1), 'seq stays gap-free');
    }
  });

  // With no direct worker (WORKER_CONCURRENCY=1 leaves its one worker to the queue), the sweep enqueues instead.
  const SWEEP_PATHS: Array<{ name: string; env: Record<string, string>; queue: string | null }> = [
    { name: 'started directly', env: {}, queue: null },
    { name: 'enqueued', env: { WORKER_CONCURRENCY: '1' }, queue: 'agentgate-tasks' },
  ];

  for (const path of SWEEP_PATHS) test(`a task row whose start was lost to a crash is ${path.name} at start-up and completes`, async (t) => {
    const gateway = await startGateway(t, { env: path.env });
    const taskId = randomUUID();
    const sessionId = randomUUID();
    await gateway.sql.query(`insert into sessions (id, tenant_id, user_id, token_budget)
      values ($1, '00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-000000000002', 1000)`, [sessionId]);
    await gateway.sql.query(`insert into tasks (id, tenant_id, user_id, session_id, query, status)
      values ($1, '00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-000000000002', $2, 'orphaned query', 'QUEUED')`, [taskId, sessionId]);
    await gateway.kill('SIGKILL');
    await gateway.restart();
    const task = await waitForTask(gateway, taskId);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED');
    assert.match(task.result, /orphaned query/);
    const { rows: [workflow] } = await gateway.sql.query('select queue_name from dbos.workflow_status where workflow_uuid = $1', [taskId]);
    assert.equal(workflow.queue_name, path.queue);
  });

  // A simple answer that ended its task leaves no step record (one write fewer, issue 30): the task row is the
  // record, so a crash between the answer's commit and the workflow's end must not make the re-run answer again.
  test('kill -9 after a simple task\'s answer committed and before its workflow ended: the re-run ends the workflow without answering again', async (t) => {
    const gateway = await startGateway(t);
    const hold = await holdWorkflowEnds(gateway.databaseUrl);
    const answer = await gateway.request('POST', '/api/v1/tasks', { query: 'answered once', mode: 'simple', context: { mock_delay_ms: 300 } });
    assert.equal(answer.status, 200, answer.text);
    const taskId: string = answer.body.task_id;
    await waitFor('the workflow\'s end to wait', async () => (await hold.waiting() ? true : undefined));
    const before = await taskWrites(gateway, taskId);
    assert.equal(before.status, 'COMPLETED');
    assert.equal(before.step_records, 0, 'the answer that ended the task was not recorded by the engine');

    await gateway.kill('SIGKILL');
    await hold.release();
    await gateway.restart();
    await waitFor('the recovered workflow to end', async () => {
      const { rows: [workflow] } = await gateway.sql.query('select status, recovery_attempts from dbos.workflow_status where workflow_uuid = $1', [taskId]);
      return workflow.status === 'SUCCESS' ? workflow : undefined;
    }, 60_000);
    const after = await taskWrites(gateway, taskId);
    assert.deepEqual(after, before, 'the re-run wrote nothing: no second answer, usage row or event');
    const { rows: [{ recovery_attempts: starts }] } = await gateway.sql.query('select recovery_attempts from dbos.workflow_status where workflow_uuid = $1', [taskId]);
    assert.equal(Number(starts), 2, 'the workflow was recovered');
    const timeline = await gateway.request('GET', `/api/v1/tasks/${taskId}/timeline`);
    assert.deepEqual(timeline.body.steps.map((step: any) => [step.name, step.status]), [['answer', 'completed']], 'the timeline tells the answer from the task\'s times');
    assert.ok(timeline.body.steps[0].duration_ms >= 300);
  });
});

/** What a task has written: its row's last change, its events and usage, and the engine's step records. */
async function taskWrites(gateway: Gateway, taskId: string) {
  const { rows: [row] } = await gateway.sql.query(`select t.status, t.updated_at, t.result,
      (select count(*)::int from task_events e where e.task_id = t.id) as events,
      (select count(*)::int from usage_records u where u.task_id = t.id) as usage_rows,
      (select count(*)::int from dbos.operation_outputs o where o.workflow_uuid = t.id::text) as step_records
    from tasks t where t.id = $1`, [taskId]);
  return row;
}

/** Holds every workflow's end (its SUCCESS update) until released, so a kill -9 falls just before it. */
async function holdWorkflowEnds(databaseUrl: string): Promise<{ waiting(): Promise<boolean>; release(): Promise<void> }> {
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  await holder.query(`
    create function hold_workflow_end() returns trigger language plpgsql as $$
    begin
      if new.status = 'SUCCESS' then perform pg_advisory_xact_lock(4243); end if;
      return new;
    end $$;
    create trigger hold_workflow_end before update on dbos.workflow_status for each row execute function hold_workflow_end()`);
  await holder.query('select pg_advisory_lock(4243)');
  return {
    async waiting() {
      const { rows } = await holder.query(`select count(*)::int as count from pg_locks where locktype = 'advisory' and objid = 4243 and not granted`);
      return rows[0].count > 0;
    },
    async release() {
      // Unlocked first: the held update's transaction (of a killed process) must end before the trigger can go.
      await holder.query('select pg_advisory_unlock(4243)');
      await holder.query('drop trigger hold_workflow_end on dbos.workflow_status; drop function hold_workflow_end()');
      await holder.end();
    },
  };
}
