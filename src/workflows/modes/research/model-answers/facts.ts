import { Type, type Static } from 'typebox';
import { validCitationNumbers } from './parse-model-answer.ts';

const ExtractedFactSchema = Type.Object({
  statement: Type.String({ minLength: 1, maxLength: 1000 }),
  /** A short lower-case kind: statistic, event, definition, comparison … */
  category: Type.String({ minLength: 1, maxLength: 40 }),
  confidence: Type.Number({ minimum: 0, maximum: 1 }),
  /** Citation numbers ([n]) the fact comes from. */
  source_citation: Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 20 }),
  entity_mentions: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 20 }),
  /** When the fact holds ("2024", "Q3 2023", "since 1990"); null when timeless. */
  temporal_marker: Type.Union([Type.String({ maxLength: 100 }), Type.Null()]),
  is_quantitative: Type.Boolean(),
  /** Statements of the sources that contradict this one. */
  contradictions: Type.Array(Type.String({ minLength: 1, maxLength: 1000 }), { maxItems: 10 }),
});

/** What fact extraction answers (Scope 5; reference §1.7): structured facts of the report, each tied to its sources. */
export const FactExtractionSchema = Type.Object({ facts: Type.Array(ExtractedFactSchema, { maxItems: 100 }) });

export type ExtractedFact = Static<typeof ExtractedFactSchema>;

/** A high-confidence fact has at least this confidence. */
export const HIGH_CONFIDENCE = 0.8;

/** `metadata.fact_summary` (spec 2.6). */
export interface FactSummary {
  total_facts: number;
  high_confidence: number;
  /** category → facts of it */
  categorized_facts: Record<string, number>;
  /** Contradictions noted across all facts. */
  contradiction_count: number;
}

/**
 * The facts as `metadata.extracted_facts` carries them: categories in lower case, and citation numbers kept only
 * when they name one of the `citationCount` citations; a fact left citing nothing is dropped, since a fact must be
 * traceable to a page a tool returned.
 */
export function groundedFacts(facts: readonly ExtractedFact[], citationCount: number): ExtractedFact[] {
  return facts.flatMap((fact) => {
    const sources = validCitationNumbers(fact.source_citation, citationCount);
    return sources.length === 0 ? [] : [{ ...fact, category: fact.category.trim().toLowerCase(), source_citation: sources }];
  });
}

export function summarizeFacts(facts: readonly ExtractedFact[]): FactSummary {
  const categorized: Record<string, number> = {};
  for (const fact of facts) categorized[fact.category] = (categorized[fact.category] ?? 0) + 1;
  return {
    total_facts: facts.length,
    high_confidence: facts.filter((fact) => fact.confidence >= HIGH_CONFIDENCE).length,
    categorized_facts: categorized,
    contradiction_count: facts.reduce((sum, fact) => sum + fact.contradictions.length, 0),
  };
}
