import { forbidden, notFound } from '../errors.ts';
import type { Caller } from './caller.ts';

/** The one owner check of a task: another tenant's task does not exist for the caller; another user's is forbidden. */
export function ensureOwnedTask<T extends { user_id: string; tenant_id: string }>(caller: Caller, task: T | undefined): T {
  if (task && task.tenant_id !== caller.tenantId) throw notFound('Task not found');
  return ensureOwned(task, caller);
}

/** Another tenant's task or session does not exist for the caller; another user's is forbidden (spec 5.7). */
export function ensureOwned<T extends { user_id: string }>(row: T | undefined, caller: Caller, resource: 'task' | 'session' = 'task'): T {
  if (!row) throw notFound(resource === 'task' ? 'Task not found' : 'Session not found');
  if (row.user_id !== caller.userId) throw forbidden(`Forbidden: not the ${resource} owner`);
  return row;
}
