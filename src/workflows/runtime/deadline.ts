import type { Config } from '../../config.ts';
import type { TaskRow } from '../../db/schema.ts';
import type { TaskSnapshot } from './task-snapshot.ts';

export class TaskTimeoutError extends Error {
  constructor(seconds: number) {
    super(`task exceeded its time limit of ${seconds} s`);
    this.name = 'TaskTimeoutError';
  }

  /** Also true for one recovered from a step's record (see control-errors.ts). */
  static isInstance(error: unknown): error is TaskTimeoutError {
    return error instanceof Error && error.name === 'TaskTimeoutError';
  }
}

export class AgentTimeoutError extends Error {
  constructor(seconds: number) {
    super(`agent exceeded its execution limit of ${seconds} s (AGENT_TIMEOUT_SECONDS)`);
    this.name = 'AgentTimeoutError';
  }
}

/**
 * Runs `work` with a signal that aborts at the task's wall-clock deadline, the agent limit or a
 * cancellation, whichever comes first; an aborted call surfaces as the reason itself.
 */
export async function withDeadline<T>(config: Readonly<Config>, task: TaskSnapshot, cancel: AbortSignal, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const untilDeadline = Math.max(0, task.deadlineMs - Date.now());
  const agentLimitMs = config.agentTimeoutSeconds * 1000;
  const controller = new AbortController();
  const onCancel = () => controller.abort(cancel.reason);
  if (cancel.aborted) onCancel();
  cancel.addEventListener('abort', onCancel, { once: true });
  const timer = untilDeadline <= agentLimitMs
    ? setTimeout(() => controller.abort(new TaskTimeoutError(task.timeoutSeconds ?? config.taskTimeoutSeconds)), untilDeadline)
    : setTimeout(() => controller.abort(new AgentTimeoutError(config.agentTimeoutSeconds)), agentLimitMs);
  try {
    return await work(controller.signal);
  } catch (error) {
    throw controller.signal.aborted ? controller.signal.reason : error;
  } finally {
    clearTimeout(timer);
    cancel.removeEventListener('abort', onCancel);
  }
}

/**
 * Time the task waited inside its steps does not count against its deadline: for approvals its agents' tool calls
 * asked for, and paused while a step waited out a spent budget (runtime/budget-policy.ts). Both are summed on the task
 * row, which every model call's reservation reads (agent-calls/budgeted-call.ts), so a step re-run after the resume,
 * or after a crash, allows for them. A pause at a checkpoint and the plan's approval gate extend the deadline themselves.
 */
export function allowForWaitsInSteps(task: TaskSnapshot, row: Pick<TaskRow, 'approval_wait_ms' | 'in_step_pause_ms'>): void {
  const waited = Number(row.approval_wait_ms) + Number(row.in_step_pause_ms);
  task.deadlineMs += waited - (task.inStepWaitMs ?? 0);
  task.inStepWaitMs = waited;
}
