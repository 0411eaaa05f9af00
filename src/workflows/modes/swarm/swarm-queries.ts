import { sql } from 'kysely';
import type { Db } from '../../../db/database.ts';
import type { SwarmAgentStatus, SwarmTaskStatus } from '../../../db/schema.ts';

// The swarm's shared state (migration 0028). Writes happen inside a turn's or the lead's step, keyed so that a re-run
// of the step writes nothing twice.

export interface SwarmAgent {
  name: string;
  role: string;
  status: SwarmAgentStatus;
  assignment: string | null;
  turns: number;
  findings: string | null;
  error: string | null;
  spawnedAt: Date;
  /** The tier the lead chose for its turns; null: the swarm's default. */
  modelTier: string | null;
  /** How long the swarm had been paused when the agent joined (its time limit counts from then, less later pauses). */
  pausedMsAtSpawn: number;
}

export interface SwarmTask {
  id: string;
  description: string;
  status: SwarmTaskStatus;
  owner: string | null;
  depends_on: string[];
}

export interface SwarmMessage {
  id: string;
  sender: string;
  recipient: string;
  body: string;
}

export interface WorkspaceEntry {
  author: string;
  topic: string;
  content: string;
  round: number;
}

/** A recorded turn: its action, what it gave back, and a tool's output when it called one. */
export interface RecordedTurn {
  round: number;
  action: unknown;
  result: string;
  toolOutput: unknown;
  toolError: string | null;
}

export const LEAD = 'lead';

export async function readAgents(db: Db, taskId: string): Promise<SwarmAgent[]> {
  const rows = await db.selectFrom('swarm_agents')
    .select(['name', 'role', 'status', 'assignment', 'turns', 'findings', 'error', 'spawned_at as spawnedAt', 'model_tier as modelTier', 'paused_ms_at_spawn as pausedMsAtSpawn'])
    .where('task_id', '=', taskId).orderBy('spawned_round').orderBy('name').execute();
  return rows.map((row) => ({ ...row, pausedMsAtSpawn: Number(row.pausedMsAtSpawn) }));
}

export async function readTasks(db: Db, taskId: string): Promise<SwarmTask[]> {
  return db.selectFrom('swarm_tasks').select(['id', 'description', 'status', 'owner', 'depends_on'])
    .where('task_id', '=', taskId).orderBy(sql`length(id)`).orderBy('id').execute();
}

/**
 * Unread messages for `recipient`: the human's at once; a teammate's from the round after it was sent, so what a turn
 * reads does not depend on which turn of the round committed first. The lead decides after the round's turns, so it
 * reads what they sent in the round.
 */
export async function readInbox(db: Db, taskId: string, recipient: string, round: number): Promise<SwarmMessage[]> {
  const readable = recipient === LEAD ? round + 1 : round;
  return db.selectFrom('swarm_messages').select(['id', 'sender', 'recipient', 'body'])
    .where('task_id', '=', taskId).where('recipient', '=', recipient).where('read_round', 'is', null)
    .where((where) => where.or([where('sent_round', 'is', null), where('sent_round', '<', readable)]))
    .orderBy('created_at').orderBy('id').execute();
}

/** Whether `recipient` has a message to read in `round` (readInbox's rule), without reading them. */
export async function hasUnread(db: Db, taskId: string, recipient: string, round: number): Promise<boolean> {
  return (await readInbox(db, taskId, recipient, round)).length > 0;
}

/**
 * The workspace's latest `entries`; for an agent's turn (`beforeRound`), those of the rounds before it, so that, as
 * with messages, what a turn reads does not depend on which turn of its round committed first.
 */
export async function readWorkspace(db: Db, taskId: string, entries: number, beforeRound?: number): Promise<WorkspaceEntry[]> {
  const rows = await db.selectFrom('swarm_workspace').select(['author', 'topic', 'content', 'round'])
    .where('task_id', '=', taskId).$if(beforeRound !== undefined, (query) => query.where('round', '<', beforeRound!)).orderBy('created_at', 'desc').orderBy('key', 'desc').limit(entries).execute();
  return rows.reverse();
}

/** An agent's turns so far, each with the output of the tool it called (tool_calls, under the turn's step key). */
export async function readTurns(db: Db, taskId: string, agent: string): Promise<RecordedTurn[]> {
  const { rows } = await sql<{ round: number; action: unknown; result: string; output: unknown; error: string | null }>`
    select t.round, t.action, t.result, c.output, c.error
    from swarm_turns t
    left join tool_calls c on c.task_id = t.task_id and c.call_key = ${TURN_STEP_PREFIX} || t.agent || ':' || t.round || ':c0'
    where t.task_id = ${taskId} and t.agent = ${agent}
    order by t.round`.execute(db);
  return rows.map((row) => ({ round: row.round, action: row.action, result: row.result, toolOutput: row.output, toolError: row.error }));
}

export async function readTurn(db: Db, taskId: string, agent: string, round: number): Promise<{ action: unknown; result: string; answered_by: unknown } | undefined> {
  return db.selectFrom('swarm_turns').select(['action', 'result', 'answered_by'])
    .where('task_id', '=', taskId).where('agent', '=', agent).where('round', '=', round).executeTakeFirst();
}

export const TURN_STEP_PREFIX = 'swarm:turn:';
/** An agent's turn's step; its tool calls are `<step>:c0` (the one it asked for) and `<step>:c1` (its findings file). */
export const turnStepName = (agent: string, round: number) => `${TURN_STEP_PREFIX}${agent}:${round}`;

export async function insertTurn(db: Db, taskId: string, turn: { agent: string; round: number; action: unknown; result: string; answeredBy: unknown }): Promise<void> {
  await db.insertInto('swarm_turns')
    .values({ task_id: taskId, agent: turn.agent, round: turn.round, action: JSON.stringify(turn.action), result: turn.result, answered_by: JSON.stringify(turn.answeredBy) })
    .onConflict((conflict) => conflict.columns(['task_id', 'agent', 'round']).doNothing()).execute();
}

/** Messages are keyed by sender, round and position, so a re-run of the step that sends them inserts none twice. */
export async function insertMessages(db: Db, taskId: string, messages: Array<SwarmMessage & { sentRound: number | null }>): Promise<void> {
  if (messages.length === 0) return;
  await db.insertInto('swarm_messages')
    .values(messages.map((message) => ({ task_id: taskId, id: message.id, sender: message.sender, recipient: message.recipient, body: message.body, sent_round: message.sentRound })))
    .onConflict((conflict) => conflict.columns(['task_id', 'id']).doNothing()).execute();
}

export async function markRead(db: Db, taskId: string, ids: string[], round: number): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('swarm_messages').set({ read_round: round })
    .where('task_id', '=', taskId).where('id', 'in', ids).where('read_round', 'is', null).execute();
}

export async function countSent(db: Db, taskId: string, sender: string): Promise<number> {
  const row = await db.selectFrom('swarm_messages').select(sql<number>`count(*)::int`.as('sent'))
    .where('task_id', '=', taskId).where('sender', '=', sender).executeTakeFirstOrThrow();
  return row.sent;
}

export async function insertWorkspaceEntry(db: Db, taskId: string, key: string, entry: WorkspaceEntry): Promise<void> {
  await db.insertInto('swarm_workspace').values({ task_id: taskId, key, ...entry })
    .onConflict((conflict) => conflict.columns(['task_id', 'key']).doNothing()).execute();
}

export interface NewAgent { name: string; role: string; assignment: string | null; modelTier: string | null; pausedMs: number }

export async function insertAgent(db: Db, taskId: string, agent: NewAgent, round: number): Promise<boolean> {
  const inserted = await db.insertInto('swarm_agents')
    .values({
      task_id: taskId, name: agent.name, role: agent.role, status: 'active', assignment: agent.assignment, spawned_round: round,
      model_tier: agent.modelTier, paused_ms_at_spawn: String(agent.pausedMs),
    })
    .onConflict((conflict) => conflict.columns(['task_id', 'name']).doNothing()).executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function updateAgent(db: Db, taskId: string, name: string, change: Partial<Pick<SwarmAgent, 'status' | 'assignment' | 'findings' | 'error'>> & { turns?: number }): Promise<void> {
  await db.updateTable('swarm_agents').set(change).where('task_id', '=', taskId).where('name', '=', name).execute();
}

export async function upsertTask(db: Db, taskId: string, task: { id: string; description: string; depends_on: string[] }, createdBy: string): Promise<void> {
  await db.insertInto('swarm_tasks')
    .values({ task_id: taskId, id: task.id, description: task.description, status: 'pending', depends_on: task.depends_on, created_by: createdBy })
    .onConflict((conflict) => conflict.columns(['task_id', 'id']).doUpdateSet({ description: task.description, depends_on: task.depends_on }))
    .execute();
}

export async function updateTask(db: Db, taskId: string, id: string, change: { status?: SwarmTaskStatus; owner?: string | null }): Promise<void> {
  await db.updateTable('swarm_tasks').set(change).where('task_id', '=', taskId).where('id', '=', id).execute();
}
