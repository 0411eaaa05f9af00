import { Type, type Static } from 'typebox';

const Phrases = (maxItems: number) => Type.Array(Type.String({ minLength: 1, maxLength: 300 }), { maxItems });

/** What the query-refinement call answers (reference §1.7 RefineResearchQuery), the research's starting point. */
export const RefinementSchema = Type.Object({
  refined_query: Type.String({ minLength: 1, maxLength: 2000 }),
  research_areas: Phrases(10),
  research_dimensions: Type.Array(Type.Object({
    dimension: Type.String({ minLength: 1, maxLength: 200 }),
    priority: Type.Enum(['high', 'medium', 'low']),
    questions: Phrases(10),
    source_types: Type.Optional(Phrases(10)),
  }), { maxItems: 10 }),
  query_type: Type.Enum(['company', 'industry', 'scientific', 'comparative', 'exploratory']),
  /** The entity's official name when the query is about one (a company, a product). */
  canonical_name: Type.Optional(Type.String({ maxLength: 200 })),
  official_domains: Type.Optional(Phrases(10)),
  disambiguation_terms: Type.Optional(Phrases(10)),
  /** Searches to run word for word (quoted names, identifiers). */
  exact_queries: Type.Optional(Phrases(10)),
  localization_needed: Type.Optional(Type.Boolean()),
  target_languages: Type.Optional(Type.Array(Type.String({ minLength: 2, maxLength: 16 }), { maxItems: 10 })),
  detected_language: Type.Optional(Type.String({ minLength: 2, maxLength: 16 })),
});

export type Refinement = Static<typeof RefinementSchema>;
