import type { Deps } from '../deps.ts';
import { countRecovered, findDeadExecutorsWithWork, requeueExecutorBackgroundWorkflows, requeueExecutorWorkflows, takeOverIfDead } from '../engine/executors.ts';
import { appendEvents } from '../task-state/change-task.ts';

export type HandOverReason = 'executor_lost' | 'shutdown' | 'stalled';

const HAND_OVER_MESSAGES: Record<HandOverReason, (executorId: string) => string> = {
  executor_lost: (executorId) => `Worker ${executorId} stopped responding; the task continues on another worker`,
  shutdown: (executorId) => `Worker ${executorId} is shutting down; the task continues on another worker`,
  stalled: () => 'The task stopped when the database refused to record its progress; it continues from its last recorded step',
};

/**
 * Dead-worker recovery (issue 17): every executor that has pending workflows but no live process (its heartbeat
 * lapsed for EXECUTOR_DEAD_AFTER_SECONDS, or it never registered) is fenced, and its workflows go back to the
 * task queue for the live workers. Any number of workers may run this at once: each workflow is handed on once.
 * Only a process that has just renewed its own lease may call it (executor-lease.ts), so of several judging at
 * once at least one keeps its lease.
 */
export async function recoverDeadExecutors(deps: Deps, me: string): Promise<number> {
  const deadAfterSeconds = deps.config.executorDeadAfterSeconds;
  let recovered = 0;
  for (const executorId of await findDeadExecutorsWithWork(deps.db, deadAfterSeconds)) {
    if (executorId === me || !await takeOverIfDead(deps.db, executorId, me, deadAfterSeconds)) continue;
    recovered += await handOverWorkflows(deps, executorId, me, 'executor_lost');
  }
  return recovered;
}

/**
 * Puts an executor's pending workflows (or only `onlyIds` of them) back on the task queue and tells each task why
 * (ERROR_RECOVERY): its executor was lost, this process is shutting down and hands them back rather than keep them
 * waiting, or they stalled here (resume-stalled.ts).
 */
export async function handOverWorkflows(deps: Deps, executorId: string, by: string, reason: HandOverReason, onlyIds?: string[]): Promise<number> {
  const background = await requeueExecutorBackgroundWorkflows(deps.db, executorId, onlyIds);
  if (background > 0) deps.logger.warn({ executor_id: executorId, recovered_by: by, reason, workflows: background }, 'handed background workflows to their queue');
  const workflows = await requeueExecutorWorkflows(deps.db, executorId, onlyIds);
  if (workflows.length === 0) return background;
  if (reason !== 'stalled') await countRecovered(deps.db, executorId, workflows.length);
  const message = HAND_OVER_MESSAGES[reason](executorId);
  await Promise.all(workflows.map(({ workflowId, attempts }) => appendEvents(deps, workflowId, 'workflow', [{
    type: 'ERROR_RECOVERY', agentId: 'orchestrator', message,
    payload: { recovery: reason, executor_id: executorId, recovered_by: by },
    dedupeKey: `hand-over:${executorId}:${attempts}`,
  }])));
  deps.logger.warn({ executor_id: executorId, recovered_by: by, reason, workflows: workflows.length }, 'handed workflows to the task queue');
  return workflows.length + background;
}
