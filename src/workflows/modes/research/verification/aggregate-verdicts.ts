import type { ClaimVerdict, Verdict } from '../model-answers/claims.ts';
import { validCitationNumbers } from '../model-answers/parse-model-answer.ts';

/** One claim's verdict as `metadata.verification.claim_details[]` carries it (spec 2.6). */
export interface ClaimDetail {
  claim: string;
  verdict: Verdict;
  supporting_citations: number[];
  conflicting_citations: number[];
  confidence: number;
  explanation?: string;
}

export interface VerificationConflict {
  claim: string;
  supporting_citations: number[];
  conflicting_citations: number[];
}

/** `metadata.verification` (spec 2.6; reference §1.7). */
export interface VerificationSummary {
  /** 0..1: the confidence of the supported claims, summed over all claims (unsupported and unsure ones count 0). */
  overall_confidence: number;
  total_claims: number;
  supported_claims: number;
  /** The texts of the claims the sources contradict or do not bear out. */
  unsupported_claims: string[];
  /** The texts of the claims the evidence was too thin to judge. */
  insufficient_evidence_claims: string[];
  /** Claims some citations contradict, with the citations on each side. */
  conflicts: VerificationConflict[];
  /** 0..1: the share of claims with at least one supporting citation. */
  evidence_coverage: number;
  claim_details: ClaimDetail[];
}

/**
 * The verification summary of a report from the model's per-claim verdicts. Citation numbers that name none of the
 * `citationCount` citations are dropped, and a claim called supported with no supporting citation left is
 * `insufficient_evidence`: support must point at a page a tool returned.
 */
export function aggregateVerdicts(verdicts: readonly ClaimVerdict[], citationCount: number): VerificationSummary {
  const details = verdicts.map((verdict) => groundedDetail(verdict, citationCount));
  const total = details.length;
  const withVerdict = (verdict: Verdict) => details.filter((detail) => detail.verdict === verdict);
  const supported = withVerdict('supported');
  const share = (value: number) => (total === 0 ? 0 : round(value / total));
  return {
    overall_confidence: share(supported.reduce((sum, detail) => sum + detail.confidence, 0)),
    total_claims: total,
    supported_claims: supported.length,
    unsupported_claims: withVerdict('unsupported').map((detail) => detail.claim),
    insufficient_evidence_claims: withVerdict('insufficient_evidence').map((detail) => detail.claim),
    conflicts: details.filter((detail) => detail.conflicting_citations.length > 0).map(({ claim, supporting_citations, conflicting_citations }) =>
      ({ claim, supporting_citations, conflicting_citations })),
    evidence_coverage: share(details.filter((detail) => detail.supporting_citations.length > 0).length),
    claim_details: details,
  };
}

function groundedDetail(verdict: ClaimVerdict, citationCount: number): ClaimDetail {
  const supporting = validCitationNumbers(verdict.supporting_citations, citationCount);
  const conflicting = validCitationNumbers(verdict.conflicting_citations, citationCount).filter((number) => !supporting.includes(number));
  const groundedVerdict: Verdict = verdict.verdict === 'supported' && supporting.length === 0 ? 'insufficient_evidence' : verdict.verdict;
  return {
    claim: verdict.claim,
    verdict: groundedVerdict,
    supporting_citations: supporting,
    conflicting_citations: conflicting,
    confidence: round(Math.min(1, Math.max(0, verdict.confidence))),
    ...(verdict.explanation ? { explanation: verdict.explanation } : {}),
  };
}

const round = (value: number) => Math.round(value * 1000) / 1000;
