import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { findOwnedReview } from './queries.ts';

/** GET /tasks/{id}/review (spec 2.13): the review state, and its version for `ETag`. */
export async function readReview(deps: Deps, caller: Caller, taskId: string) {
  const review = await findOwnedReview(deps.db, caller, taskId);
  return {
    version: review.version,
    body: {
      status: review.status, round: review.round, version: review.version, current_plan: review.current_plan,
      rounds: review.rounds, query: review.query,
    },
  };
}
