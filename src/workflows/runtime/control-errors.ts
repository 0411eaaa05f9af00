import { isDatabaseUnavailable } from '../../db/database-errors.ts';
import { TaskTimeoutError } from './deadline.ts';

/**
 * Errors that end a workflow in a particular status. A step's error comes back from the engine's record as a
 * plain Error with the same name and message, so `instanceof` cannot tell them apart: each class recognises
 * its own instances, recorded or not, with `isInstance`.
 */
const isNamed = (error: unknown, name: string): error is Error => error instanceof Error && error.name === name;

const CANCELLED_AT = 'task cancelled at ';

export class TaskCancelledError extends Error {
  constructor(checkpoint: string) {
    super(`${CANCELLED_AT}${checkpoint}`);
    this.name = 'TaskCancelledError';
  }

  static isInstance(error: unknown): error is TaskCancelledError {
    return isNamed(error, 'TaskCancelledError');
  }

  /** The checkpoint where the cancellation was honoured. */
  static checkpointOf(error: TaskCancelledError): string {
    return error.message.startsWith(CANCELLED_AT) ? error.message.slice(CANCELLED_AT.length) : 'in_flight';
  }
}

/** Thrown up the workflow from a checkpoint where the paused task parked: the workflow ends, recording nothing. */
export class TaskParkedError extends Error {
  constructor(checkpoint: string) {
    super(`task parked at ${checkpoint}`);
    this.name = 'TaskParkedError';
  }

  static isInstance(error: unknown): error is TaskParkedError {
    return isNamed(error, 'TaskParkedError');
  }
}

/** A human denied the approval the task waited for (or it timed out): the task fails with this message. */
export class ApprovalDeniedError extends Error {
  constructor(detail: string) {
    super(`approval denied: ${detail}`);
    this.name = 'ApprovalDeniedError';
  }

  static isInstance(error: unknown): error is ApprovalDeniedError {
    return isNamed(error, 'ApprovalDeniedError');
  }
}

/** A budget the task may not wait on ran out: a run's cost budget, any budget of a scheduled run, or with BUDGET_EXHAUSTED_ACTION=fail. */
export class BudgetExhaustedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BudgetExhaustedError';
  }

  static isInstance(error: unknown): error is BudgetExhaustedError {
    return isNamed(error, 'BudgetExhaustedError');
  }
}

/**
 * Errors that end the whole task's run wherever they arise: cancellation, the deadline, a budget it may not wait
 * on, a park (an agent's tool call waits for an approval, runtime/tool-approval.ts), and a database that stopped
 * answering (the step runs again once it answers: runtime/task-step.ts). A part that turns its own failures into a
 * partial result (an agent of a plan, a template node, the plan itself, the history summary) lets these through: an outage is not
 * the part's failure, and recording it as one would make the re-run keep it.
 */
export function endsTheTask(error: unknown): boolean {
  return TaskCancelledError.isInstance(error) || TaskTimeoutError.isInstance(error) || BudgetExhaustedError.isInstance(error)
    || TaskParkedError.isInstance(error) || isDatabaseUnavailable(error);
}

