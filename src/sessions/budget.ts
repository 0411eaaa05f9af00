import { sql } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { usageTotals } from '../llm/usage-totals.ts';
import { checkBudgetPolicy } from '../policy/check-task.ts';
import { findOwnedSession } from './queries.ts';

/** PUT /api/v1/sessions/{id}/budget: raises (or lowers) the session's token budget. */
export async function setSessionBudget(deps: Deps, caller: Caller, sessionId: string, tokenBudget: number) {
  const session = await findOwnedSession(deps.db, caller, sessionId);
  await checkBudgetPolicy(deps, caller, tokenBudget);
  await deps.db.updateTable('sessions').set({ token_budget: tokenBudget, updated_at: sql`now()` as never }).where('id', '=', session.id).execute();
  const { rows } = await sql<{ total_tokens: number }>`${usageTotals('session_id', session.id)}`.execute(deps.db);
  return { session_id: sessionId, token_budget: tokenBudget, tokens_used: rows[0].total_tokens };
}
