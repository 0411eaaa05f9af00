import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TaskView, agentStates, answerText, taskPlan, type TaskEvent } from '../../packages/sdk/src/index.ts';

let seq = 0;
const event = (type: string, agentId: string | null, fields: Partial<TaskEvent> = {}): TaskEvent => {
  seq += 1;
  return { workflow_id: 'w', type, agent_id: agentId, message: null, timestamp: `t${seq}`, seq, stream_id: `1-${seq}`, ...fields };
};
const partial = (agentId: string, delta: string, finalAnswer = false) =>
  event('LLM_PARTIAL', agentId, { delta, message: delta, payload: finalAnswer ? { final_answer: true } : {} });

test('a planned task: the plan, each agent\'s state and tokens, and the answer from the final output', () => {
  const events = [
    event('WORKFLOW_STARTED', 'orchestrator'),
    event('PROGRESS', 'orchestrator', { message: 'Planned 2 subtasks', payload: { stage: 'planned', plan: [{ id: 'a', name: 'first' }, { id: 'b', name: 'second' }], deps: [{ from: 'a', to: 'b' }], execution_strategy: 'sequential', complexity_score: 0.6 } }),
    event('AGENT_STARTED', 'a'), partial('a', 'alpha '), partial('a', 'text'),
    event('AGENT_COMPLETED', 'a', { payload: { input_tokens: 10, output_tokens: 5 } }),
    event('AGENT_STARTED', 'b'), event('TOOL_INVOKED', 'b', { message: 'calculator' }),
    event('ERROR_OCCURRED', 'b', { message: 'Agent b failed: boom' }),
    event('AGENT_STARTED', 'synthesis'), partial('synthesis', 'The ', true), partial('synthesis', 'answer', true),
  ];
  const live = new TaskView();
  for (const each of events) live.apply(each);
  assert.equal(live.answer, 'The answer', 'the streamed final answer before the final output arrives');
  assert.equal(live.status, 'running', 'an agent failing does not end the task');
  events.push(event('LLM_OUTPUT', 'final_output', { message: 'The answer.', response: 'The answer.' }), event('WORKFLOW_COMPLETED', 'orchestrator'));
  assert.equal(answerText(events), 'The answer.');
  assert.deepEqual(taskPlan(events), { subtasks: [{ id: 'a', name: 'first' }, { id: 'b', name: 'second' }], dependencies: [{ from: 'a', to: 'b' }], strategy: 'sequential', complexityScore: 0.6 });
  const agents = agentStates(events);
  assert.deepEqual(agents.get('a'), { id: 'a', status: 'completed', activity: '', text: 'alpha text', startedAt: 't3', completedAt: 't6', toolCalls: 0, inputTokens: 10, outputTokens: 5 });
  assert.equal(agents.get('b')?.status, 'failed');
  assert.equal(agents.get('b')?.toolCalls, 1);
  assert.ok(!agents.has('orchestrator'), 'the engine\'s own bookkeeping is not an agent');
});

test('parallel agents without a marked answer are not mixed into one; a task failure is the view\'s status and error', () => {
  const events = [event('AGENT_STARTED', 'x'), event('AGENT_STARTED', 'y'), partial('x', 'one '), partial('y', 'two '), partial('x', 'three')];
  assert.equal(answerText(events), '', 'two speakers, no final answer yet');
  assert.equal(answerText([event('AGENT_STARTED', 'solo'), partial('solo', 'only me')]), 'only me');
  const failed = new TaskView().apply(event('ERROR_OCCURRED', 'orchestrator', { message: 'wall clock', payload: { status: 'TIMEOUT' } }));
  assert.deepEqual([failed.status, failed.error], ['failed', 'wall clock']);
});
