import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import { startGateway, useGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';

// One policy for a spent token budget (issue 27, scope 0; docs/decisions.md): in every mode the task pauses with
// reason `budget` where the refused model call was, nothing of it is reported failed, and once the budget is raised
// and the task resumed it completes. A budget of 20 tokens is refused by the first call of every mode (research:
// its refinement, a call inside a step; swarm: its lead's plan, or with more, an agent's turn inside a round).
const SPENT = 20;
const TWO_SUBTASKS = {
  complexity_score: 0.6, mode: 'standard', execution_strategy: 'parallel',
  subtasks: [
    { id: 'task-1', description: 'List three rivers', dependencies: [] },
    { id: 'task-2', description: 'List three mountains', dependencies: [] },
  ],
};

const MODES: Array<[string, Record<string, unknown>]> = [
  ['simple', { mode: 'simple', context: { token_budget: SPENT } }],
  ['DAG', { mode: 'standard', context: { token_budget: SPENT, mock_plan: TWO_SUBTASKS } }],
  ['supervisor', { mode: 'supervisor', context: { token_budget: SPENT, mock_plan: TWO_SUBTASKS } }],
  ['template', { context: { template: 'research-brief', token_budget: SPENT } }],
  ['research', { context: { force_research: true, research_strategy: 'standard', token_budget: SPENT } }],
  ['swarm, its lead\'s plan refused', { context: { force_swarm: true, token_budget: SPENT } }],
  // Enough for the plan, not for the round: an agent's turn is refused while its teammate's runs.
  ['swarm, an agent\'s turn refused', { context: { force_swarm: true, token_budget: 1500 } }],
];

async function eventTypes(gateway: Gateway, taskId: string): Promise<string[]> {
  return (await gateway.sql.query('select type from task_events where task_id = $1 order by seq', [taskId])).rows.map((row) => row.type);
}

describe('a spent token budget, mode by mode', () => {
  // The research row searches the offline corpus once resumed.
  const gateway = useGateway({ env: { WEB_SEARCH_PROVIDER: 'fixture' } });

  for (const [mode, submission] of MODES) {
    it(`${mode}: pauses for budget with nothing failed; raised and resumed, it completes once`, async () => {
      const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'List three rivers. List three mountains.', ...submission });
      assert.equal(submitted.status, 200, submitted.text);
      const taskId = submitted.body.task_id;
      const paused = await waitFor(`the ${mode} task to pause or end`, async () => {
        // The pause event and the task's status are two writes: wait for both (or for the end).
        const types = await eventTypes(gateway(), taskId);
        const task = (await gateway().request('GET', `/api/v1/tasks/${taskId}`)).body;
        const hasPaused = types.includes('WORKFLOW_PAUSED') && task.status !== 'TASK_STATUS_RUNNING';
        return hasPaused || types.includes('STREAM_END') ? { task, types } : undefined;
      });
      assert.equal(paused.task.status, 'TASK_STATUS_PAUSED', `ended instead: ${paused.task.error}`);
      const { rows: [spent] } = await gateway().sql.query('select coalesce(sum(total_tokens), 0)::int as tokens from usage_records where task_id = $1', [taskId]);
      assert.ok(spent.tokens <= Number((submission.context as { token_budget: number }).token_budget), `${spent.tokens} tokens spent within the budget`);
      assert.equal((await gateway().request('GET', `/api/v1/tasks/${taskId}/control-state`)).body.pause_reason, 'budget');
      assert.deepEqual(paused.types.filter((type) => type === 'ERROR_OCCURRED' || type === 'ERROR_RECOVERY'), [], 'no part failed or fell back');

      assert.equal((await gateway().request('PUT', `/api/v1/tasks/${taskId}/budget`, { token_budget: 1_000_000 })).status, 200);
      assert.equal((await gateway().request('POST', `/api/v1/tasks/${taskId}/resume`)).status, 202);
      const task = await waitForTask(gateway(), taskId, 60_000);
      assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
      const types = await eventTypes(gateway(), taskId);
      assert.equal(types.filter((type) => type === 'WORKFLOW_COMPLETED').length, 1);
      assert.deepEqual(types.filter((type) => type === 'ERROR_OCCURRED'), []);
    });
  }
});

// A swarm round sets aside an allowance for all its turns at once (round-reservation.ts), far more than they use: a
// budget that holds the swarm's calls (about 6,000 tokens here) must never pause it for what was merely set aside.
test('a swarm within its budget completes without a pause, whether its rounds reserve together (roomy) or each turn for itself (tight)', async (t) => {
  const gateway = await startGateway(t, { env: { WEB_SEARCH_PROVIDER: 'fixture' } });
  for (const tokenBudget of [12_000, 100_000]) {
    const submitted = await gateway.request('POST', '/api/v1/tasks', { query: 'List three rivers. List three mountains.', context: { force_swarm: true, token_budget: tokenBudget } });
    assert.equal(submitted.status, 200, submitted.text);
    const taskId = submitted.body.task_id;
    const task = await waitForTask(gateway, taskId, 60_000);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.ok(!(await eventTypes(gateway, taskId)).includes('WORKFLOW_PAUSED'), `budget ${tokenBudget}: not paused`);
    const { rows: [used] } = await gateway.sql.query('select coalesce(sum(total_tokens), 0)::int as tokens from usage_records where task_id = $1', [taskId]);
    assert.ok(used.tokens <= tokenBudget, `${used.tokens} tokens used of ${tokenBudget}`);
    const { rows: [held] } = await gateway.sql.query('select count(*)::int as n from token_reservations where task_id = $1', [taskId]);
    assert.equal(held.n, 0, 'the ended task holds no reservation');
  }
});

test('a budget pause inside a DAG agent that outlasts the task\'s timeout: raised and resumed, the task completes instead of timing out', async (t) => {
  const timeoutSeconds = 4;
  const gateway = await startGateway(t, { env: { TASK_TIMEOUT_SECONDS: String(timeoutSeconds) } });
  const submit = async (context: Record<string, unknown>) => {
    const submitted = await gateway.request('POST', '/api/v1/tasks', { query: 'List three rivers. List three mountains.', mode: 'standard', context: { mock_plan: TWO_SUBTASKS, mock_delay_ms: 200, ...context } });
    assert.equal(submitted.status, 200, submitted.text);
    return submitted.body.task_id as string;
  };
  // Answers that take a while (200 ms), so that a call past the deadline cannot finish before the deadline's timer fires.
  // What the decomposition costs, from a task with room: a budget of that and a little more lets the decomposition
  // run and refuses the agents after it, inside their steps.
  const reference = await submit({});
  await waitForTask(gateway, reference);
  const { rows: [decomposition] } = await gateway.sql.query(`select input_tokens + output_tokens as tokens from usage_records where task_id = $1 and agent_id = 'decompose'`, [reference]);
  const taskId = await submit({ token_budget: decomposition.tokens + 20 });

  const pausedAt = await waitFor('the task to pause at an agent', async () => {
    const { rows } = await gateway.sql.query(`select payload->>'checkpoint' as place from task_events where task_id = $1 and type = 'WORKFLOW_PAUSED'`, [taskId]);
    const task = (await gateway.request('GET', `/api/v1/tasks/${taskId}`)).body;
    return rows.length > 0 && task.status === 'TASK_STATUS_PAUSED' ? rows[0].place as string : undefined;
  });
  assert.match(pausedAt, /^task-[12]$/, 'the pause is inside an agent\'s step');
  const { rows: [{ started_at: startedAt }] } = await gateway.sql.query('select started_at from tasks where id = $1', [taskId]);
  await waitFor('the pause to outlast the task\'s timeout', async () => (Date.now() > startedAt.getTime() + (timeoutSeconds + 1) * 1000 ? true : undefined));
  assert.equal((await gateway.request('GET', `/api/v1/tasks/${taskId}`)).body.status, 'TASK_STATUS_PAUSED');

  assert.equal((await gateway.request('PUT', `/api/v1/tasks/${taskId}/budget`, { token_budget: 1_000_000 })).status, 200);
  assert.equal((await gateway.request('POST', `/api/v1/tasks/${taskId}/resume`)).status, 202);
  const task = await waitForTask(gateway, taskId, 60_000);
  assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
});
