import { Type, type Static } from 'typebox';

const Gaps = Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 10 });

/** What a coverage evaluation answers in the iterative loop (reference §1.7 EvaluateCoverage). */
export const CoverageEvaluationSchema = Type.Object({
  /** 0..1: how much of the question the synthesis answers with sources. */
  overall_coverage: Type.Number({ minimum: 0, maximum: 1 }),
  /** Gaps the answer cannot do without; the next round's subqueries target these. */
  critical_gaps: Gaps,
  optional_gaps: Gaps,
  should_continue: Type.Boolean(),
  recommended_action: Type.Enum(['continue', 'complete']),
  reasoning: Type.Optional(Type.String({ maxLength: 2000 })),
});

export type CoverageEvaluation = Static<typeof CoverageEvaluationSchema>;

/** The loop goes on only when the model asks for it and names a critical gap to fill. */
export const wantsAnotherRound = (evaluation: CoverageEvaluation) =>
  evaluation.should_continue && evaluation.recommended_action === 'continue' && evaluation.critical_gaps.length > 0;

/** What subquery generation answers: searches aimed at the gaps (reference §1.7 GenerateSubqueries). */
export const SubqueryGenerationSchema = Type.Object({
  subqueries: Type.Array(Type.Object({
    query: Type.String({ minLength: 1, maxLength: 400 }),
    /** The gap it fills, as the evaluation worded it. */
    target_gap: Type.Optional(Type.String({ maxLength: 500 })),
    priority: Type.Optional(Type.Enum(['high', 'medium', 'low'])),
  }), { minItems: 1, maxItems: 10 }),
});

export type SubqueryGeneration = Static<typeof SubqueryGenerationSchema>;
