import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { followTaskEvents } from '../events/follow-events.ts';
import { getTaskView } from '../tasks/read-tasks.ts';
import { submitTask } from '../tasks/submit-task.ts';
import { uuidFromText } from '../uuid.ts';
import { calling, jsonResult, requireScope } from './tool-calls.ts';

const DEFAULT_WAIT_SECONDS = 300;
const MAX_WAIT_SECONDS = 3600;

/**
 * The id of the task a submission with `idempotency_key` creates: the same for every retry by the same user, so a
 * repeated call finds the task the first one created (submit_task answers it again) instead of creating another.
 */
export const mcpTaskId = (caller: Caller, key: string) => uuidFromText(`mcp-submit:${caller.tenantId}:${caller.userId}:${key}`);

export function registerTaskTools(server: McpServer, deps: Deps, caller: Caller): void {
  server.registerTool('submit_task', {
    title: 'Submit a task',
    description: 'Hands a task to agentgate: a question, a research job or work for a team of agents. Answers its task_id at once; '
      + 'call wait_for_task to follow it. Send the same idempotency_key when retrying a call, so that a retry never creates a second task.',
    inputSchema: {
      query: z.string().min(1).max(200_000).describe('what to do'),
      mode: z.enum(['simple', 'standard', 'complex', 'supervisor']).optional().describe('simple: one agent; standard/complex: a planned team; supervisor: a supervised team; omit to let agentgate choose'),
      strategy: z.enum(['quick', 'standard', 'deep', 'academic']).optional().describe('run it as deep research with this strategy (a cited report)'),
      session_id: z.string().regex(/^[A-Za-z0-9:_\-.]{1,128}$/).optional().describe('continue this session (its id or custom id); a new one otherwise'),
      context: z.record(z.string(), z.unknown()).optional().describe('the task context of the REST API (spec 2.2)'),
      idempotency_key: z.string().min(1).max(255).optional().describe('the same key on a retry answers the task already created'),
    },
  }, calling(deps, 'submit_task', async (args) => {
    requireScope(caller, 'tasks:write');
    // A strategy is deep research's: naming one asks for deep research (the REST API needs context.force_research too).
    const context = args.strategy === undefined ? args.context : { ...args.context, force_research: true };
    const submitted = await submitTask(deps, caller, {
      query: args.query, mode: args.mode, research_strategy: args.strategy, session_id: args.session_id, context,
    }, { taskId: args.idempotency_key === undefined ? undefined : mcpTaskId(caller, args.idempotency_key) });
    return jsonResult({ task_id: submitted.taskId, session_id: submitted.session.publicId, status: 'submitted' });
  }));

  server.registerTool('get_task', {
    title: 'Read a task',
    description: 'A task\'s status and, once it has finished, its result (or error), usage and cost.',
    inputSchema: { task_id: z.uuid() },
    annotations: { readOnlyHint: true },
  }, calling(deps, 'get_task', async (args) => jsonResult(await getTaskView(deps, caller, args.task_id) as Record<string, unknown>)));

  server.registerTool('wait_for_task', {
    title: 'Wait for a task',
    description: 'Waits until the task ends (or timeout_seconds pass) and answers its status and result. A client that sends a '
      + 'progressToken receives a progress notification for each step of the task meanwhile.',
    inputSchema: {
      task_id: z.uuid(),
      timeout_seconds: z.number().int().min(1).max(MAX_WAIT_SECONDS).optional().describe(`default ${DEFAULT_WAIT_SECONDS}`),
    },
    annotations: { readOnlyHint: true },
  }, calling(deps, 'wait_for_task', async (args, extra) => {
    await getTaskView(deps, caller, args.task_id);
    const progressToken = extra._meta?.progressToken;
    // Also ends when this process begins to shut down: the answer is then the status so far, and the client waits again.
    const signal = AbortSignal.any([extra.signal, deps.stopping, AbortSignal.timeout((args.timeout_seconds ?? DEFAULT_WAIT_SECONDS) * 1000)]);
    try {
      for await (const event of followTaskEvents(deps.db, deps.events, args.task_id, { afterSeq: 0, signal, logger: deps.logger })) {
        if (progressToken === undefined || event.type === 'LLM_PARTIAL' || event.type === 'STREAM_END') continue;
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress: event.seq, message: `${event.type}${event.message ? `: ${event.message.slice(0, 200)}` : ''}` },
        });
      }
    } catch (error) {
      if (!signal.aborted) throw error;
    }
    return jsonResult(await getTaskView(deps, caller, args.task_id) as Record<string, unknown>);
  }));
}
