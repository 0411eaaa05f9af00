import type { Db } from '../db/database.ts';
import type { ConversationMessage } from '../llm/stream-model-text.ts';
import type { TaskSnapshot } from './task-snapshot.ts';

export const DEFAULT_HISTORY_WINDOW = 50;

/**
 * The session's earlier finished turns, oldest first, as user/assistant messages: at most
 * `context.history_window_size` messages (spec 2.2). Compression arrives with the sessions issue.
 */
export async function loadSessionHistory(db: Db, task: TaskSnapshot): Promise<ConversationMessage[]> {
  const windowSize = Number(task.context.history_window_size ?? DEFAULT_HISTORY_WINDOW);
  const turns = await db.selectFrom('tasks').select(['query', 'result'])
    .where('session_id', '=', task.sessionId)
    .where('status', '=', 'COMPLETED')
    .where('created_at', '<', new Date(task.createdAtMs))
    .where('id', '!=', task.id)
    .orderBy('created_at', 'desc')
    .limit(Math.ceil(windowSize / 2))
    .execute();
  const messages = turns.reverse().flatMap((turn): ConversationMessage[] => [
    { role: 'user', content: turn.query },
    { role: 'assistant', content: turn.result ?? '' },
  ]);
  return messages.slice(-windowSize);
}
