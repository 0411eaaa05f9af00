import { randomUUID } from 'node:crypto';
import { context, type Context } from '@opentelemetry/api';
import pTimeout from 'p-timeout';
import type { Caller } from '../auth/caller.ts';
import type { TaskRow } from '../db/schema.ts';
import type { Deps } from '../deps.ts';
import { badRequest } from '../errors.ts';
import { claimSession, resolvedSession, type ResolvedSession, type SessionClaim } from '../sessions/resolve-session.ts';
import { findRolePreset, roleNames } from '../workflows/agent-calls/role-presets.ts';
import type { ModelCandidate } from '../llm/provider-registry.ts';
import { checkTaskPolicy } from '../policy/check-task.ts';
import { inSpan } from '../observability/spans.ts';
import { injectTraceContext } from '../observability/trace-carrier.ts';
import { prepareAgentRequest } from '../workflows/modes/named-agent/agent-request.ts';
import { refuseUnservedRequest } from '../workflows/mode-table.ts';
import { SERVER_CONTEXT_KEYS } from '../workflows/runtime/started-context.ts';
import { insertTaskWithSession, type NewQueuedTask } from './queries.ts';
import { refuseDangerousRole } from './dangerous-roles.ts';
import { applySkillRequest } from '../skills/skill-request.ts';
import { refuseUnrunnableTemplate } from './template-requests.ts';
import type { SubmitTaskInput } from './schemas.ts';
import { refuseUnsafeWebhookUrl } from '../webhooks/check-webhook-url.ts';
import { addTaskWebhook, type TaskWebhook } from '../webhooks/task-webhook.ts';

const MODEL_CONTROLS = ['model_tier', 'model_override', 'provider_override'] as const;
const DEPRECATED_CONTEXT_CONTROLS = ['skill', 'research_strategy'] as const;

export interface SubmittedTask {
  taskId: string;
  session: ResolvedSession;
  createdAt: Date;
  /** Made for the submission's webhook_url. */
  webhook?: TaskWebhook;
}

export interface SubmitOptions {
  /** The task id; derived from the Idempotency-Key so that every retry of a submission names the same task. */
  taskId?: string;
  /** Context the server itself sets (the OpenAI layer's conversation and model); clients may not send these keys. */
  serverContext?: Record<string, unknown>;
  /** Options the server itself sets (a scheduled run's time limit). */
  serverOptions?: Record<string, unknown>;
  /** The caller's trace context (`traceparent`): the submission's span is its child. */
  traceContext?: Context;
}

/** A submission that passed every check, ready to be written (queries.ts insertTaskWithSession). */
export interface PreparedTask extends NewQueuedTask {
  claim: SessionClaim;
}

/** Validates the submission rules of spec 4.2, writes the task and starts (or enqueues) its workflow. */
export async function submitTask(deps: Deps, caller: Caller, input: SubmitTaskInput, options: SubmitOptions = {}): Promise<SubmittedTask> {
  return inSpan('task submit', { parent: options.traceContext, attributes: { 'agentgate.tenant.id': caller.tenantId } }, async (span) => {
    const task = await prepareTask(deps, caller, input, options);
    span.setAttribute('agentgate.task.id', task.id);
    keepTraceContext(deps, task);
    if (input.webhook_url !== undefined) await refuseUnsafeWebhookUrl(deps.config.network, input.webhook_url, 'webhook_url');
    const { stored, webhook } = await writeTask(deps, caller, task, input.webhook_url);
    // The row is committed first: if we die before the start, or the engine cannot record it in time
    // (its database writes wait out an outage), the orphan sweep starts it.
    await startSubmittedTask(deps, task.id, caller.tenantId, stored.created);
    return { taskId: task.id, session: resolvedSession(task.claim, stored.sessionId), createdAt: stored.createdAt, ...(webhook ? { webhook } : {}) };
  });
}

/** The task row, and with a webhook_url its webhook in the same transaction. */
async function writeTask(deps: Deps, caller: Caller, task: PreparedTask, webhookUrl: string | undefined) {
  if (webhookUrl === undefined) return { stored: await insertTaskWithSession(deps.db, caller, task.claim, task), webhook: undefined };
  return deps.db.transaction().execute(async (transaction) => {
    const stored = await insertTaskWithSession(transaction, caller, task.claim, task);
    return { stored, webhook: await addTaskWebhook(transaction, caller, task.id, webhookUrl) };
  });
}

/**
 * Keeps the active span's context with the task, so its workflow's spans join that trace wherever and whenever
 * it runs (after a crash, in another process); runtime/task-trace.ts reads it back.
 */
export function keepTraceContext(deps: Deps, task: PreparedTask): void {
  if (deps.config.tracing.enabled) task.options.trace_context = injectTraceContext(context.active());
}

/** The checks of a submission (400 or 403 when it breaks a rule); nothing is written. */
export async function prepareTask(deps: Deps, caller: Caller, input: SubmitTaskInput, options: SubmitOptions = {}): Promise<PreparedTask> {
  const query = input.query.trim();
  if (query === '') throw badRequest('query is required');
  if (input.force_swarm !== undefined) throw badRequest('force_swarm belongs in context: send "context": {"force_swarm": true}');
  const context = { ...buildTaskContext(input), ...options.serverContext };
  const skill = applySkillRequest(deps, caller, input.mode, context);
  refuseDangerousRole(deps.tools, caller, context);
  const policy = await checkTaskPolicy(deps, caller, {
    mode: input.mode,
    candidates: modelCandidates(deps, context),
    requestedBudget: typeof context.token_budget === 'number' ? context.token_budget : undefined,
    defaultBudget: deps.config.budgets.taskTokens,
  });
  refuseUnservedRequest({ mode: input.mode, context, options: pickOptions(input) });
  refuseUnrunnableTemplate(deps.templates, context);
  prepareAgentRequest(deps.agents, deps.tools, context, query);
  const claim = claimSession(input.session_id, {
    tokenBudget: deps.config.sessionTokenBudget,
    ttlDays: deps.config.sessionTtlDays,
    taskContext: context,
  });
  if (claim.externalId) context.external_id = claim.externalId;
  return {
    id: options.taskId ?? randomUUID(),
    query,
    requested_mode: input.mode ?? null,
    context,
    options: {
      ...pickOptions(input), ...options.serverOptions,
      ...(policy.approvalRule ? { approval_rule: policy.approvalRule } : {}),
      ...(skill ? { skill: skill.pinned } : {}),
    },
    // A skill's budget_max caps the task's tokens, whatever the request or the default allows.
    token_budget: Math.min(policy.tokenBudget, skill?.budgetMax ?? Infinity),
    claim,
  };
}

/** How long a submission waits for the engine to take the task before answering anyway. */
const START_WAIT_MS = 5_000;

/**
 * Starts a written task's workflow, waiting at most START_WAIT_MS; a failed or slow start is left to the orphan
 * sweep. `created`: the row this submission stored (not an earlier submission's), for a workflow started at once.
 */
export async function startSubmittedTask(deps: Deps, taskId: string, tenantId: string, created?: TaskRow): Promise<void> {
  const started = deps.engine.startTask(taskId, tenantId, created).catch((error: unknown) => {
    deps.logger.warn({ task_id: taskId, err: error }, 'start failed; the orphan sweep will start the task');
  });
  await pTimeout(started, {
    milliseconds: START_WAIT_MS,
    fallback: () => deps.logger.warn({ task_id: taskId }, 'engine slow to take the task; answering now, the orphan sweep covers it'),
  });
}

/** Top-level controls override their context twins (rule 3); `template_name` aliases `template`. */
export function buildTaskContext(input: SubmitTaskInput): Record<string, unknown> {
  const context: Record<string, unknown> = { ...input.context };
  const serverKey = Object.keys(context).find((key) => SERVER_CONTEXT_KEYS.has(key));
  if (serverKey) throw badRequest(`context.${serverKey} is set by the server and cannot be sent`);
  if (context.template !== undefined && context.template_name !== undefined) {
    throw badRequest('send context.template or context.template_name, not both');
  }
  if (context.template_name !== undefined) {
    context.template = context.template_name;
    delete context.template_name;
  }
  for (const key of [...MODEL_CONTROLS, ...DEPRECATED_CONTEXT_CONTROLS]) {
    if (input[key] !== undefined) context[key] = input[key];
  }
  if (context.disable_ai === true && MODEL_CONTROLS.some((key) => context[key] !== undefined)) {
    throw badRequest('disable_ai cannot be combined with model_tier, model_override or provider_override');
  }
  if (context.role !== undefined && !findRolePreset(String(context.role))) {
    throw badRequest(`unknown role: ${String(context.role)} (expected one of ${roleNames().join(', ')})`);
  }
  return context;
}

/** The models the task may use; unknown models or providers, and missing credentials, are a 400 here. */
function modelCandidates(deps: Deps, context: Record<string, unknown>): ModelCandidate[] {
  if (context.disable_ai === true) return [];
  return deps.models.resolveCandidates({
    modelTier: context.model_tier as 'small' | 'medium' | 'large' | undefined,
    modelOverride: context.model_override as string | undefined,
    providerOverride: context.provider_override as string | undefined,
  });
}

function pickOptions(input: SubmitTaskInput): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  for (const key of ['max_iterations', 'max_concurrent_agents', 'enable_verification', 'research_strategy'] as const) {
    if (input[key] !== undefined) options[key] = input[key];
  }
  return options;
}
