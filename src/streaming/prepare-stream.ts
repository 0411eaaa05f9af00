import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { badRequest, notFound } from '../errors.ts';
import { EVENT_TYPES } from '../events/event-types.ts';
import { resolveResumeSeq } from '../events/resume-point.ts';
import { eventTypeOfSseName } from '../events/sse-names.ts';
import { isUuid } from '../uuid.ts';
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
  const types = parseTypes(input.types);
  if (!isUuid(workflowId)) throw notFound('Task not found');
  const task = await findOwnedTask(deps.db, caller, workflowId.toLowerCase());
  return {
    taskId: task.id,
    afterSeq: await resolveResumeSeq(deps.db, task.id, input.lastEventId),
    types,
  };
}

const MAX_NAMED_UNKNOWN = 10;

/**
 * The `types` filter as event types. Each name is an event type or the SSE event name it is sent under
 * (`thread.message.delta` for LLM_PARTIAL); anything else is refused, since a misspelt filter would
 * otherwise silently deliver nothing but `done`.
 */
function parseTypes(filter: string | undefined): string[] | undefined {
  const names = [...new Set(filter?.split(',').map((name) => name.trim()).filter(Boolean))];
  if (names.length === 0) return undefined;
  const unknown = names.filter((name) => !EVENT_TYPES.has(name) && eventTypeOfSseName(name) === undefined);
  if (unknown.length > 0) {
    const listed = unknown.slice(0, MAX_NAMED_UNKNOWN).map((name) => name.slice(0, 64)).join(', ');
    const more = unknown.length > MAX_NAMED_UNKNOWN ? ` and ${unknown.length - MAX_NAMED_UNKNOWN} more` : '';
    throw badRequest(`unknown event ${unknown.length === 1 ? 'type' : 'types'}: ${listed}${more} `
      + '(use event types such as LLM_OUTPUT, or their SSE names such as thread.message.completed)');
  }
  return [...new Set(names.map((name) => (EVENT_TYPES.has(name) ? name : eventTypeOfSseName(name)!)))];
}
