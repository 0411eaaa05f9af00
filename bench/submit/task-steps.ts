import type pg from 'pg';

export interface TaskSteps {
  /** The most frequent number of steps recorded per completed task. */
  steps: number;
  /** Completed tasks with that many steps, and completed tasks in all. */
  tasksWithSteps: number;
  tasks: number;
  min: number;
  max: number;
  /** The step names of one task with `steps` steps, in order. */
  names: string;
}

/**
 * The steps DBOS recorded (its `operation_outputs` rows, one per step or engine call) for each task
 * workflow (`agentgate.task`) that succeeded, read from the gateway's engine schema: the bare-workflow
 * ceiling runs that many steps.
 */
export async function countTaskSteps(pool: pg.Pool): Promise<TaskSteps> {
  const { rows } = await pool.query<{ steps: number; tasks: number; names: string }>(`
    with per_task as (
      select s.workflow_uuid, count(o.function_id)::int as steps,
             string_agg(o.function_name, ', ' order by o.function_id) as names
      from dbos.workflow_status s
      left join dbos.operation_outputs o on o.workflow_uuid = s.workflow_uuid
      where s.name = 'agentgate.task' and s.status = 'SUCCESS'
      group by s.workflow_uuid)
    select steps, count(*)::int as tasks, min(names) as names from per_task group by steps order by tasks desc, steps`);
  if (rows.length === 0) throw new Error('no completed agentgate.task workflow in dbos.workflow_status');
  const [common] = rows;
  return {
    steps: common.steps,
    tasksWithSteps: common.tasks,
    tasks: rows.reduce((total, row) => total + row.tasks, 0),
    min: Math.min(...rows.map((row) => row.steps)),
    max: Math.max(...rows.map((row) => row.steps)),
    names: common.names ?? '',
  };
}
