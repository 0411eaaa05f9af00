import type { Deps } from '../deps.ts';
import { isDatabaseUnavailable } from '../db/database-errors.ts';
import { abandonExecution, isDisplaced, registerDurableWorkflow, TASK_WORKFLOW_SHAPE, type TaskWorkflow } from '../engine/engine.ts';
import { activeWorkflows } from '../observability/metrics.ts';
import { answerAtOnce, type AnswerAtOnce } from './modes/answer-at-once.ts';
import { checkpoint } from './runtime/checkpoint.ts';
import { BudgetExhaustedError, TaskCancelledError, TaskParkedError } from './runtime/control-errors.ts';
import { TaskTimeoutError } from './runtime/deadline.ts';
import { titleSession } from './memory/session-title.ts';
import { simpleOutcome } from './modes/simple.ts';
import { routeTask, startingRoute } from './router.ts';
import { parseTaskSettings } from './runtime/task-settings.ts';
import { partialResultOf } from './runtime/partial-result.ts';
import { completeTask, failTask, finishCancelled, startTask, type TaskOutcome } from './runtime/task-lifecycle.ts';
import type { TaskSnapshot } from './runtime/task-snapshot.ts';
import { haltForShutdown, runTaskStep } from './runtime/task-step.ts';
import { inTaskTrace } from './runtime/task-trace.ts';

/**
 * The durable workflow of every task; its workflow id is the task id. Register before the engine launches.
 * A simple task runs in one step (answer-at-once.ts); everything else, and every workflow started before
 * that path existed (no `shape`), runs step by step, each checkpoint and model call a step of its own.
 */
export function registerTaskWorkflow(deps: Deps): TaskWorkflow {
  return registerDurableWorkflow('agentgate.task', async (taskId: string, shape?: number) => {
    activeWorkflows.inc();
    try {
      return await inTaskTrace(deps, taskId, () => runTask(deps, taskId, shape));
    } finally {
      activeWorkflows.dec();
    }
  });
}

/**
 * Every error of a run ends in endWithError, wherever it arose (the step that starts the run, a part of the task,
 * its completion): an error that escaped the workflow would be recorded by the engine as its outcome, and a task
 * whose workflow has an outcome is never run again, so it would stay RUNNING.
 */
async function runTask(deps: Deps, taskId: string, shape: number | undefined): Promise<void> {
  try {
    const completed = await (shape === TASK_WORKFLOW_SHAPE ? runAtOnceFirst(deps, taskId) : runStepByStep(deps, taskId));
    if (completed === undefined) return;
    // Its completion asked for the session's title; a workflow started before completions did (no shape) asks in a step.
    if (shape === undefined) await titleSession(deps, completed);
    else deps.titles.nudge(completed);
  } catch (error) {
    await endWithError(deps, taskId, error);
  }
}

/** Runs the task at once when it is simple (answer-at-once.ts), or else step by step; the task if it completed here. */
async function runAtOnceFirst(deps: Deps, taskId: string): Promise<TaskSnapshot | undefined> {
  const outcome = await runTaskStep(deps, 'answer', () => answerAtOnce(deps, taskId, (row) => startingRoute(deps, row)), endedTheTask);
  if (outcome.kind === 'declined') return runStepByStep(deps, taskId);
  if (outcome.kind !== 'held') return undefined;
  const { task, answer } = outcome;
  return completeWith(deps, task, async () => simpleOutcome(answer, task));
}

/**
 * An answer that ended the task needs no step record: the task row holds the outcome, and a replay's re-run of the
 * step reads it there (answerAtOnce returns at once for an ended task). One write per simple task less.
 */
const endedTheTask = (outcome: AnswerAtOnce) => outcome.kind === 'completed' || outcome.kind === 'ended';

async function runStepByStep(deps: Deps, taskId: string): Promise<TaskSnapshot | undefined> {
  const started = await runTaskStep(deps, 'start-task', () => startTask(deps, taskId, (row) => startingRoute(deps, row)));
  if (!started) return undefined;
  // A snapshot recorded before settings existed gets them now, from the same context.
  const task = { ...started, settings: started.settings ?? parseTaskSettings(started.context, started.options) };
  return completeWith(deps, task, async () => {
    await checkpoint(deps, task, 'pre_routing');
    return routeTask(deps, task);
  });
}

/** Produces the task's outcome and records its completion; an error on the way goes to the caller (runTask). */
async function completeWith(deps: Deps, task: TaskSnapshot, produce: () => Promise<TaskOutcome>): Promise<TaskSnapshot> {
  const outcome = await produce();
  await checkpoint(deps, task, 'pre_completion');
  await runTaskStep(deps, 'complete-task', () => completeTask(deps, task, outcome));
  return task;
}

/**
 * How a run that threw ends. A park is not an end: the workflow returns without recording anything, and resume
 * rewinds it to where it parked. An outage stops the execution unrecorded (abandonForTheDatabase); so does a
 * refused record of the failure itself, which would otherwise become the workflow's outcome.
 */
async function endWithError(deps: Deps, taskId: string, error: unknown): Promise<void> {
  if (TaskParkedError.isInstance(error)) return;
  // Another worker owns the workflow now: it runs the task and records how it ends; this execution writes nothing.
  if (isDisplaced(error)) throw error;
  if (deps.handingOver.aborted) return haltForShutdown();
  if (isDatabaseUnavailable(error)) return abandonForTheDatabase(deps, taskId, error);
  try {
    await runTaskStep(deps, 'finish-with-error', () => finishWithError(deps, taskId, error));
  } catch (failure) {
    if (isDatabaseUnavailable(failure)) abandonForTheDatabase(deps, taskId, failure);
    throw failure;
  }
}

/**
 * Our own database work waits out an outage inside each step; an error of that kind that reaches here comes from
 * the engine's record of a step, which it could not write (a read-only or full database, a connection lost at that
 * moment). It is not the task's failure, and this execution cannot go on past the step it lost: it stops without
 * recording anything, and the stalled-workflow sweep (tasks/resume-stalled.ts) resumes the workflow from its
 * recorded steps once the database takes writes again.
 */
function abandonForTheDatabase(deps: Deps, taskId: string, error: unknown): never {
  deps.logger.warn({ task_id: taskId, err: error }, 'the engine could not record a step; the task resumes from its last recorded step once the database takes writes');
  return abandonExecution(taskId);
}

/** Errors come back from step records by name: cancellation, the deadline, or a failure. */
async function finishWithError(deps: Deps, taskId: string, error: unknown): Promise<void> {
  const message = error instanceof Error ? error.message : String(error);
  if (TaskCancelledError.isInstance(error)) return finishCancelled(deps, taskId, TaskCancelledError.checkpointOf(error));
  deps.logger.warn({ task_id: taskId, err: error }, 'task failed');
  await failTask(deps, taskId, TaskTimeoutError.isInstance(error) ? 'TIMEOUT' : 'FAILED', message, {
    overBudget: BudgetExhaustedError.isInstance(error), partial: partialResultOf(error),
  });
}
