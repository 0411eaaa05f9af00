import { Type, type Static } from 'typebox';
import { parseYamlConfig, readYamlConfig } from '../../../../config-file.ts';

/** The strategies a request may name (spec 2.1); the file must define each of them. */
export const STRATEGY_NAMES = ['quick', 'standard', 'deep', 'academic'] as const;
export type StrategyName = (typeof STRATEGY_NAMES)[number];

const Tier = Type.Enum(['small', 'medium', 'large']);

const Strategy = Type.Object({
  enable_verification: Type.Boolean(),
  enable_fact_extraction: Type.Boolean(),
  enable_citations: Type.Boolean(),
  max_concurrent_agents: Type.Integer({ minimum: 1, maximum: 20 }),
  react_max_iterations: Type.Integer({ minimum: 1, maximum: 8 }),
  iterative_research_enabled: Type.Boolean(),
  iterative_max_iterations: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 })),
  gap_filling: Type.Object({
    enabled: Type.Boolean(),
    max_gaps: Type.Integer({ minimum: 0, maximum: 20 }),
    max_iterations: Type.Integer({ minimum: 0, maximum: 10 }),
  }, { additionalProperties: false }),
  model_tiers: Type.Object({ agents: Tier, utility: Tier, synthesis: Tier }, { additionalProperties: false }),
  budget_agent_min: Type.Optional(Type.Integer({ minimum: 1 })),
}, { additionalProperties: false });

const StrategiesFile = Type.Object({
  default_strategy: Type.Enum([...STRATEGY_NAMES]),
  strategies: Type.Object(Object.fromEntries(STRATEGY_NAMES.map((name) => [name, Strategy])) as Record<StrategyName, typeof Strategy>,
    { additionalProperties: false }),
}, { additionalProperties: false });

/** One preset as written in config/research-strategies.yaml. */
export type ResearchStrategy = Static<typeof Strategy>;
export type ResearchStrategies = Static<typeof StrategiesFile>;

const DESCRIPTION = 'research strategies file';

/** config/research-strategies.yaml (RESEARCH_STRATEGIES_CONFIG); a missing or invalid file throws naming it. */
export function loadResearchStrategies(file: string): ResearchStrategies {
  return readYamlConfig(file, StrategiesFile, DESCRIPTION);
}

export function parseResearchStrategies(yamlText: string, source?: string): ResearchStrategies {
  return parseYamlConfig(yamlText, StrategiesFile, DESCRIPTION, source);
}
