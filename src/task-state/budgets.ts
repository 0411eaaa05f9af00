import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/** Sets the task's token budget (PUT /api/v1/tasks/{id}/budget), e.g. to resume a task paused for budget. */
export async function setTaskTokenBudget(db: Db, taskId: string, tokenBudget: number): Promise<void> {
  await db.updateTable('tasks').set({ token_budget: tokenBudget, updated_at: sql`now()` as never }).where('id', '=', taskId).execute();
}

/** A scheduled run's task, inside the transaction that creates it: its schedule and its cost budget. */
export async function markScheduledRun(transaction: Db, taskId: string, scheduleId: string, costBudgetUsd: number): Promise<void> {
  await transaction.updateTable('tasks').set({ schedule_id: scheduleId, cost_budget_usd: costBudgetUsd }).where('id', '=', taskId).execute();
}
