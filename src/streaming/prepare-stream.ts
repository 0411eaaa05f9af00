import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { badRequest, notFound } from '../errors.ts';
import { resolveResumeSeq } from '../events/resume-point.ts';
import { isUuid } from '../sessions/resolve-session.ts';
import { findOwnedTask } from '../tasks/queries.ts';

export interface StreamPlan {
  taskId: string;
  afterSeq: number;
  types: string[] | undefined;
}

export interface StreamRequest {
  workflowId: string | undefined;
  /** `Last-Event-ID` header (preferred) or `last_event_id` query parameter. */
  lastEventId: string | undefined;
  types: string | undefined;
}

/** Checks the task exists and is the caller's, and turns the resume point and filter into a plan. */
export async function prepareTaskStream(deps: Deps, caller: Caller, input: StreamRequest): Promise<StreamPlan> {
  const workflowId = input.workflowId?.trim();
  if (!workflowId) throw badRequest('workflow_id is required');
  if (!isUuid(workflowId)) throw notFound('Task not found');
  const task = await findOwnedTask(deps.db, caller, workflowId.toLowerCase());
  const types = input.types?.split(',').map((type) => type.trim()).filter(Boolean);
  return {
    taskId: task.id,
    afterSeq: await resolveResumeSeq(deps.db, task.id, input.lastEventId),
    types: types && types.length > 0 ? types : undefined,
  };
}
