import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import type { App } from '../http/app-type.ts';
import { ErrorBody } from '../http/error-body.ts';
import { setSessionBudget } from './budget.ts';
import { deleteSession } from './delete-session.ts';
import { listSessions } from './list-sessions.ts';
import { renameSession } from './rename-session.ts';
import { getSessionDetail } from './session-detail.ts';
import { getSessionHistory } from './session-history.ts';
import {
  ListSessionsQuery, ListSessionsResponse, RenameSessionBody, RenameSessionResponse, SessionBudgetBody, SessionBudgetResponse,
  SessionEventsQuery, SessionEventsResponse, SessionHistoryQuery, SessionHistoryResponse, SessionIdParams, SessionView,
} from './schemas.ts';
import { listSessionTurns } from './turn-events.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody };
const read = { scope: 'sessions:read' };
const write = { scope: 'sessions:write' };

export async function sessionRoutes(app: App, deps: Deps) {
  app.get('/api/v1/sessions', {
    config: read,
    schema: { tags: ['sessions'], summary: 'List sessions, newest first', querystring: ListSessionsQuery, response: { 200: ListSessionsResponse, ...errors } },
  }, async (request) => listSessions(deps, request.caller, request.query));

  app.get('/api/v1/sessions/:sessionId', {
    config: read,
    schema: { tags: ['sessions'], summary: 'Session detail', params: SessionIdParams, response: { 200: SessionView, ...errors } },
  }, async (request) => getSessionDetail(deps, request.caller, request.params.sessionId));

  app.get('/api/v1/sessions/:sessionId/history', {
    config: read,
    schema: {
      tags: ['sessions'], summary: 'The session\'s tasks, oldest first, a page at a time',
      params: SessionIdParams, querystring: SessionHistoryQuery, response: { 200: SessionHistoryResponse, ...errors },
    },
  }, async (request) => getSessionHistory(deps, request.caller, request.params.sessionId, request.query));

  app.get('/api/v1/sessions/:sessionId/events', {
    config: read,
    schema: {
      tags: ['sessions'], summary: 'The session as turns: each task with its answer and events (no LLM_PARTIAL)',
      params: SessionIdParams, querystring: SessionEventsQuery, response: { 200: SessionEventsResponse, 413: ErrorBody, ...errors },
    },
  }, async (request) => listSessionTurns(deps, request.caller, request.params.sessionId, request.query));

  app.patch('/api/v1/sessions/:sessionId', {
    config: write,
    schema: { tags: ['sessions'], summary: 'Rename the session', params: SessionIdParams, body: RenameSessionBody, response: { 200: RenameSessionResponse, ...errors } },
  }, async (request) => renameSession(deps, request.caller, request.params.sessionId, request.body.title));

  app.delete('/api/v1/sessions/:sessionId', {
    config: write,
    schema: { tags: ['sessions'], summary: 'Delete the session (soft, idempotent)', params: SessionIdParams, response: { 204: Type.Null({ description: 'Deleted' }), ...errors } },
  }, async (request, reply) => {
    await deleteSession(deps, request.caller, request.params.sessionId);
    return reply.status(204).send(null);
  });

  app.put('/api/v1/sessions/:sessionId/budget', {
    config: write,
    schema: {
      tags: ['sessions'], summary: 'Set the session token budget', params: SessionIdParams, body: SessionBudgetBody,
      response: { 200: SessionBudgetResponse, ...errors },
    },
  }, async (request) => setSessionBudget(deps, request.caller, request.params.sessionId, request.body.token_budget));
}
