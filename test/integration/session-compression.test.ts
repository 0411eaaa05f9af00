import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { useGateway, waitForTask } from '../helpers/gateway.ts';

// mock-small (the default model) has an 8,192-token window: compression triggers above 80 % (6,553 tokens)
// and aims at 50 % (4,096). Each turn adds a ~750-token query and a ~60-token answer (chars / 4), so the
// prompt of turn 9 (8 earlier turns) is the first one over the trigger; the summary then holds until the
// messages added to the middle since push turn 14 over it again.
const CONTEXT_WINDOW = 8192;
const TURNS = 14;
const context = { primers_count: 2, recents_count: 4 };
const longQuery = (turn: number) => `turn ${turn}: ${'lorem '.repeat(500)}`;

describe('context compression of a long session', () => {
  const gateway = useGateway();
  const taskIds: string[] = [];
  const answers: string[] = [];

  const agentInputTokens = async (taskId: string) => (await gateway().sql.query(
    `select input_tokens from usage_records where task_id = $1 and agent_id = 'simple-agent'`, [taskId])).rows[0].input_tokens;

  before(async () => {
    for (let turn = 1; turn <= TURNS; turn += 1) {
      const submitted = await gateway().request('POST', '/api/v1/tasks', { query: longQuery(turn), session_id: 'long-chat', context });
      const task = await waitForTask(gateway(), submitted.body.task_id);
      assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
      taskIds.push(task.task_id);
      answers.push(task.result);
    }
  });

  it('sends the whole history while it fits', async () => {
    assert.match(answers[7], /after 14 earlier messages/);
    assert.ok(await agentInputTokens(taskIds[7]) <= CONTEXT_WINDOW * 0.8);
  });

  it('compresses once at turn 9: one stored summary, one DATA_PROCESSING event, one summariser call', async () => {
    const summaries = await summariesOf('long-chat');
    assert.equal(summaries[0].task_id, taskIds[8], 'turn 9 was the first over the trigger');
    assert.equal(summaries[0].summarized_messages, 10, 'the middle: turns 2 to 6');
    assert.deepEqual([summaries[0].through_task_id, summaries[0].through_part], [taskIds[5], 1]);

    const events = await compressionEvents();
    assert.equal(events[0].task_id, taskIds[8]);
    const { payload } = events[0];
    assert.deepEqual([payload.action, payload.new_messages, payload.primers, payload.recents, payload.context_window], ['compressed', 10, 2, 4, CONTEXT_WINDOW]);
    assert.ok(payload.estimated_tokens_before > CONTEXT_WINDOW * 0.8);
    assert.ok(payload.estimated_tokens_after <= CONTEXT_WINDOW * 0.5);

    const { rows: calls } = await gateway().sql.query(
      `select task_id from usage_records where task_id = any($1) and agent_id = 'context_compressor' order by id`, [taskIds]);
    assert.deepEqual(calls.map((call) => call.task_id), [taskIds[8], taskIds[13]], 'each summary is a real model call with its own usage row');
  });

  it('keeps primers and recents verbatim, and the prompt fits the window again', async () => {
    assert.match(answers[8], /after 6 earlier messages/, '2 primers + 4 recents');
    assert.match(answers[8], /previous assistant turn/);
    const before = await agentInputTokens(taskIds[7]);
    const after = await agentInputTokens(taskIds[8]);
    assert.ok(after < before, `turn 9 sent ${after} tokens, turn 8 ${before}`);
    assert.ok(after <= CONTEXT_WINDOW * 0.5 + 200, `turn 9 sent ${after} tokens`);
  });

  it('reuses the summary while it fits, with the newer middle messages verbatim', async () => {
    for (const turn of [10, 11, 12, 13]) {
      assert.match(answers[turn - 1], new RegExp(`after ${6 + 2 * (turn - 9)} earlier messages`), `turn ${turn}`);
      assert.ok(await agentInputTokens(taskIds[turn - 1]) <= CONTEXT_WINDOW * 0.8, `turn ${turn}`);
    }
  });

  it('summarises again only when the new middle messages no longer fit, folding in the earlier summary', async () => {
    const summaries = await summariesOf('long-chat');
    assert.deepEqual(summaries.map((summary) => summary.task_id), [taskIds[8], taskIds[13]]);
    assert.equal(summaries[1].summarized_messages, 20, 'the first 10 and turns 7 to 11');
    assert.deepEqual((await compressionEvents()).map((event) => event.task_id), [taskIds[8], taskIds[13]]);
    assert.match(answers[13], /after 6 earlier messages/);
  });

  it('when a budget leaves no room for the summary, the middle is left out and the task still answers', async () => {
    const ids: string[] = [];
    for (let turn = 1; turn <= 9; turn += 1) {
      // Turn 9's summariser call needs ~4,200 input tokens; its agent call with primers and recents ~3,300.
      const turnContext = turn === 9 ? { ...context, token_budget: 4000 } : context;
      const submitted = await gateway().request('POST', '/api/v1/tasks', { query: longQuery(turn), session_id: 'tight-chat', context: turnContext });
      const task = await waitForTask(gateway(), submitted.body.task_id);
      assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
      ids.push(task.task_id);
      if (turn === 9) assert.match(task.result, /after 6 earlier messages/);
    }
    const { rows } = await gateway().sql.query(
      `select payload from task_events where task_id = $1 and type = 'DATA_PROCESSING' and agent_id = 'context_compressor'`, [ids[8]]);
    assert.deepEqual(rows.map((row) => [row.payload.action, row.payload.omitted_messages, row.payload.reason]), [['omitted', 10, 'token budget exhausted']]);
    assert.deepEqual(await summariesOf('tight-chat'), []);
  });

  async function summariesOf(externalId: string) {
    const { rows } = await gateway().sql.query(`
      select s.task_id, s.summarized_messages, s.through_task_id, s.through_part from session_summaries s
      join sessions x on x.id = s.session_id where x.external_id = $1 order by s.created_at`, [externalId]);
    return rows;
  }

  async function compressionEvents() {
    const { rows } = await gateway().sql.query(`
      select e.task_id, e.payload from task_events e join tasks t on t.id = e.task_id
      where e.task_id = any($1) and e.type = 'DATA_PROCESSING' and e.agent_id = 'context_compressor' order by t.created_at`, [taskIds]);
    return rows;
  }
});
