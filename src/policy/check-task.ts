import { recordAudit } from '../auth/audit.ts';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { forbidden } from '../errors.ts';
import type { ModelCandidate } from '../llm/provider-registry.ts';
import { findViolation, maxTokenBudget } from './policy.ts';

export interface TaskPolicyInput {
  mode: string | undefined;
  candidates: ModelCandidate[];
  /** The budget the request asked for (context.token_budget), if any. */
  requestedBudget: number | undefined;
  defaultBudget: number;
}

/**
 * Applies the policy to a task submission and returns the task's token budget: `enforce` answers 403
 * with the reason, `dry-run` logs what it would deny and lets it through, `off` does nothing. The models
 * checked are those the task may use; a task that asks for no budget gets the default capped by policy.
 */
export async function checkTaskPolicy(deps: Deps, caller: Caller, input: TaskPolicyInput): Promise<number> {
  const budget = input.requestedBudget ?? input.defaultBudget;
  if (deps.policy.mode === 'off' || deps.policy.rules.length === 0) return budget;
  const tenant = await deps.db.selectFrom('tenants').select(['slug', 'plan']).where('id', '=', caller.tenantId).executeTakeFirstOrThrow();
  const subject = { tenantId: caller.tenantId, tenantSlug: tenant.slug, plan: tenant.plan, role: caller.role };
  const reason = findViolation(deps.policy, subject, {
    mode: input.mode,
    models: input.candidates.map((candidate) => candidate.catalogModel.name),
    providers: [...new Set(input.candidates.map((candidate) => candidate.catalogModel.provider))],
    tokenBudget: input.requestedBudget,
  });
  const capped = input.requestedBudget ?? Math.min(input.defaultBudget, maxTokenBudget(deps.policy, subject) ?? Infinity);
  if (!reason) return deps.policy.mode === 'enforce' ? capped : budget;
  if (deps.policy.mode === 'dry-run') {
    deps.logger.warn({ tenant_id: caller.tenantId, user_id: caller.userId, reason }, 'policy would deny this request (dry-run)');
    return budget;
  }
  await recordAudit(deps.db, { type: 'policy_denied', userId: caller.userId, tenantId: caller.tenantId, details: { reason } });
  throw forbidden(`Policy denied: ${reason}`);
}
