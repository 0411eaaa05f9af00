import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { composeSwarmAnswer } from '../../../src/llm/mock-swarm.ts';

const ask = (purpose: string, state: unknown, script: Record<string, unknown> = {}) => JSON.parse(composeSwarmAnswer({
  prompt: [{ role: 'user', content: [{ type: 'text', text: `Request: x\n\n## State\n${JSON.stringify(state)}` }] }],
  providerOptions: { mock: { purpose, script } },
} as unknown as LanguageModelV3CallOptions)!);

const leadState = (overrides: Record<string, unknown>) => ({ query: 'q', round: 1, tasks: [], agents: [], humanMessages: [], ...overrides });
const agentState = (overrides: Record<string, unknown>) => ({ name: 'ada', task: { id: 'T1', description: 'rivers' }, teammates: [{ name: 'ben' }], tools: ['web_search'], history: [], inbox: [], ...overrides });

describe('the mock as a swarm partner', () => {
  it('plans one task per clause of the request and spawns an agent for each', () => {
    const decision = ask('swarm-lead', leadState({ query: 'How do geothermal plants make electricity, and how does tidal power work?', round: 0 }));
    assert.deepEqual(decision.actions[0].tasks.map((task: any) => task.id), ['T1', 'T2']);
    assert.deepEqual(decision.actions.slice(1).map((action: any) => [action.type, action.name, action.task_id]), [['spawn_agent', 'ada', 'T1'], ['spawn_agent', 'ben', 'T2']]);
  });

  it('passes a human message on, gives open tasks to idle agents, and ends once every task is done', () => {
    const open = ask('swarm-lead', leadState({
      humanMessages: ['be brief'], agents: [{ name: 'ada', status: 'idle' }],
      tasks: [{ id: 'T1', status: 'completed', depends_on: [] }, { id: 'T2', status: 'pending', depends_on: ['T1'] }],
    }));
    assert.match(open.reasoning, /The user wrote: "be brief"/);
    assert.deepEqual(open.actions, [
      { type: 'broadcast', message: 'From the user: be brief' },
      { type: 'interim_reply', message: 'Noted: "be brief". The team takes it into account.' },
      { type: 'assign_task', name: 'ada', task_id: 'T2' },
    ]);
    const done = ask('swarm-lead', leadState({ agents: [{ name: 'ada', status: 'idle' }], tasks: [{ id: 'T1', status: 'completed', depends_on: [] }] }), { reply: 'r' });
    assert.deepEqual(done.actions, [{ type: 'done', reply: 'r' }]);
  });

  it('with read_findings, reads the findings files before closing, then answers from them', () => {
    const closing = { agents: [{ name: 'ada', status: 'idle' }], tasks: [{ id: 'T1', status: 'completed', depends_on: [] }], sessionFiles: ['findings/ada-T1.md', 'notes.md'], readsLeft: 3 };
    const read = ask('swarm-lead', leadState(closing), { read_findings: true });
    assert.deepEqual(read.actions, [{ type: 'file_read', paths: ['findings/ada-T1.md'] }]);
    const done = ask('swarm-lead', leadState({ ...closing, filesRead: [{ path: 'findings/ada-T1.md', content: 'Rhine: 1,230 km' }] }), { read_findings: true });
    assert.deepEqual(done.actions, [{ type: 'done', reply: 'What the team wrote down:\n- findings/ada-T1.md: Rhine: 1,230 km' }]);
    const noReadsLeft = ask('swarm-lead', leadState({ ...closing, readsLeft: 0 }), { read_findings: true });
    assert.deepEqual(noReadsLeft.actions, [{ type: 'done' }]);
  });

  it('an agent searches, messages the first teammate (when it comes first), publishes, then goes idle citing what it found', () => {
    const found = '{"results":[{"title":"Rhine","url":"https://corpus.example/rhine"}]}';
    const searched = [{ action: { action: 'tool_call' }, result: found }];
    assert.equal(ask('swarm-agent', agentState({})).action, 'tool_call');
    const message = ask('swarm-agent', agentState({ history: searched }));
    assert.deepEqual([message.action, message.to], ['send_message', 'ben']);
    assert.match(message.message, /Rhine \(https:\/\/corpus\.example\/rhine\)/);
    const published = ask('swarm-agent', agentState({ name: 'cleo', history: searched }));
    assert.equal(published.action, 'publish_data');
    const idle = ask('swarm-agent', agentState({ name: 'cleo', history: [...searched, { action: { action: 'publish_data' }, result: '' }], inbox: [{ sender: 'ada', body: 'hi' }] }));
    assert.equal(idle.action, 'idle');
    assert.match(idle.key_findings, /https:\/\/corpus\.example\/rhine.*ada said: hi/);
  });
});
