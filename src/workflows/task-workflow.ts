import { DBOS } from '@dbos-inc/dbos-sdk';
import type { Deps } from '../deps.ts';
import { TaskTimeoutError } from './deadline.ts';
import { runSimpleWorkflow } from './simple.ts';
import { completeTask, failTask, startTask, type TaskOutcome } from './task-lifecycle.ts';
import type { TaskSnapshot } from './task-snapshot.ts';

export type TaskWorkflow = (taskId: string) => Promise<void>;

/** The durable workflow of every task; its workflow id is the task id. Register before DBOS.launch(). */
export function registerTaskWorkflow(deps: Deps): TaskWorkflow {
  return DBOS.registerWorkflow(async (taskId: string) => {
    const task = await DBOS.runStep(() => startTask(deps, taskId), { name: 'start-task' });
    if (!task) return;
    let outcome: TaskOutcome;
    try {
      outcome = await routeTask(deps, task);
    } catch (error) {
      const timedOut = error instanceof TaskTimeoutError;
      const message = error instanceof Error ? error.message : String(error);
      deps.logger.warn({ task_id: taskId, err: error }, 'task failed');
      await DBOS.runStep(() => failTask(deps, task, timedOut ? 'TIMEOUT' : 'FAILED', message), { name: 'fail-task' });
      return;
    }
    await DBOS.runStep(() => completeTask(deps, task, outcome), { name: 'complete-task' });
  }, { name: 'agentgate.task' });
}

/** Chooses the workflow for a task. Only the simple workflow exists so far; later issues add the others. */
async function routeTask(deps: Deps, task: TaskSnapshot): Promise<TaskOutcome> {
  return runSimpleWorkflow(deps, task);
}
