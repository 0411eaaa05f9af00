import type pg from 'pg';

/** How many of the database's tasks broke "completed exactly once" in each way (all 0 when none did). */
export interface ExactlyOnce {
  tasks: number;
  notCompleted: number;
  /** A simple task makes one model call: one usage row. */
  usageRowsNotOne: number;
  completionEventsNotOne: number;
  answersNotOne: number;
}

export async function checkExactlyOnce(pool: pg.Pool): Promise<ExactlyOnce> {
  const { rows: [row] } = await pool.query<ExactlyOnce>(`
    with per_task as (
      select t.status,
             (select count(*) from usage_records u where u.task_id = t.id) as usage_rows,
             (select count(*) from task_events e where e.task_id = t.id and e.type = 'WORKFLOW_COMPLETED') as completions,
             (select count(*) from task_events e where e.task_id = t.id and e.type = 'LLM_OUTPUT' and e.agent_id = 'final_output') as answers
      from tasks t)
    select count(*)::int as "tasks",
           count(*) filter (where status <> 'COMPLETED')::int as "notCompleted",
           count(*) filter (where usage_rows <> 1)::int as "usageRowsNotOne",
           count(*) filter (where completions <> 1)::int as "completionEventsNotOne",
           count(*) filter (where answers <> 1)::int as "answersNotOne"
    from per_task`);
  return row;
}

export const isExactlyOnce = (check: ExactlyOnce) =>
  check.notCompleted + check.usageRowsNotOne + check.completionEventsNotOne + check.answersNotOne === 0;
