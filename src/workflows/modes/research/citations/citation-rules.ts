import { Type, type Static } from 'typebox';
import { parseYamlConfig, readYamlConfig } from '../../../../config-file.ts';

const Score = Type.Number({ minimum: 0, maximum: 1 });

const CitationRulesFile = Type.Object({
  default_score: Score,
  /** At most this many citations from one host (without www.), the best ranked kept. */
  max_per_domain: Type.Integer({ minimum: 1, maximum: 1000 }),
  /** At most this many citations in all. */
  max_citations: Type.Integer({ minimum: 1, maximum: 1000 }),
  tld_rules: Type.Array(Type.Object({ suffix: Type.String({ pattern: '^\\.[a-z0-9.-]+$' }), score: Score }, { additionalProperties: false })),
  domain_groups: Type.Array(Type.Object({
    category: Type.String({ minLength: 1 }),
    score: Score,
    domains: Type.Array(Type.String({ pattern: '^[a-z0-9.-]+\\.[a-z0-9-]+$' }), { minItems: 1 }),
  }, { additionalProperties: false })),
}, { additionalProperties: false });

/** config/citation-credibility.yaml: how much each site is trusted, and how many citations are kept. */
export type CitationRules = Static<typeof CitationRulesFile>;

const DESCRIPTION = 'citation credibility file';

/** Reads the rules (CITATION_CREDIBILITY_CONFIG); a missing or invalid file throws naming it. */
export function loadCitationRules(file: string): CitationRules {
  return readYamlConfig(file, CitationRulesFile, DESCRIPTION);
}

export function parseCitationRules(yamlText: string, source?: string): CitationRules {
  return parseYamlConfig(yamlText, CitationRulesFile, DESCRIPTION, source);
}

const isOnDomain = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`);

/** The trust in a host (reference §1.9): its first matching TLD rule, else its first domain group, else the default. */
export function scoreCredibility(rules: CitationRules, host: string): number {
  const lower = host.toLowerCase();
  const tld = rules.tld_rules.find((rule) => lower.endsWith(rule.suffix));
  if (tld) return tld.score;
  const group = rules.domain_groups.find((candidate) => candidate.domains.some((domain) => isOnDomain(lower, domain)));
  return group?.score ?? rules.default_score;
}
