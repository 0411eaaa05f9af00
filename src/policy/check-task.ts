import { recordAudit } from '../auth/audit.ts';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { forbidden } from '../errors.ts';
import type { ModelCandidate } from '../llm/provider-registry.ts';
import { approvalRule, findViolation, maxTokenBudget, type PolicySubject } from './policy.ts';

export interface TaskPolicyInput {
  mode: string | undefined;
  candidates: ModelCandidate[];
  /** The budget the request asked for (context.token_budget), if any. */
  requestedBudget: number | undefined;
  defaultBudget: number;
}

export interface TaskPolicyOutcome {
  tokenBudget: number;
  /** The rule by which the task must wait for a human's approval (enforce mode only). */
  approvalRule: string | undefined;
}

/**
 * Applies the policy to a task submission: `enforce` answers 403 with the reason, `dry-run` logs what it
 * would deny and lets it through, `off` does nothing. The models checked are those the task may use; a task
 * that asks for no budget gets the default capped by policy; an enforced rule may require approval.
 */
export async function checkTaskPolicy(deps: Deps, caller: Caller, input: TaskPolicyInput): Promise<TaskPolicyOutcome> {
  const budget = input.requestedBudget ?? input.defaultBudget;
  if (deps.policy.mode === 'off' || deps.policy.rules.length === 0) return { tokenBudget: budget, approvalRule: undefined };
  const subject = await policySubject(deps, caller);
  const rule = approvalRule(deps.policy, subject);
  if (rule && deps.policy.mode === 'dry-run') deps.logger.info({ tenant_id: caller.tenantId, rule }, 'policy would require approval (dry-run)');
  return { tokenBudget: await budgetUnderPolicy(deps, caller, subject, input), approvalRule: deps.policy.mode === 'enforce' ? rule : undefined };
}

async function budgetUnderPolicy(deps: Deps, caller: Caller, subject: PolicySubject, input: TaskPolicyInput): Promise<number> {
  const budget = input.requestedBudget ?? input.defaultBudget;
  const reason = findViolation(deps.policy, subject, {
    mode: input.mode,
    models: input.candidates.map((candidate) => candidate.catalogModel.name),
    providers: [...new Set(input.candidates.map((candidate) => candidate.catalogModel.provider))],
    tokenBudget: input.requestedBudget,
  });
  const capped = input.requestedBudget ?? Math.min(input.defaultBudget, maxTokenBudget(deps.policy, subject) ?? Infinity);
  if (!reason) return deps.policy.mode === 'enforce' ? capped : budget;
  await deny(deps, caller, reason);
  return budget;
}

/** A budget set later (PUT …/budget on a task or session) answers to the same `max_token_budget` rules. */
export async function checkBudgetPolicy(deps: Deps, caller: Caller, tokenBudget: number): Promise<void> {
  if (deps.policy.mode === 'off' || deps.policy.rules.length === 0) return;
  const maximum = maxTokenBudget(deps.policy, await policySubject(deps, caller));
  if (maximum !== undefined && tokenBudget > maximum) await deny(deps, caller, `token budget ${tokenBudget} exceeds the maximum of ${maximum}`);
}

async function policySubject(deps: Deps, caller: Caller): Promise<PolicySubject> {
  const tenant = await deps.db.selectFrom('tenants').select(['slug', 'plan']).where('id', '=', caller.tenantId).executeTakeFirstOrThrow();
  return { tenantId: caller.tenantId, tenantSlug: tenant.slug, plan: tenant.plan, role: caller.role };
}

/** Enforce: audit and 403. Dry-run: log what would have been denied and let it through. */
async function deny(deps: Deps, caller: Caller, reason: string): Promise<void> {
  if (deps.policy.mode === 'dry-run') {
    deps.logger.warn({ tenant_id: caller.tenantId, user_id: caller.userId, reason }, 'policy would deny this request (dry-run)');
    return;
  }
  await recordAudit(deps.db, { type: 'policy_denied', userId: caller.userId, tenantId: caller.tenantId, details: { reason } });
  throw forbidden(`Policy denied: ${reason}`);
}
