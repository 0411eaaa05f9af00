import type { Deps } from '../deps.ts';
import type { App } from '../http/app-type.ts';
import { ErrorBody } from '../http/error-body.ts';
import { TaskIdParams } from '../tasks/schemas.ts';
import { approvePlan } from './approve-plan.ts';
import { giveFeedback } from './give-feedback.ts';
import { expectedVersion } from './if-match.ts';
import { readReview } from './read-review.ts';
import { ApproveResponse, FeedbackResponse, ReviewBody, ReviewState } from './schemas.ts';
import { badRequest } from '../errors.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 429: ErrorBody, 502: ErrorBody };

/** The review of a research plan (spec 2.13, 3.2, 4.3): its owner reads it, sends feedback rounds and approves. */
export async function reviewRoutes(app: App, deps: Deps) {
  app.get('/api/v1/tasks/:id/review', {
    config: { scope: 'tasks:read' },
    schema: {
      tags: ['reviews'], summary: 'The review of a research task\'s plan; ETag is its version',
      params: TaskIdParams, response: { 200: ReviewState, ...errors },
    },
  }, async (request, reply) => {
    const review = await readReview(deps, request.caller, request.params.id);
    reply.header('etag', String(review.version));
    return review.body;
  });

  app.post('/api/v1/tasks/:id/review', {
    config: { scope: 'tasks:write' },
    schema: {
      tags: ['reviews'], summary: 'Send feedback on a research plan, or approve it (If-Match: the version seen)',
      params: TaskIdParams, body: ReviewBody,
      response: { 200: { anyOf: [FeedbackResponse, ApproveResponse] }, ...errors },
    },
  }, async (request, reply) => {
    const expected = expectedVersion(request.headers['if-match']);
    const { action, message } = request.body;
    if (action === 'approve' && message !== undefined) throw badRequest('message goes with action feedback; approve takes none');
    if (action === 'approve') {
      const approved = await approvePlan(deps, request.caller, request.params.id, expected);
      reply.header('etag', String(approved.version));
      return approved.body;
    }
    const answer = await giveFeedback(deps, request.caller, request.params.id, message, expected);
    const review = await readReview(deps, request.caller, request.params.id);
    reply.header('etag', String(answer.version));
    return { ...review.body, ...answer.body };
  });
}
