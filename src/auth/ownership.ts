import { forbidden, notFound } from '../errors.ts';
import type { Caller } from './caller.ts';

/** Another tenant's task or session does not exist for the caller; another user's is forbidden (spec 5.7). */
export function ensureOwned<T extends { user_id: string }>(row: T | undefined, caller: Caller, resource: 'task' | 'session' = 'task'): T {
  if (!row) throw notFound(resource === 'task' ? 'Task not found' : 'Session not found');
  if (row.user_id !== caller.userId) throw forbidden(`Forbidden: not the ${resource} owner`);
  return row;
}
