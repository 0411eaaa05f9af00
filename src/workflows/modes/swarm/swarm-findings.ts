import { sql } from 'kysely';
import type { Db } from '../../../db/database.ts';
import type { ModelTextResult } from '../../../llm/stream-model-text.ts';
import type { SubtaskResult } from '../../team/subtask-agent.ts';
import type { Subtask } from '../../planning/plan.ts';
import { readAgents, readTasks, TURN_STEP_PREFIX } from './swarm-queries.ts';

export interface TeamFindings {
  results: SubtaskResult[];
  /** One per agent: what it worked on (its task's description), for the synthesis prompt. */
  subtasks: Subtask[];
}

/**
 * What each agent leaves for the answer: an idle agent's key findings; an agent stopped before it went idle (a
 * limit) leaves what it published, else what its tools returned; a failed agent its error (spec 4.2 rule 9: the
 * answer comes from the rest). Each finding is given as the answer of the agent's last model call.
 */
export async function collectFindings(db: Db, taskId: string, snippetChars: number): Promise<TeamFindings> {
  const [agents, tasks, published, returned, lastCalls] = await Promise.all([
    readAgents(db, taskId), readTasks(db, taskId), publishedBy(db, taskId), toolFindingsBy(db, taskId, snippetChars), lastCallOf(db, taskId),
  ]);
  const results = agents.flatMap((agent): SubtaskResult[] => {
    if (agent.status === 'failed') return [{ subtaskId: agent.name, ok: false, error: agent.error ?? 'failed' }];
    const text = agent.findings ?? published.get(agent.name) ?? returned.get(agent.name);
    const answeredBy = lastCalls.get(agent.name);
    if (!text || !answeredBy) return [];
    return [{ subtaskId: agent.name, ok: true, answer: { ...answeredBy, text, agentId: agent.name } }];
  });
  const describe = (assignment: string | null) => tasks.find((task) => task.id === assignment)?.description ?? 'its part of the request';
  const subtasks = agents.map((agent) => ({ id: agent.name, description: describe(agent.assignment), dependencies: [], suggestedTools: [], toolParameters: {} }));
  return { results, subtasks };
}

async function publishedBy(db: Db, taskId: string): Promise<Map<string, string>> {
  const rows = await db.selectFrom('swarm_workspace').select(['author', sql<string>`string_agg(content, ' ' order by round)`.as('content')])
    .where('task_id', '=', taskId).groupBy('author').execute();
  return new Map(rows.map((row) => [row.author, row.content]));
}

/** What the tools each agent asked for returned: a search's hits as title, url and snippet; other output cut to a snippet. */
async function toolFindingsBy(db: Db, taskId: string, snippetChars: number): Promise<Map<string, string>> {
  const rows = await db.selectFrom('tool_calls').select(['call_key', 'output'])
    .where('task_id', '=', taskId).where('error', 'is', null).where('call_key', 'like', `${TURN_STEP_PREFIX}%:c0`)
    .orderBy('created_at').execute();
  const byAgent = new Map<string, string[]>();
  for (const row of rows) {
    const agent = row.call_key.slice(TURN_STEP_PREFIX.length).split(':')[0];
    byAgent.set(agent, [...byAgent.get(agent) ?? [], describeOutput(row.output, snippetChars)]);
  }
  return new Map([...byAgent].map(([agent, parts]) => [agent, `Tools returned: ${parts.join(' ')}`]));
}

function describeOutput(output: unknown, snippetChars: number): string {
  const results = (output as { results?: unknown } | null)?.results;
  if (!Array.isArray(results)) return JSON.stringify(output).slice(0, snippetChars);
  return results.map((hit: { title?: string; url?: string; snippet?: string }) => `${hit.url ?? ''} ${hit.title ?? ''}: ${(hit.snippet ?? '').slice(0, 200)}`).join('; ');
}

async function lastCallOf(db: Db, taskId: string): Promise<Map<string, Omit<ModelTextResult, 'text'>>> {
  const rows = await db.selectFrom('swarm_turns').distinctOn('agent').select(['agent', 'answered_by'])
    .where('task_id', '=', taskId).orderBy('agent').orderBy('round', 'desc').execute();
  return new Map(rows.map((row) => [row.agent, row.answered_by as Omit<ModelTextResult, 'text'>]));
}

/** Tokens of every model call of the task so far (spec 8: max_total_tokens; metadata total_tokens). */
export async function tokensUsed(db: Db, taskId: string): Promise<number> {
  const row = await db.selectFrom('usage_records').select(sql<number>`coalesce(sum(input_tokens + output_tokens), 0)::bigint`.as('tokens'))
    .where('task_id', '=', taskId).executeTakeFirstOrThrow();
  return Number(row.tokens);
}
