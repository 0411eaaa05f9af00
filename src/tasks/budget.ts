import { sql } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { usageTotals } from '../llm/usage-totals.ts';
import { checkBudgetPolicy } from '../policy/check-task.ts';
import { setTaskTokenBudget } from '../task-state/budgets.ts';
import { findOwnedTask } from './queries.ts';

/**
 * PUT /api/v1/tasks/{id}/budget: sets the task's token budget, so a task paused with reason `budget`
 * can be resumed. Its session's budget changes with PUT /api/v1/sessions/{id}/budget.
 */
export async function setTaskBudget(deps: Deps, caller: Caller, taskId: string, tokenBudget: number) {
  const task = await findOwnedTask(deps.db, caller, taskId);
  await checkBudgetPolicy(deps, caller, tokenBudget);
  await setTaskTokenBudget(deps.db, task.id, tokenBudget);
  return describeBudget(deps, task.id);
}

async function describeBudget(deps: Deps, taskId: string) {
  const { rows } = await sql<{ task_budget: number; task_used: number; session_id: string; session_budget: number; session_used: number; external_id: string | null }>`
    select t.token_budget as task_budget, s.id as session_id, s.external_id, s.token_budget as session_budget,
      (select total_tokens from (${usageTotals('task_id', sql.ref('t.id'))}) usage) as task_used,
      (select total_tokens from (${usageTotals('session_id', sql.ref('s.id'))}) usage) as session_used
    from tasks t join sessions s on s.id = t.session_id where t.id = ${taskId}`.execute(deps.db);
  const row = rows[0];
  return {
    task_id: taskId,
    token_budget: Number(row.task_budget ?? deps.config.budgets.taskTokens),
    tokens_used: Number(row.task_used),
    session_id: row.external_id ?? row.session_id,
    session_token_budget: Number(row.session_budget),
    session_tokens_used: Number(row.session_used),
  };
}
