import type { ClaimEvidence } from './verification/rank-evidence.ts';

/**
 * What each phase of a research task asks the model (issue 27 Scope 2). A prompt is a system text and a user
 * text; the material a phase works on goes in Markdown sections (`## Question`, `## Sources`, …) so that a model,
 * and the mock provider, can tell the parts apart. Structured phases also get a JSON schema with the call.
 */
export interface PhasePrompt {
  system: string;
  user: string;
}

/** A page the report may cite, numbered as the report's `[n]`. */
export interface NumberedSource {
  title: string;
  url: string;
  /** The part of the page the writer sees: its snippet, or the start of its text. */
  excerpt: string;
}

export interface AgentFinding {
  /** The research subtask the agent worked on. */
  subtask: string;
  answer: string;
}

const section = (heading: string, body: string) => `## ${heading}\n${body.trim()}\n`;
const bullets = (lines: readonly string[]) => lines.map((line) => `- ${line}`).join('\n');

export function refinementPrompt(query: string, confirmedPlan?: string): PhasePrompt {
  return {
    system: 'You plan web research. Restate the question so that searches can answer it, split it into the dimensions '
      + 'a thorough answer covers (each with its priority and the questions to ask), classify it, and name the entity '
      + 'it is about, its official sites and any exact phrases to search for. Answer with JSON that fits the schema.',
    user: [
      section('Question', query),
      confirmedPlan ? section('Plan confirmed by the user', `${confirmedPlan}\nFollow this plan: its priorities come first.`) : '',
    ].join('\n'),
  };
}

/** One research agent's assignment: search first, then read the best pages, then report what they say, with urls. */
export function researchAgentPrompt(subtask: string, question: string): PhasePrompt {
  return {
    system: 'You are a research agent. Use web_search to find pages about your assignment, then web_fetch to read the '
      + 'most relevant ones; do not answer from memory. Report only what the pages you read say, each finding followed '
      + 'by the url of the page it comes from.',
    user: [section('Assignment', subtask), section('Overall question', question)].join('\n'),
  };
}

export function synthesisPrompt(question: string, findings: readonly AgentFinding[], sources: readonly NumberedSource[]): PhasePrompt {
  return {
    system: 'You write research reports. Answer the question from the findings and the numbered sources only. Put the '
      + 'number of the source behind every statement it supports, as [1] or [2, 3]; cite no number that is not listed '
      + 'and add no Sources section (it is added for you). Start with a short direct answer, then the details.',
    user: [
      section('Question', question),
      section('Findings', findings.map((finding) => `### ${finding.subtask}\n${finding.answer}`).join('\n\n')),
      section('Sources', numberedSources(sources)),
    ].join('\n'),
  };
}

export function coveragePrompt(question: string, report: string, round: number): PhasePrompt {
  return {
    system: 'You review research reports for coverage. Judge how much of the question the report answers with cited '
      + 'sources, list the gaps it cannot do without (critical) and those it could (optional), and say whether another '
      + 'round of research should fill the critical gaps. Answer with JSON that fits the schema.',
    user: [section('Question', question), section(`Report after round ${round}`, report)].join('\n'),
  };
}

export function subqueryPrompt(question: string, gaps: readonly string[]): PhasePrompt {
  return {
    system: 'You write web searches. For each gap, write one search that would find pages filling it. '
      + 'Answer with JSON that fits the schema.',
    user: [section('Question', question), section('Gaps', bullets(gaps))].join('\n'),
  };
}

export function claimExtractionPrompt(report: string): PhasePrompt {
  return {
    system: 'You extract checkable claims. List the factual statements of the report that a source could confirm or '
      + 'refute, each rewritten to stand alone, without its citation markers. Answer with JSON that fits the schema.',
    user: section('Report', report),
  };
}

export function verificationPrompt(claims: readonly ClaimEvidence[]): PhasePrompt {
  const blocks = claims.map((claim, index) => {
    const evidence = claim.evidence.length === 0
      ? 'No source matched this claim.'
      : claim.evidence.map((match) => `[${match.citation}] ${oneLine(match.passage)}`).join('\n');
    return `### Claim ${index + 1}\n${claim.claim}\nEvidence:\n${evidence}`;
  });
  return {
    system: 'You check claims against evidence. For each claim, judge from its evidence alone whether it is supported, '
      + 'unsupported (the evidence says otherwise) or has insufficient evidence; name the source numbers that support '
      + 'it and those that contradict it. Answer with JSON that fits the schema, one verdict per claim, in order.',
    user: section('Claims', blocks.join('\n\n')),
  };
}

export function factExtractionPrompt(report: string, sources: readonly NumberedSource[]): PhasePrompt {
  return {
    system: 'You extract structured facts from a research report: each fact a single statement with its category, your '
      + 'confidence, the numbers of the sources it comes from, the entities it mentions, when it holds, whether it is '
      + 'quantitative, and any statement of the sources that contradicts it. Answer with JSON that fits the schema.',
    user: [section('Report', report), section('Sources', numberedSources(sources))].join('\n'),
  };
}

function numberedSources(sources: readonly NumberedSource[]): string {
  return sources.map((source, index) => `[${index + 1}] ${source.title} — ${source.url}\n${oneLine(source.excerpt)}`).join('\n');
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
