import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { decideApproval } from '../approvals/decide-approval.ts';
import { listApprovals } from '../approvals/list-approvals.ts';
import { getSessionDetail } from '../sessions/session-detail.ts';
import { getSessionHistory } from '../sessions/session-history.ts';
import { listSessions } from '../sessions/list-sessions.ts';
import { calling, jsonResult, requireScope } from './tool-calls.ts';

export function registerSessionTools(server: McpServer, deps: Deps, caller: Caller): void {
  server.registerTool('list_sessions', {
    title: 'List sessions',
    description: 'The caller\'s sessions, newest first.',
    inputSchema: { limit: z.number().int().min(1).max(100).optional(), offset: z.number().int().min(0).optional() },
    annotations: { readOnlyHint: true },
  }, calling(deps, 'list_sessions', async (args) => {
    requireScope(caller, 'sessions:read');
    return jsonResult(await listSessions(deps, caller, { limit: args.limit ?? 20, offset: args.offset ?? 0 }) as Record<string, unknown>);
  }));

  server.registerTool('get_session', {
    title: 'Read a session',
    description: 'A session (its id or custom id) with its tasks, oldest first: each query and answer.',
    inputSchema: { session_id: z.string().min(1).max(128), limit: z.number().int().min(1).max(100).optional(), offset: z.number().int().min(0).optional() },
    annotations: { readOnlyHint: true },
  }, calling(deps, 'get_session', async (args) => {
    requireScope(caller, 'sessions:read');
    const session = await getSessionDetail(deps, caller, args.session_id);
    const history = await getSessionHistory(deps, caller, args.session_id, { limit: args.limit ?? 20, offset: args.offset ?? 0 });
    return jsonResult({ session, history });
  }));

  server.registerTool('list_approvals', {
    title: 'List approvals',
    description: 'Approvals waiting for a decision (or decided), across the caller\'s tasks; an approver sees the tenant\'s.',
    inputSchema: { status: z.enum(['pending', 'approved', 'denied', 'all']).optional() },
    annotations: { readOnlyHint: true },
  }, calling(deps, 'list_approvals', async (args) =>
    jsonResult(await listApprovals(deps, caller, { status: args.status ?? 'pending', limit: 50, offset: 0 }) as Record<string, unknown>)));

  server.registerTool('answer_approval', {
    title: 'Answer an approval',
    description: 'Approves or denies what a task waits for (its approval_id comes from list_approvals or the task\'s APPROVAL_REQUESTED event).',
    inputSchema: { task_id: z.uuid(), approval_id: z.uuid(), approved: z.boolean(), feedback: z.string().max(10_000).optional() },
  }, calling(deps, 'answer_approval', async (args) => {
    requireScope(caller, 'tasks:write');
    return jsonResult(await decideApproval(deps, caller, {
      workflow_id: args.task_id, approval_id: args.approval_id, approved: args.approved, feedback: args.feedback,
    }) as Record<string, unknown>);
  }));
}
