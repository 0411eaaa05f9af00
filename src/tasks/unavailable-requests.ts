import { badRequest } from '../errors.ts';
import { SUPPORTED_MODES } from '../workflows/task-workflow.ts';
import type { SubmitTaskInput } from './schemas.ts';

/**
 * What a submission may ask for that no workflow of this deployment runs yet: each is refused by name
 * rather than run as a simple task (issue 14, "no silent fallback"). As a workflow lands, its line goes.
 */
type Check<T> = (input: SubmitTaskInput, context: Record<string, unknown>) => T;

const UNAVAILABLE: Array<{ asks: Check<boolean>; refusal: Check<string> }> = [
  { asks: (input) => input.mode !== undefined && !SUPPORTED_MODES.includes(input.mode), refusal: (input) => `mode ${input.mode} is not available in this deployment (available: ${SUPPORTED_MODES.join(', ')})` },
  { asks: (_, context) => context.force_research === true, refusal: () => 'force_research: deep research is not available in this deployment' },
  { asks: (_, context) => context.force_swarm === true, refusal: () => 'force_swarm: the swarm workflow is not available in this deployment' },
  { asks: (_, context) => context.agent !== undefined, refusal: (_, context) => `context.agent ${String(context.agent)}: single-purpose agents are not available in this deployment` },
  { asks: (_, context) => context.skill !== undefined, refusal: (_, context) => `skill ${String(context.skill)}: skills are not available in this deployment` },
  { asks: (_, context) => context.template !== undefined, refusal: (_, context) => `template ${String(context.template)}: templates are not available in this deployment` },
  { asks: (_, context) => context.disable_ai === true, refusal: () => 'disable_ai runs a template without a model, and templates are not available in this deployment' },
  { asks: (_, context) => context.research_strategy !== undefined, refusal: () => 'research_strategy applies to deep research, which is not available in this deployment' },
  {
    asks: (_, context) => context.iterative_research_enabled === true || context.iterative_max_iterations !== undefined || context.enable_fact_extraction === true,
    refusal: () => 'iterative research and fact extraction apply to deep research, which is not available in this deployment',
  },
  {
    asks: (input) => input.max_iterations !== undefined || input.max_concurrent_agents !== undefined || input.enable_verification === true,
    refusal: () => 'max_iterations, max_concurrent_agents and enable_verification apply to multi-agent workflows, which are not available in this deployment',
  },
];

/** 400 naming the first thing the submission asks for that this deployment cannot run. */
export function refuseUnavailable(input: SubmitTaskInput, context: Record<string, unknown>): void {
  const unavailable = UNAVAILABLE.find((entry) => entry.asks(input, context));
  if (unavailable) throw badRequest(unavailable.refusal(input, context));
}
