import { Type, type Static } from 'typebox';

/** What claim extraction answers: the report's checkable statements, each standing alone. */
export const ClaimExtractionSchema = Type.Object({
  claims: Type.Array(Type.String({ minLength: 1, maxLength: 1000 }), { maxItems: 50 }),
});

export type ClaimExtraction = Static<typeof ClaimExtractionSchema>;

export const VERDICTS = ['supported', 'unsupported', 'insufficient_evidence'] as const;
export type Verdict = (typeof VERDICTS)[number];

const CitationNumbers = Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 50 });

const ClaimVerdictSchema = Type.Object({
  claim: Type.String({ minLength: 1, maxLength: 1000 }),
  verdict: Type.Enum([...VERDICTS]),
  /** 0..1: how sure the verdict is. */
  confidence: Type.Number({ minimum: 0, maximum: 1 }),
  /** Citation numbers ([n]) whose text supports the claim. */
  supporting_citations: CitationNumbers,
  /** Citation numbers whose text contradicts it. */
  conflicting_citations: CitationNumbers,
  explanation: Type.Optional(Type.String({ maxLength: 2000 })),
});

/** What the verification call answers: one verdict per claim, judged on the evidence retrieved for it. */
export const ClaimVerdictsSchema = Type.Object({ verdicts: Type.Array(ClaimVerdictSchema, { maxItems: 50 }) });

export type ClaimVerdict = Static<typeof ClaimVerdictSchema>;
export type ClaimVerdicts = Static<typeof ClaimVerdictsSchema>;
