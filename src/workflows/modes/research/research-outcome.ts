import type { PartialResult } from '../../runtime/partial-result.ts';
import type { AgentAnswer } from '../../runtime/task-snapshot.ts';
import type { SubtaskResult } from '../../team/subtask-agent.ts';
import { citationMetadata, citationStats, type RankedCitation } from './citations/collect-citations.ts';
import { buildCitedReport } from './citations/cited-report.ts';
import type { ResearchSettings } from './strategy/research-settings.ts';
import type { VerificationSummary } from './verification/aggregate-verdicts.ts';

/** What a research task has produced so far: its result once it completes, its partial result if a phase fails. */
export interface ResearchProgress {
  /** Every research agent's result so far, the gap-filling ones included. */
  findings: SubtaskResult[];
  /** The citations of everything the task's tools returned so far. */
  citations: RankedCitation[];
  /** The latest report, with the sources its writer was given (its `[n]` are positions in them). */
  report?: WrittenReport;
  iterations: number;
  verification?: VerificationSummary;
}

export interface WrittenReport {
  answer: AgentAnswer;
  sources: RankedCitation[];
}

export interface CitedText {
  text: string;
  citations: RankedCitation[];
}

/** The report with its markers renumbered by first appearance and one Sources list (as written when citations are off). */
export function citeReport(settings: ResearchSettings, report: WrittenReport): CitedText {
  return settings.citations ? buildCitedReport(report.answer.text, report.sources) : { text: report.answer.text, citations: [] };
}

/** A research task's metadata (spec 2.6), completed or failed; `citations[n - 1]` is the report's `[n]`. */
export function researchMetadata(settings: ResearchSettings, progress: ResearchProgress, citations: RankedCitation[]): Record<string, unknown> {
  const listed = citations.map(citationMetadata);
  return {
    research_strategy: settings.strategy,
    iterations: progress.iterations,
    agent_count: progress.findings.length,
    citations: listed,
    citation_stats: citationStats(listed),
    ...(progress.verification ? { verification: progress.verification } : {}),
  };
}

/**
 * What a failed research task keeps (issue 27 Scope 7, docs/decisions.md): the phase it failed in; as its result,
 * the latest report cited as a completed one is ('' before the first synthesis); the citations (the report's, else
 * all those collected so far); and the answers of the research agents that succeeded.
 */
export function partialResearchResult(settings: ResearchSettings, progress: ResearchProgress, failedPhase: string): PartialResult {
  const cited = progress.report && citeReport(settings, progress.report);
  const citations = cited?.citations ?? (settings.citations ? progress.citations : []);
  return {
    result: cited?.text ?? '',
    metadata: {
      failed_phase: failedPhase,
      ...researchMetadata(settings, progress, citations),
      partial_findings: progress.findings.flatMap((finding) => (finding.ok ? [{ agent_id: finding.subtaskId, answer: finding.answer.text }] : [])),
    },
  };
}
