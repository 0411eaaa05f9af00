import type { ModelTier } from '../../../../llm/model-catalog.ts';
import type { ResearchRequest } from './research-request.ts';
import type { ResearchStrategies, StrategyName } from './research-strategies.ts';

/** Rounds of the coverage loop when neither the request nor the preset says (spec 2.2). */
export const DEFAULT_ITERATIVE_MAX_ITERATIONS = 3;

/** How long a research plan may wait for its owner (reference §3.1: 15 minutes is the default and the most). */
export const MAX_REVIEW_TIMEOUT_SECONDS = 900;
export const MIN_REVIEW_TIMEOUT_SECONDS = 1;

/** How one research task runs: its strategy's preset with the request's explicit settings applied. */
export interface ResearchSettings {
  strategy: StrategyName;
  verification: boolean;
  factExtraction: boolean;
  citations: boolean;
  maxConcurrentAgents: number;
  /** Reason/act turns of one research agent; the top-level `max_iterations` overrides the preset. */
  reactMaxIterations: number;
  /** The coverage loop (evaluate, generate subqueries, fill gaps, synthesise again), at most `maxIterations` rounds. */
  iterative: { enabled: boolean; maxIterations: number };
  /** Filling the gaps found in a synthesis when the coverage loop is off. */
  gapFilling: { enabled: boolean; maxGaps: number; maxIterations: number };
  modelTiers: { agents: ModelTier; utility: ModelTier; synthesis: ModelTier };
  /** The fewest tokens one research agent is given, when the preset says. */
  agentTokenBudgetMin: number | undefined;
  /** Whether its owner reviews the plan before the research starts (`context.require_review`, `review_plan: manual`), and for how long. */
  review: { required: boolean; timeoutSeconds: number };
}

/**
 * The settings of a research task whose request passed `checkResearchRequest`. The preset is the top-level
 * `research_strategy`, else the context's (spec 4.2 rule 3), else the file's default; then each explicit setting
 * overrides it. `max_concurrent_agents` and `enable_verification` are top-level in the spec and context keys in
 * the reference: both are read, the top-level one winning.
 */
export function resolveResearchSettings(strategies: ResearchStrategies, request: ResearchRequest): ResearchSettings {
  const { context, options } = request;
  const strategy = (options.research_strategy ?? context.research_strategy ?? strategies.default_strategy) as StrategyName;
  const preset = strategies.strategies[strategy];
  const flag = (value: unknown, fallback: boolean) => (typeof value === 'boolean' ? value : fallback);
  const count = (value: unknown, fallback: number) => (typeof value === 'number' ? value : fallback);
  return {
    strategy,
    verification: flag(options.enable_verification ?? context.enable_verification, preset.enable_verification),
    factExtraction: flag(context.enable_fact_extraction, preset.enable_fact_extraction),
    citations: flag(context.enable_citations, preset.enable_citations),
    maxConcurrentAgents: count(options.max_concurrent_agents ?? context.max_concurrent_agents, preset.max_concurrent_agents),
    reactMaxIterations: count(options.max_iterations, preset.react_max_iterations),
    iterative: {
      enabled: flag(context.iterative_research_enabled, preset.iterative_research_enabled),
      maxIterations: count(context.iterative_max_iterations, preset.iterative_max_iterations ?? DEFAULT_ITERATIVE_MAX_ITERATIONS),
    },
    gapFilling: { enabled: preset.gap_filling.enabled, maxGaps: preset.gap_filling.max_gaps, maxIterations: preset.gap_filling.max_iterations },
    modelTiers: { ...preset.model_tiers },
    agentTokenBudgetMin: preset.budget_agent_min,
    review: {
      required: context.require_review === true || context.review_plan === 'manual',
      timeoutSeconds: count(context.review_timeout, MAX_REVIEW_TIMEOUT_SECONDS),
    },
  };
}
