import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskEvent } from '../../../console/src/api/task-event.ts';
import { layoutGraph, NODE_HEIGHT } from '../../../console/src/plan/layout.ts';
import { planGraphOf } from '../../../console/src/plan/plan-graph.ts';

/** Events as the stream sends them, numbered in order. */
function stream(...events: Array<[type: string, agent: string | null, payload?: Record<string, unknown>]>): TaskEvent[] {
  return events.map(([type, agent, payload], index) => ({
    workflow_id: 't', type, agent_id: agent, message: null, payload: payload ?? null, timestamp: '2026-11-26T00:00:00Z', seq: index + 1, stream_id: `${index + 1}-0`,
  }));
}

const statuses = (graph: ReturnType<typeof planGraphOf>) => Object.fromEntries(graph!.nodes.map((node) => [node.id, node.status]));
const running = { context: {}, status: 'running' };

describe('the console\'s plan graph, from a task\'s events', () => {
  it('a research task: phases in order, the agents of a round side by side, the writer of a gap round a node of its own', () => {
    const events = stream(
      ['RESEARCH_PLAN_READY', 'research-planner'], ['RESEARCH_PLAN_APPROVED', 'research-planner'],
      ['PROGRESS', 'research-refiner', { stage: 'query_refinement' }],
      ['PROGRESS', 'orchestrator', { stage: 'decomposition', subtasks: [{ id: 'research-1', description: 'geothermal' }, { id: 'research-2', description: 'tidal' }] }],
      ['AGENT_STARTED', 'research-1'], ['AGENT_STARTED', 'research-2'], ['AGENT_COMPLETED', 'research-1'], ['ERROR_OCCURRED', 'research-2'],
      ['AGENT_STARTED', 'research-synthesis'], ['AGENT_COMPLETED', 'research-synthesis'],
      ['PROGRESS', 'coverage-evaluator', { stage: 'coverage_eval_1' }], ['PROGRESS', 'subquery-generator', { stage: 'subquery_gen_1' }],
      ['AGENT_STARTED', 'gap1-research-1'], ['AGENT_STARTED', 'gap1-research-2'], ['AGENT_COMPLETED', 'gap1-research-1'],
      ['AGENT_STARTED', 'research-synthesis'],
      ['LLM_PARTIAL', 'final_output', { delta: 'x', final_answer: true }],
    );
    const graph = planGraphOf(events, { context: { force_research: true }, status: 'running' })!;
    assert.equal(graph.kind, 'research');
    assert.deepEqual(statuses(graph), {
      'research-planner': 'done', 'research-refiner': 'done', 'research-1': 'done', 'research-2': 'failed', 'research-synthesis': 'done',
      'coverage-evaluator': 'done', 'subquery-generator': 'done', 'gap1-research-1': 'done', 'gap1-research-2': 'done', 'research-synthesis#2': 'running',
    }, 'a phase still running when the next starts is done: the next waits for it');
    const into = (id: string) => graph.edges.filter((edge) => edge.to === id).map((edge) => edge.from).sort();
    assert.deepEqual(into('research-1'), ['research-refiner']);
    assert.deepEqual(into('research-synthesis'), ['research-1', 'research-2']);
    assert.deepEqual(into('research-synthesis#2'), ['gap1-research-1', 'gap1-research-2']);
    const layout = layoutGraph(graph);
    const layerOf = (id: string) => layout.nodes.find((node) => node.id === id)!.layer;
    assert.equal(layerOf('research-1'), layerOf('research-2'));
    assert.equal(layerOf('research-synthesis#2'), 7, 'below planner, refiner, agents, writer, coverage, subqueries and gap agents');
    const completed = planGraphOf(events, { context: { force_research: true }, status: 'completed' })!;
    assert.equal(statuses(completed)['research-synthesis#2'], 'done', 'a completed task leaves nothing running');
  });

  it('a swarm: the lead over its agents over the task list; a swarm that fell back to standard routing draws the team\'s plan', () => {
    const events = stream(
      ['PROGRESS', 'swarm-lead', { stage: 'planning' }],
      ['AGENT_STARTED', 'ada', { role: 'research', task_id: 'T1' }], ['AGENT_STARTED', 'ben', { role: 'research', task_id: 'T2' }],
      ['TASKLIST_UPDATED', 'swarm-lead', { tasks: [
        { id: 'T1', description: 'geothermal', status: 'completed', owner: 'ada', depends_on: [] },
        { id: 'T2', description: 'tidal', status: 'in_progress', owner: 'ben', depends_on: [] },
        { id: 'T3', description: 'compare', status: 'pending', owner: null, depends_on: ['T1', 'T2'] },
      ] }],
      ['AGENT_COMPLETED', 'ada'], ['MESSAGE_RECEIVED', 'user', { to: 'swarm-lead' }],
    );
    const graph = planGraphOf(events, { context: { force_swarm: true }, status: 'running' })!;
    assert.equal(graph.kind, 'swarm');
    assert.deepEqual(statuses(graph), { 'swarm-lead': 'running', ada: 'done', ben: 'running', 'task:T1': 'done', 'task:T2': 'running', 'task:T3': 'planned' });
    assert.deepEqual(graph.edges.filter((edge) => edge.to === 'task:T3').map((edge) => edge.from).sort(), ['swarm-lead', 'task:T1', 'task:T2']);
    assert.equal(layoutGraph(graph).nodes.find((node) => node.id === 'task:T3')!.layer, 3, 'after the tasks it depends on');

    const fellBack = stream(['PROGRESS', 'orchestrator', { stage: 'planned', plan: [{ id: 'task-1', name: 'answer' }], deps: [] }], ['AGENT_STARTED', 'task-1']);
    const team = planGraphOf(fellBack, { context: { force_swarm: true }, status: 'running' })!;
    assert.equal(team.kind, 'dag');
    assert.deepEqual(statuses(team), { 'task-1': 'running' });
  });

  it('a DAG follows the last plan announced (an approver\'s edit) and ignores events before it; a cycle still lays out', () => {
    const events = stream(
      ['ROLE_ASSIGNED', 'b'],
      ['PROGRESS', 'orchestrator', { stage: 'planned', plan: [{ id: 'a', name: 'A' }, { id: 'b', name: 'B' }], deps: [{ from: 'a', to: 'b' }] }],
      ['PROGRESS', 'orchestrator', { stage: 'planned', plan: [{ id: 'a', name: 'A' }, { id: 'c', name: 'C' }], deps: [{ from: 'a', to: 'c' }, { from: 'c', to: 'a' }] }],
      ['AGENT_STARTED', 'a'],
    );
    const graph = planGraphOf(events, running)!;
    assert.deepEqual(statuses(graph), { a: 'running', c: 'planned' });
    const layout = layoutGraph(graph);
    assert.equal(layout.nodes.length, 2);
    assert.ok(layout.height >= NODE_HEIGHT && layout.nodes.every((node) => Number.isFinite(node.x) && Number.isFinite(node.y)));
    assert.equal(planGraphOf(stream(['AGENT_STARTED', 'simple-agent']), running), undefined, 'a task without a plan has no graph');
  });
});
