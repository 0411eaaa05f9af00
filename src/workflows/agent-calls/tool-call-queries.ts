import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { ToolCallsTable } from '../../db/schema.ts';

export type ToolCallRow = Selectable<ToolCallsTable>;
export type NewToolCallRow = Insertable<ToolCallsTable>;

/** The calls a step recorded (keys `<stepKey>:c<n>`), by key. */
export async function loadRecordedCalls(db: Db, taskId: string, stepKey: string): Promise<Map<string, ToolCallRow>> {
  const rows = await db.selectFrom('tool_calls').selectAll()
    .where('task_id', '=', taskId).where(sql<boolean>`starts_with(call_key, ${`${stepKey}:c`})`).execute();
  return new Map(rows.map((row) => [row.call_key, row]));
}

/** Records finished calls in the caller's transaction; a re-run that made a different call at a key replaces it. */
export async function insertToolCallRows(transaction: Db, rows: NewToolCallRow[]): Promise<void> {
  if (rows.length === 0) return;
  await transaction.insertInto('tool_calls').values(rows)
    .onConflict((conflict) => conflict.columns(['task_id', 'call_key']).doUpdateSet((update) => ({
      tool: update.ref('excluded.tool'), input: update.ref('excluded.input'), output: update.ref('excluded.output'),
      error: update.ref('excluded.error'), cost_usd: update.ref('excluded.cost_usd'), duration_ms: update.ref('excluded.duration_ms'),
    })))
    .execute();
}

/** The task's finished calls of these tools, oldest first: what its agents saw (research cites only these). */
export async function taskToolCalls(db: Db, taskId: string, tools: readonly string[]): Promise<Array<Pick<ToolCallRow, 'tool' | 'output' | 'error'>>> {
  return db.selectFrom('tool_calls').select(['tool', 'output', 'error'])
    .where('task_id', '=', taskId).where('tool', 'in', [...tools]).orderBy('created_at').orderBy('call_key').execute();
}
