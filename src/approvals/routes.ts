import type { Deps } from '../deps.ts';
import type { App } from '../http/app-type.ts';
import { ErrorBody } from '../http/error-body.ts';
import { decideApproval } from './decide-approval.ts';
import { listApprovals } from './list-approvals.ts';
import { DecisionBody, DecisionResponse, ListApprovalsQuery, ListApprovalsResponse } from './schemas.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 429: ErrorBody };

export async function approvalRoutes(app: App, deps: Deps) {
  app.post('/api/v1/approvals/decision', {
    config: { scope: 'tasks:write' },
    schema: {
      tags: ['approvals'], summary: 'Approve or deny what a task waits on (spec 2.14)',
      body: DecisionBody, response: { 200: DecisionResponse, ...errors },
    },
  }, async (request) => decideApproval(deps, request.caller, request.body));

  app.get('/api/v1/approvals', {
    config: { scope: 'tasks:read' },
    schema: {
      tags: ['approvals'], summary: 'The caller\'s approvals, or for an approver their tenant\'s (pending by default), newest first',
      querystring: ListApprovalsQuery, response: { 200: ListApprovalsResponse, ...errors },
    },
  }, async (request) => listApprovals(deps, request.caller, request.query));
}
