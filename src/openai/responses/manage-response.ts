import type { Caller } from '../../auth/caller.ts';
import type { Deps } from '../../deps.ts';
import { badRequest, isAppError } from '../../errors.ts';
import { isTerminal } from '../../task-state/statuses.ts';
import { cancelTask } from '../../tasks/control.ts';
import { toListedItem } from './input-items.ts';
import { findOwnedResponse, markResponseDeleted, readResponseTask } from './queries.ts';
import { responseIdOf } from './response-ids.ts';
import { readResponseView } from './response-view.ts';
import type { ResponseView } from './schemas.ts';

/**
 * POST /v1/responses/{id}/cancel: as in the OpenAI API, only a background response can be cancelled; cancelling
 * one already cancelled answers it again, one that ended otherwise is a 400. Cancellation is the task's: the
 * model call in flight is aborted in whichever process runs it.
 */
export async function cancelResponse(deps: Deps, caller: Caller, responseId: string): Promise<ResponseView> {
  const record = await findOwnedResponse(deps, caller, responseId);
  if (!record.background) throw badRequest('Only responses created with background=true can be cancelled.');
  const refuseEnded = async () => {
    const view = await readResponseView(deps, record);
    if (view.status === 'cancelled') return view;
    throw badRequest(`Cannot cancel a ${view.status} response.`);
  };
  if (isTerminal((await readResponseTask(deps, record.taskId)).status)) return refuseEnded();
  try {
    await cancelTask(deps, caller, record.taskId, { reason: 'cancelled through the Responses API' });
  } catch (error) {
    // The task ended between the read and the cancel.
    if (isAppError(error) && error.statusCode === 409) return refuseEnded();
    throw error;
  }
  return readResponseView(deps, record);
}

/** DELETE /v1/responses/{id}: the response can no longer be read or continued; its task stays (the native API's record). */
export async function deleteResponse(deps: Deps, caller: Caller, responseId: string) {
  const record = await findOwnedResponse(deps, caller, responseId);
  await markResponseDeleted(deps, record.taskId);
  return { id: responseIdOf(record.taskId), object: 'response' as const, deleted: true as const };
}

export interface InputItemsPage { after?: string; limit?: number; order?: 'asc' | 'desc' }

/** GET /v1/responses/{id}/input_items: the response's own input items, newest first unless `order=asc`, paged by item id. */
export async function listInputItems(deps: Deps, caller: Caller, responseId: string, page: InputItemsPage) {
  const record = await findOwnedResponse(deps, caller, responseId);
  const ordered = page.order === 'asc' ? record.input : record.input.toReversed();
  const start = page.after === undefined ? 0 : ordered.findIndex((item) => item.id === page.after) + 1;
  if (start === 0 && page.after !== undefined) throw badRequest(`after: no input item with id '${page.after}' in this response`);
  const limit = page.limit ?? 20;
  const data = ordered.slice(start, start + limit).map(toListedItem);
  return { object: 'list' as const, data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + limit < ordered.length };
}
