import { DBOS } from '@dbos-inc/dbos-sdk';
import type { Deps } from '../deps.ts';
import { titleFromModel, titleFromQuery } from '../sessions/title-text.ts';
import { callModelWithinBudget } from './model-call.ts';
import type { TaskSnapshot } from './task-snapshot.ts';
import { runTaskStep } from './task-step.ts';

export const TITLE_AGENT_ID = 'title_generator';
const TITLE_MAX_OUTPUT_TOKENS = 32;
/** The start of a long query says enough for a title, and keeps the call cheap. */
const TITLE_QUERY_CHARACTERS = 2_000;
const TITLE_INSTRUCTIONS = 'Write a title for the conversation that starts with the message below: 3 to 6 words '
  + '(5 to 15 characters for Chinese, Japanese or Korean), in the language of the message, without quotes, '
  + 'emoji or final punctuation. Answer with the title only.';

/**
 * After a task completes: names its session unless the session already has a title (generated for an
 * earlier task, or set by its owner, which is never overwritten). A durable step, so a replay does not
 * call the model again. It runs after the task's stream has ended, so it records usage but no events,
 * and a failure here only leaves the title to the next completed task.
 */
export async function titleSession(deps: Deps, task: TaskSnapshot): Promise<void> {
  await runTaskStep(deps, 'session-title', async () => {
    try {
      const session = await deps.db.selectFrom('sessions').select('title').where('id', '=', task.sessionId).executeTakeFirstOrThrow();
      if (session.title !== null) return;
      const title = await generateTitle(deps, task, `${task.id}:session-title#${DBOS.stepID ?? 0}`) ?? titleFromQuery(task.query);
      await deps.db.updateTable('sessions').set({ title }).where('id', '=', task.sessionId).where('title', 'is', null).execute();
    } catch (error) {
      deps.logger.warn({ task_id: task.id, err: error }, 'session title not saved');
    }
  });
}

async function generateTitle(deps: Deps, task: TaskSnapshot, callKey: string): Promise<string | undefined> {
  try {
    const outcome = await callModelWithinBudget(deps, task, callKey, {
      agentId: TITLE_AGENT_ID,
      system: TITLE_INSTRUCTIONS,
      messages: [{ role: 'user', content: task.query.slice(0, TITLE_QUERY_CHARACTERS) }],
      maxOutputTokens: TITLE_MAX_OUTPUT_TOKENS,
    }, new AbortController().signal);
    return 'result' in outcome ? titleFromModel(outcome.result.text) : undefined;
  } catch (error) {
    deps.logger.warn({ task_id: task.id, err: error }, 'title generation failed; using the query');
    return undefined;
  }
}
