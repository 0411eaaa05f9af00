import { sql } from 'kysely';
import type { Caller } from '../../auth/caller.ts';
import type { TaskStatus } from '../../db/schema.ts';
import type { Deps } from '../../deps.ts';
import { notFound } from '../../errors.ts';
import { taskAnswerOf } from '../completion.ts';
import type { EarlierTurn, StoredInputItem } from './input-items.ts';
import { taskIdOfResponse } from './response-ids.ts';

/** What a response echoes back of its request (the OpenAI response object repeats its parameters). */
export interface ResponseParameters {
  max_output_tokens: number | null;
  temperature: number | null;
  top_p: number | null;
  /** As sent (echoed): the function tools, the tool choice and the text format. */
  tools: unknown[];
  tool_choice: unknown;
  text_format: unknown;
  metadata: Record<string, string>;
  user: string | null;
  safety_identifier: string | null;
  parallel_tool_calls: boolean;
}

export interface ResponseRecord {
  taskId: string;
  previousTaskId: string | null;
  model: string;
  instructions: string | null;
  input: StoredInputItem[];
  parameters: ResponseParameters;
  background: boolean;
  stored: boolean;
  createdAt: Date;
}

export interface NewResponse extends Omit<ResponseRecord, 'createdAt'> { tenantId: string; userId: string }

/** A retry of the same submission (same Idempotency-Key, hence the same task) finds the row the first one wrote. */
export async function insertResponse(deps: Deps, response: NewResponse): Promise<void> {
  await deps.db.insertInto('openai_responses').values({
    task_id: response.taskId, tenant_id: response.tenantId, user_id: response.userId, previous_task_id: response.previousTaskId,
    model: response.model, instructions: response.instructions, input: JSON.stringify(response.input),
    parameters: JSON.stringify(response.parameters), background: response.background, stored: response.stored,
  }).onConflict((conflict) => conflict.column('task_id').doNothing()).execute();
}

/**
 * The caller's response by its id. Another tenant's or user's, a deleted one, and one created with
 * `store: false` (except for its own stream) do not exist for the caller: 404, the API's message.
 */
export async function findOwnedResponse(deps: Deps, caller: Caller, responseId: string, options: { evenUnstored?: boolean } = {}): Promise<ResponseRecord> {
  const missing = notFound(`No response found with id '${responseId}'.`);
  const taskId = taskIdOfResponse(responseId);
  if (!taskId) throw missing;
  const row = await deps.db.selectFrom('openai_responses').selectAll()
    .where('task_id', '=', taskId).where('tenant_id', '=', caller.tenantId).where('user_id', '=', caller.userId)
    .where('deleted_at', 'is', null).executeTakeFirst();
  if (!row || (!row.stored && !options.evenUnstored)) throw missing;
  return {
    taskId: row.task_id, previousTaskId: row.previous_task_id, model: row.model, instructions: row.instructions,
    input: row.input as StoredInputItem[], parameters: row.parameters as unknown as ResponseParameters,
    background: row.background, stored: row.stored, createdAt: row.created_at,
  };
}

export async function markResponseDeleted(deps: Deps, taskId: string): Promise<void> {
  await deps.db.updateTable('openai_responses').set({ deleted_at: new Date() }).where('task_id', '=', taskId).execute();
}

/** A chain longer than this is cut at its oldest turns (a conversation that long exceeds any context window anyway). */
const MAX_CHAIN_DEPTH = 500;

/** The turns of the chain ending with this response, oldest first; a turn without a finished answer contributes its input only. */
export async function readEarlierTurns(deps: Deps, taskId: string): Promise<EarlierTurn[]> {
  const { rows } = await sql<{ task_id: string; input: StoredInputItem[]; result: string | null; metadata: unknown; status: TaskStatus }>`
    with recursive chain as (
      select task_id, previous_task_id, input, 1 as depth from openai_responses where task_id = ${taskId}
      union all
      select r.task_id, r.previous_task_id, r.input, chain.depth + 1
      from openai_responses r join chain on r.task_id = chain.previous_task_id
      where chain.depth < ${MAX_CHAIN_DEPTH}
    )
    select chain.task_id, chain.input, t.result, t.metadata, t.status from chain join tasks t on t.id = chain.task_id
    order by chain.depth desc`.execute(deps.db);
  return rows.map((row) => ({ taskId: row.task_id, input: row.input, answer: row.status === 'COMPLETED' ? taskAnswerOf(row) : null }));
}

export interface ResponseTaskState {
  status: TaskStatus;
  result: string | null;
  /** The task's metadata: the client functions the model called are in `tool_calls`. */
  metadata: unknown;
  error: string | null;
  completedAt: Date | null;
  sessionId: string;
}

export async function readResponseTask(deps: Deps, taskId: string): Promise<ResponseTaskState> {
  const task = await deps.db.selectFrom('tasks').select(['status', 'result', 'metadata', 'error', 'completed_at', 'session_id'])
    .where('id', '=', taskId).executeTakeFirstOrThrow();
  return { status: task.status, result: task.result, metadata: task.metadata, error: task.error, completedAt: task.completed_at, sessionId: task.session_id };
}
