import { badRequest } from '../errors.ts';
import { SERVED_MODES } from '../workflows/router.ts';
import type { SubmitTaskInput } from './schemas.ts';

/**
 * What a submission may ask for that no workflow of this deployment runs yet: each is refused by name
 * rather than run as a simple task (issue 14, "no silent fallback"). As a workflow lands, its line goes.
 */
type Check<T> = (input: SubmitTaskInput, context: Record<string, unknown>) => T;

const UNAVAILABLE: Array<{ asks: Check<boolean>; refusal: Check<string> }> = [
  { asks: (input) => input.mode !== undefined && !SERVED_MODES.includes(input.mode), refusal: (input) => `mode ${input.mode} is not available in this deployment (available: ${SERVED_MODES.join(', ')})` },
  { asks: (_, context) => context.force_research === true, refusal: () => 'force_research: deep research is not available in this deployment' },
  { asks: (_, context) => context.force_swarm === true, refusal: () => 'force_swarm: the swarm workflow is not available in this deployment' },
  { asks: (_, context) => context.agent !== undefined, refusal: (_, context) => `context.agent ${String(context.agent)}: single-purpose agents are not available in this deployment` },
  { asks: (_, context) => context.skill !== undefined, refusal: (_, context) => `skill ${String(context.skill)}: skills are not available in this deployment` },
  { asks: (_, context) => context.research_strategy !== undefined, refusal: () => 'research_strategy applies to deep research, which is not available in this deployment' },
  {
    asks: (_, context) => context.iterative_research_enabled === true || context.iterative_max_iterations !== undefined || context.enable_fact_extraction === true,
    refusal: () => 'iterative research and fact extraction apply to deep research, which is not available in this deployment',
  },
  { asks: (_, context) => context.agent_input !== undefined, refusal: () => 'agent_input is the input of context.agent, and single-purpose agents are not available in this deployment' },
  { asks: (_, context) => context.platforms !== undefined, refusal: () => 'platforms applies to the ads_research role, which is not available in this deployment' },
  { asks: (input) => input.max_iterations !== undefined, refusal: () => 'max_iterations applies to research and swarm iterations, which are not available in this deployment' },
  { asks: (input) => input.enable_verification === true, refusal: () => 'enable_verification checks research citations, and deep research is not available in this deployment' },
];

/** 400 naming the first thing the submission asks for that this deployment cannot run. */
export function refuseUnavailable(input: SubmitTaskInput, context: Record<string, unknown>): void {
  const unavailable = UNAVAILABLE.find((entry) => entry.asks(input, context));
  if (unavailable) throw badRequest(unavailable.refusal(input, context));
}
