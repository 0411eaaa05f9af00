import { badRequest } from '../../../../errors.ts';
import type { WorkRequest } from '../../../mode-table.ts';
import { STRATEGY_NAMES } from './research-strategies.ts';
import { MAX_REVIEW_TIMEOUT_SECONDS, MIN_REVIEW_TIMEOUT_SECONDS } from './research-settings.ts';

/** What a research task reads of its request: the context and the top-level options (tasks/submit-task.ts). */
export type ResearchRequest = Pick<WorkRequest, 'context' | 'options'>;

type Place = 'context' | 'options';

interface SettingRule {
  place: Place;
  key: string;
  /** A sentence fragment saying what the value must be, when it is not. */
  check(value: unknown): string | undefined;
}

const isInteger = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value);

const aBoolean = (value: unknown) => (typeof value === 'boolean' ? undefined : 'must be true or false');
const anIntegerFrom = (minimum: number, maximum: number) => (value: unknown) =>
  (isInteger(value) && value >= minimum && value <= maximum ? undefined : `must be an integer from ${minimum} to ${maximum}`);
const oneOf = (allowed: readonly string[]) => (value: unknown) =>
  (typeof value === 'string' && allowed.includes(value) ? undefined : `must be one of ${allowed.join(', ')}`);

const rule = (place: Place, key: string, check: SettingRule['check']): SettingRule => ({ place, key, check });

/** The research settings a request may carry (spec 2.1, 2.2, 8), top level and in context. */
const RESEARCH_SETTING_RULES: readonly SettingRule[] = [
  rule('options', 'research_strategy', oneOf(STRATEGY_NAMES)),
  rule('context', 'research_strategy', oneOf(STRATEGY_NAMES)),
  rule('options', 'max_iterations', anIntegerFrom(1, 50)),
  rule('options', 'max_concurrent_agents', anIntegerFrom(1, 20)),
  rule('context', 'max_concurrent_agents', anIntegerFrom(1, 20)),
  rule('options', 'enable_verification', aBoolean),
  rule('context', 'enable_verification', aBoolean),
  rule('context', 'force_research', aBoolean),
  rule('context', 'iterative_research_enabled', aBoolean),
  rule('context', 'iterative_max_iterations', anIntegerFrom(1, 5)),
  rule('context', 'enable_fact_extraction', aBoolean),
  rule('context', 'enable_citations', aBoolean),
  rule('context', 'require_review', aBoolean),
  rule('context', 'review_plan', oneOf(['manual', 'auto'])),
  rule('context', 'review_timeout', anIntegerFrom(MIN_REVIEW_TIMEOUT_SECONDS, MAX_REVIEW_TIMEOUT_SECONDS)),
];

/** Every research setting of the request that has a wrong type or is out of range, as "<name> must be … (got …)". */
export function researchRequestProblems(request: ResearchRequest): string[] {
  return RESEARCH_SETTING_RULES.flatMap(({ place, key, check }) => {
    const value = request[place][key];
    const problem = value === undefined ? undefined : check(value);
    if (problem === undefined) return [];
    const name = place === 'context' ? `context.${key}` : key;
    return [`${name} ${problem} (got ${JSON.stringify(value)})`];
  });
}

/** 400 naming every research setting that is wrong; nothing when all are right or absent. */
export function checkResearchRequest(request: ResearchRequest): void {
  const problems = researchRequestProblems(request);
  if (problems.length > 0) throw badRequest(problems.join('; '));
}
