import type { Context } from '@opentelemetry/api';
import type { Static } from 'typebox';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { badRequest, serviceUnavailable } from '../errors.ts';
import { inToolSpan } from '../observability/spans.ts';
import { findOwnedSession } from '../sessions/queries.ts';
import { toolSettingsOf, type ToolDefinition, type ToolOutcome } from '../tools/registry.ts';
import { describeArgumentErrors } from './argument-errors.ts';
import { findDirectTool } from './direct-tools.ts';
import { insertToolUsage } from './queries.ts';
import type { ExecuteToolBody, ExecuteToolResponse } from './schemas.ts';

type ExecuteToolResult = Static<typeof ExecuteToolResponse>;

/**
 * POST /api/v1/tools/{name}/execute: checks everything that can be refused (the tool, its arguments, the
 * session) before the tool runs, then runs it once, records its cost as the caller's usage, and answers
 * in Shannon's shape. A tool that ran and failed is a result (`success: false`), not an HTTP error.
 */
export async function executeTool(
  deps: Deps, caller: Caller, name: string, body: Static<typeof ExecuteToolBody>, signal: AbortSignal, traceContext?: Context,
): Promise<ExecuteToolResult> {
  const tool = findDirectTool(deps, caller, name);
  const input = body.arguments ?? {};
  const errors = deps.tools.inputErrors(tool.name, input);
  if (errors.length > 0) throw badRequest(describeArgumentErrors(errors));
  const sessionId = body.session_id === undefined ? null : (await findOwnedSession(deps.db, caller, body.session_id)).id;
  const startedAt = performance.now();
  const outcome = await invokeUntilAborted(deps, tool, input, { caller, sessionId, signal, traceContext });
  const executionTimeMs = Math.round(performance.now() - startedAt);
  await insertToolUsage(deps.db, caller, tool, sessionId);
  return toResult(tool, outcome, sessionId, executionTimeMs);
}

interface CallOwner { caller: Caller; sessionId: string | null; signal: AbortSignal; traceContext?: Context }

/** The call is a span of its own, a child of the caller's `traceparent`. */
async function invokeUntilAborted(deps: Deps, tool: ToolDefinition, input: Record<string, unknown>, owner: CallOwner): Promise<ToolOutcome> {
  const { caller, sessionId, signal, traceContext } = owner;
  try {
    return await inToolSpan(tool.name, { parent: traceContext, attributes: { 'agentgate.tenant.id': caller.tenantId } }, () =>
      deps.tools.invoke(tool.name, input, {
        taskId: null, sessionId, tenantId: caller.tenantId, userId: caller.userId, signal, db: deps.db, settings: toolSettingsOf(deps.config),
      }));
  } catch (error) {
    if (signal.aborted) throw serviceUnavailable('the tool call was stopped: the request ended or the server is shutting down');
    throw error;
  }
}

function toResult(tool: ToolDefinition, outcome: ToolOutcome, sessionId: string | null, executionTimeMs: number): ExecuteToolResult {
  const succeeded = outcome.error === undefined;
  return {
    success: succeeded,
    output: succeeded ? outcome.output : null,
    text: succeeded ? asText(outcome.output) : null,
    error: outcome.error ?? null,
    metadata: { tool: tool.name, category: tool.category, session_id: sessionId },
    execution_time_ms: executionTimeMs,
    usage: { tokens: 0, cost_usd: tool.costPerUseUsd },
  };
}

const asText = (output: unknown) => (typeof output === 'string' ? output : JSON.stringify(output));
