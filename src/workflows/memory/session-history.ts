import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { ConversationMessage } from '../../llm/stream-model-text.ts';
import type { TaskSnapshot } from '../runtime/task-snapshot.ts';

/** Where a message stands in its session: its task's creation time (µs), the task id, 0 = query, 1 = answer. */
export interface MessagePosition {
  createdUs: number;
  taskId: string;
  part: 0 | 1;
}

export interface HistoryMessage extends ConversationMessage {
  position: MessagePosition;
}

/** The session's order: by task creation, then task id, query before answer (as the history query sorts). */
export function comparePositions(left: MessagePosition, right: MessagePosition): number {
  if (left.createdUs !== right.createdUs) return left.createdUs - right.createdUs;
  if (left.taskId !== right.taskId) return left.taskId < right.taskId ? -1 : 1;
  return left.part - right.part;
}

/** The session's earlier finished turns, oldest first, as user/assistant messages: the last `windowSize` of them. */
export async function loadSessionHistory(db: Db, task: TaskSnapshot, windowSize: number): Promise<HistoryMessage[]> {
  const turns = await db.selectFrom('tasks')
    .select(['id', 'query', 'result', sql<number>`(extract(epoch from created_at) * 1000000)::bigint`.as('created_us')])
    .where('session_id', '=', task.sessionId)
    .where('status', '=', 'COMPLETED')
    .where('created_at', '<', new Date(task.createdAtMs))
    .where('id', '!=', task.id)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(Math.ceil(windowSize / 2))
    .execute();
  const messages = turns.reverse().flatMap((turn): HistoryMessage[] => [
    { role: 'user', content: turn.query, position: { createdUs: turn.created_us, taskId: turn.id, part: 0 } },
    { role: 'assistant', content: turn.result ?? '', position: { createdUs: turn.created_us, taskId: turn.id, part: 1 } },
  ]);
  return messages.slice(-windowSize);
}
