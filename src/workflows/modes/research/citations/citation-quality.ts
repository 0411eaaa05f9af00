const DAY_MS = 86_400_000;

/** What a source's quality is judged on. */
export interface QualityInputs {
  /** 0..1 */
  relevance: number;
  /** YYYY-MM-DD or any date Date.parse reads; undefined when unknown. */
  publishedDate: string | undefined;
  hasTitle: boolean;
  hasSnippet: boolean;
}

/** Newer is better: under a week 1.0, a month 0.7, a quarter 0.4; older, unknown or in the future 0.2 (reference §1.9). */
export function scoreRecency(publishedDate: string | undefined, now: Date): number {
  const published = publishedDate === undefined ? Number.NaN : Date.parse(publishedDate);
  const ageDays = (now.getTime() - published) / DAY_MS;
  if (Number.isNaN(ageDays) || ageDays < -1) return 0.2;
  if (ageDays < 7) return 1;
  if (ageDays < 30) return 0.7;
  if (ageDays < 90) return 0.4;
  return 0.2;
}

/** relevance × 0.7 + recency × 0.3 + a little for each of date, title and snippet, at most 1 (reference §1.9). */
export function scoreQuality(inputs: QualityInputs, now: Date): number {
  const completeness = (inputs.publishedDate ? 0.033 : 0) + (inputs.hasTitle ? 0.033 : 0) + (inputs.hasSnippet ? 0.034 : 0);
  return Math.min(1, inputs.relevance * 0.7 + scoreRecency(inputs.publishedDate, now) * 0.3 + completeness);
}
