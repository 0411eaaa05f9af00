/**
 * Errors that end a workflow in a particular status. A step's error comes back from the engine's record
 * as a plain Error with the same name, so the workflow tells them apart by `name`, not `instanceof`.
 */
export class TaskCancelledError extends Error {
  constructor(checkpoint: string) {
    super(`task cancelled at ${checkpoint}`);
    this.name = 'TaskCancelledError';
  }
}

/** Thrown up the workflow from a checkpoint where the paused task parked: the workflow ends, recording nothing. */
export class TaskParkedError extends Error {
  constructor(checkpoint: string) {
    super(`task parked at ${checkpoint}`);
    this.name = 'TaskParkedError';
  }
}

export class BudgetExhaustedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BudgetExhaustedError';
  }
}

export const hasErrorName = (error: unknown, name: string) => error instanceof Error && error.name === name;
