import type { Config } from '../../../config.ts';
import { loadCitationRules, type CitationRules } from './citations/citation-rules.ts';
import { loadResearchStrategies, type ResearchStrategies } from './strategy/research-strategies.ts';

/** Deep research's configuration files, read once at start-up. */
export interface ResearchConfig {
  strategies: ResearchStrategies;
  citationRules: CitationRules;
}

/** Reads both files; a missing or invalid one throws naming it, which stops start-up. */
export function loadResearchConfig(paths: Config['research']): ResearchConfig {
  return { strategies: loadResearchStrategies(paths.strategiesPath), citationRules: loadCitationRules(paths.citationRulesPath) };
}
