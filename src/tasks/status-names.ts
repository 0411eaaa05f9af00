import type { TaskStatus } from '../db/schema.ts';
import { badRequest } from '../errors.ts';

/** Responses use the prefixed forms of the spec (§9): TASK_STATUS_*, EXECUTION_MODE_*. */
export const toStatusName = (status: TaskStatus) => `TASK_STATUS_${status}`;
export const toExecutionModeName = (mode: string | null) => (mode ? `EXECUTION_MODE_${mode.toUpperCase()}` : null);

const STATUS_FILTERS: Record<string, TaskStatus> = {
  QUEUED: 'QUEUED', RUNNING: 'RUNNING', PAUSED: 'PAUSED', COMPLETED: 'COMPLETED',
  FAILED: 'FAILED', CANCELLED: 'CANCELLED', CANCELED: 'CANCELLED', TIMEOUT: 'TIMEOUT',
};

/** The list filter takes short forms (and the TASK_STATUS_ form), case-insensitively. */
export function parseStatusFilter(value: string): TaskStatus {
  const status = STATUS_FILTERS[value.trim().toUpperCase().replace(/^TASK_STATUS_/, '')];
  if (!status) throw badRequest(`invalid status: ${value} (expected one of QUEUED, RUNNING, PAUSED, COMPLETED, FAILED, CANCELLED, TIMEOUT)`);
  return status;
}
