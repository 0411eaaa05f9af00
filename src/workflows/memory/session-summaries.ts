import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { MessagePosition } from './session-history.ts';

export interface StoredSummary {
  summary: string;
  /** The last message the summary stands for; it covers every message of the session up to this one. */
  through: MessagePosition;
  summarizedMessages: number;
}

export async function findLatestSummary(db: Db, sessionId: string): Promise<StoredSummary | undefined> {
  const row = await db.selectFrom('session_summaries')
    .innerJoin('tasks', 'tasks.id', 'session_summaries.through_task_id')
    .select(['session_summaries.summary', 'session_summaries.through_task_id', 'session_summaries.through_part',
      'session_summaries.summarized_messages', sql<number>`(extract(epoch from tasks.created_at) * 1000000)::bigint`.as('created_us')])
    .where('session_summaries.session_id', '=', sessionId)
    .orderBy('session_summaries.created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    summary: row.summary,
    through: { createdUs: row.created_us, taskId: row.through_task_id, part: row.through_part === 1 ? 1 : 0 },
    summarizedMessages: row.summarized_messages,
  };
}

/** One summary per turn that made it: a re-run of that turn's step replaces it. */
export async function saveSummary(db: Db, owner: { taskId: string; sessionId: string }, stored: StoredSummary): Promise<void> {
  const row = {
    task_id: owner.taskId,
    session_id: owner.sessionId,
    summary: stored.summary,
    through_task_id: stored.through.taskId,
    through_part: stored.through.part,
    summarized_messages: stored.summarizedMessages,
  };
  await db.insertInto('session_summaries').values(row)
    .onConflict((conflict) => conflict.column('task_id').doUpdateSet(row))
    .execute();
}
