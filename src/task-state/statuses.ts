import type { TaskStatus } from '../db/schema.ts';

/** The statuses a task ends in (spec 3.1); nothing changes a task once it is in one. */
export const TERMINAL_STATUSES: readonly TaskStatus[] = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT'];

/** The statuses of a task that has not ended. */
export const UNFINISHED_STATUSES: readonly TaskStatus[] = ['QUEUED', 'RUNNING', 'PAUSED'];

export const isTerminal = (status: TaskStatus) => TERMINAL_STATUSES.includes(status);
