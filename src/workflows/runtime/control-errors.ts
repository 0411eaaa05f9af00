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

export class BudgetExhaustedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BudgetExhaustedError';
  }
}
