import type { ModelTextResult } from '../../llm/stream-model-text.ts';
import type { CostPrices } from '../agent-calls/token-budget.ts';
import type { TaskSettings } from './task-settings.ts';

/** What a workflow knows about its task once started; recorded by the start step, so replays agree. */
export interface TaskSnapshot {
  id: string;
  tenantId: string;
  userId: string;
  sessionId: string;
  query: string;
  requestedMode: string | null;
  /** The mode recorded when the task started (absent in snapshots recorded before it was kept). */
  mode?: string;
  context: Record<string, unknown>;
  /** The context and options parsed (runtime/task-settings.ts). */
  settings: TaskSettings;
  options: Record<string, unknown>;
  createdAtMs: number;
  startedAtMs: number;
  /** Wall-clock limit of the whole task, as epoch milliseconds. */
  deadlineMs: number;
  /** The task's time limit: TASK_TIMEOUT_SECONDS, or its own (a scheduled run's). Absent in older snapshots. */
  timeoutSeconds?: number;
  /** The schedule whose run this is. */
  scheduleId?: string;
  /** Set when the task has a cost budget (cost_budget_usd): the prices its calls are checked at. */
  costPrices?: CostPrices;
  /** Of the time the task waited inside its steps, what deadlineMs already allows for (runtime/deadline.ts); never recorded. */
  inStepWaitMs?: number;
}

/** How long the task has been paused so far: what its checkpoints and in-step waits moved its deadline by. */
export const timePausedMs = (task: TaskSnapshot) => (task.timeoutSeconds === undefined ? 0 : task.deadlineMs - task.startedAtMs - task.timeoutSeconds * 1000);

/** One agent's model answer: the call's result and which agent gave it. */
export type AgentAnswer = ModelTextResult & { agentId: string };
