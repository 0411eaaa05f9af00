import { readFileSync } from 'node:fs';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { parse } from 'yaml';

const Rule = Type.Object({
  name: Type.String({ minLength: 1 }),
  /** Whom the rule applies to; an absent list matches everyone. Tenants by id or slug. */
  tenants: Type.Optional(Type.Array(Type.String())),
  plans: Type.Optional(Type.Array(Type.String())),
  roles: Type.Optional(Type.Array(Type.Enum(['owner', 'admin', 'member']))),
  allowed_modes: Type.Optional(Type.Array(Type.String())),
  denied_modes: Type.Optional(Type.Array(Type.String())),
  max_token_budget: Type.Optional(Type.Integer({ minimum: 1 })),
  allowed_models: Type.Optional(Type.Array(Type.String())),
  denied_models: Type.Optional(Type.Array(Type.String())),
  allowed_providers: Type.Optional(Type.Array(Type.String())),
  /** Tasks of the callers this rule applies to wait for a human's approval before they run (spec 2.14). */
  require_approval: Type.Optional(Type.Boolean()),
}, { additionalProperties: false });

const PolicyFile = Type.Object({
  mode: Type.Optional(Type.Enum(['enforce', 'dry-run', 'off'])),
  rules: Type.Array(Rule),
}, { additionalProperties: false });

export type PolicyMode = 'enforce' | 'dry-run' | 'off';
export type PolicyRule = Static<typeof Rule>;
export interface Policy { mode: PolicyMode; rules: PolicyRule[] }

export interface PolicySubject { tenantId: string; tenantSlug: string; plan: string; role: string }
export interface PolicyRequest { mode: string | undefined; models: string[]; providers: string[]; tokenBudget: number | undefined }

/** Reads the rules file (spec 5.8); no file means no rules. `POLICY_MODE` overrides the file's mode. */
export function loadPolicy(file: string | undefined, modeOverride: PolicyMode | undefined): Policy {
  if (!file) return { mode: modeOverride ?? 'off', rules: [] };
  const data = parse(readFileSync(file, 'utf8')) as unknown;
  const problems = Value.Errors(PolicyFile, data);
  if (problems.length > 0) {
    throw new Error(`invalid policy file ${file}:\n  ${problems.map((problem) => `${problem.instancePath || '/'}: ${problem.message}`).join('\n  ')}`);
  }
  const parsed = data as Static<typeof PolicyFile>;
  return { mode: modeOverride ?? parsed.mode ?? 'enforce', rules: parsed.rules };
}

/** The first violation of any rule that applies to the subject, as a sentence; undefined when allowed. */
export function findViolation(policy: Policy, subject: PolicySubject, request: PolicyRequest): string | undefined {
  for (const rule of policy.rules.filter((candidate) => applies(candidate, subject))) {
    const reason = violation(rule, request);
    if (reason) return `${reason} (policy rule ${rule.name})`;
  }
  return undefined;
}

function applies(rule: PolicyRule, subject: PolicySubject): boolean {
  return (!rule.tenants || rule.tenants.includes(subject.tenantId) || rule.tenants.includes(subject.tenantSlug))
    && (!rule.plans || rule.plans.includes(subject.plan))
    && (!rule.roles || rule.roles.includes(subject.role as 'owner'));
}

function violation(rule: PolicyRule, request: PolicyRequest): string | undefined {
  const mode = request.mode ?? 'auto';
  if (rule.allowed_modes && !rule.allowed_modes.includes(mode)) return `mode ${mode} is not allowed`;
  if (rule.denied_modes?.includes(mode)) return `mode ${mode} is not allowed`;
  if (rule.max_token_budget !== undefined && request.tokenBudget !== undefined && request.tokenBudget > rule.max_token_budget) {
    return `token budget ${request.tokenBudget} exceeds the maximum of ${rule.max_token_budget}`;
  }
  const model = request.models.find((name) => (rule.allowed_models && !rule.allowed_models.includes(name)) || rule.denied_models?.includes(name));
  if (model) return `model ${model} is not allowed`;
  const provider = request.providers.find((name) => rule.allowed_providers && !rule.allowed_providers.includes(name));
  if (provider) return `provider ${provider} is not allowed`;
  return undefined;
}

/** The first rule that applies and requires approval of the subject's tasks, by name. */
export function approvalRule(policy: Policy, subject: PolicySubject): string | undefined {
  return policy.rules.find((rule) => rule.require_approval === true && applies(rule, subject))?.name;
}

/** The smallest `max_token_budget` of the rules that apply: a task that asks for no budget gets at most this. */
export function maxTokenBudget(policy: Policy, subject: PolicySubject): number | undefined {
  const limits = policy.rules.filter((rule) => applies(rule, subject) && rule.max_token_budget !== undefined).map((rule) => rule.max_token_budget!);
  return limits.length === 0 ? undefined : Math.min(...limits);
}
