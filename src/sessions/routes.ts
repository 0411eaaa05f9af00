import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import type { App } from '../http/app-type.ts';
import { ErrorBody, SESSION_ID_PATTERN, SessionBudgetBody } from '../tasks/schemas.ts';
import { setSessionBudget } from './budget.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const SessionIdParams = Type.Object({ sessionId: Type.String({ pattern: SESSION_ID_PATTERN }) });

export async function sessionRoutes(app: App, deps: Deps) {
  app.put('/api/v1/sessions/:sessionId/budget', {
    schema: {
      tags: ['sessions'], summary: 'Set the session token budget', params: SessionIdParams, body: SessionBudgetBody,
      response: { 200: Type.Object({ session_id: Type.String(), token_budget: Type.Integer(), tokens_used: Type.Integer() }), ...errors },
    },
  }, async (request) => setSessionBudget(deps, request.caller, request.params.sessionId, request.body.token_budget));
}
