import type { LanguageModelV3CallOptions, LanguageModelV3FunctionTool, LanguageModelV3Prompt, LanguageModelV3ToolResultOutput } from '@ai-sdk/provider';
import type { MockToolCall } from './mock-tool-calls.ts';

/**
 * The mock provider as a research partner (issue 27 Scope 8): offline, it answers every phase of a research task
 * with a valid answer derived from the prompt, which carries what the task searched and fetched, so that a first
 * research task without keys produces a cited report from the fixture corpus. The workflow names the phase in
 * `providerOptions.mock.purpose`; a real provider gets the same prompt and schema.
 */
export const RESEARCH_PURPOSES = [
  'research-refinement', 'research-agent', 'research-synthesis', 'coverage-evaluation', 'subquery-generation',
  'claim-extraction', 'claim-verification', 'fact-extraction', 'research-plan',
] as const;
export type ResearchPurpose = (typeof RESEARCH_PURPOSES)[number];

const isResearchPurpose = (value: unknown): value is ResearchPurpose => RESEARCH_PURPOSES.includes(value as ResearchPurpose);

/** Whether the call is a phase of a research task (its answer is composed here, whole). */
export const isResearchCall = (options: LanguageModelV3CallOptions) => isResearchPurpose(options.providerOptions?.mock?.purpose);

/** Pages a mock research agent reads of what its search found. */
const PAGES_READ = 2;
const REPORT_SOURCES = 8;
const MAX_CLAIMS = 10;

/** The answer for a research phase, or undefined when the call is not one. */
export function composeResearchAnswer(options: LanguageModelV3CallOptions): string | undefined {
  const mock = options.providerOptions?.mock;
  const purpose = mock?.purpose;
  if (!isResearchPurpose(purpose)) return undefined;
  const user = lastUserText(options.prompt);
  switch (purpose) {
    case 'research-refinement': return JSON.stringify(refine(sectionOf(user, 'Question'), sectionOf(user, 'Plan confirmed by the user')));
    case 'research-agent': return reportFindings(options.prompt);
    case 'research-synthesis': return writeReport(sectionOf(user, 'Question'), parseSources(sectionOf(user, 'Sources')));
    case 'coverage-evaluation': return JSON.stringify(evaluateCoverage(mock?.coverage, sectionOf(user, 'Question'), sectionOf(user, 'Report after round')));
    case 'subquery-generation': return JSON.stringify(subqueriesFor(sectionOf(user, 'Question'), bulletsOf(sectionOf(user, 'Gaps'))));
    case 'claim-extraction': return JSON.stringify({ claims: citedSentences(sectionOf(user, 'Report')).slice(0, MAX_CLAIMS).map((sentence) => sentence.text) });
    case 'claim-verification': return JSON.stringify({ verdicts: parseClaims(sectionOf(user, 'Claims')).map(judgeClaim) });
    case 'fact-extraction': return JSON.stringify({ facts: citedSentences(sectionOf(user, 'Report')).map(toFact) });
    case 'research-plan': return draftPlan(options.prompt, mock?.intent);
  }
}

/** A research agent's tool turns: search for its assignment, then read the best pages found; then it answers. */
export function researchAgentToolCalls(options: LanguageModelV3CallOptions): MockToolCall[] | undefined {
  if (options.providerOptions?.mock?.purpose !== 'research-agent') return undefined;
  const offered = new Set((options.tools ?? []).filter((tool): tool is LanguageModelV3FunctionTool => tool.type === 'function').map((tool) => tool.name));
  const results = toolResults(options.prompt);
  if (!results.some((result) => result.tool === 'web_search') && offered.has('web_search')) {
    return [{ toolCallId: 'mock-research-search', toolName: 'web_search', input: { query: searchQuery(sectionOf(lastUserText(options.prompt), 'Assignment')), max_results: 5 } }];
  }
  const found = results.filter((result) => result.tool === 'web_search').flatMap((result) => searchHits(result.value));
  if (!results.some((result) => result.tool === 'web_fetch') && offered.has('web_fetch') && found.length > 0) {
    return [{ toolCallId: 'mock-research-fetch', toolName: 'web_fetch', input: { urls: found.slice(0, PAGES_READ).map((hit) => hit.url) } }];
  }
  return [];
}

/** Plan items a research dimension is made of: the numbered lines of a plan. */
const PLAN_ITEM = /^\s*\d+\.\s+(.+)$/gm;
const MAX_PLAN_ITEMS = 5;

/**
 * A research plan for review: one numbered item per part of the question, then one per piece of the owner's feedback
 * (every user turn after the question), so that the plan visibly follows what the owner asked. Ends with the intent
 * tag (`ready` unless the script says otherwise: a `feedback` reply asks a question instead).
 */
function draftPlan(prompt: LanguageModelV3Prompt, scriptedIntent: unknown): string {
  const turns = prompt.filter((message) => message.role === 'user').map(textOf);
  const question = sectionOf(turns[0] ?? '', 'Question');
  if (scriptedIntent === 'feedback') {
    return `Before I plan "${firstWords(question, 12)}": which part matters most to you, and for what period? [INTENT:feedback]`;
  }
  const feedback = turns.slice(1).map((turn) => firstSentence(sectionOf(turn, 'Feedback')).replace(/[.!?]+$/, '')).filter(Boolean);
  const items = [...questionParts(question), ...feedback];
  return [
    `Research plan for "${firstWords(question, 16)}":`,
    ...items.map((item, index) => `${index + 1}. ${item}`),
    'Sources: pages found by web search, each read in full before it is cited.',
    'Report: a cited answer to the question, with its list of sources.',
    `[RESEARCH_BRIEF]Answer "${firstWords(question, 16)}" covering: ${items.join('; ')}.[/RESEARCH_BRIEF]`,
    `[INTENT:${scriptedIntent === 'execute' ? 'execute' : 'ready'}]`,
  ].join('\n');
}

function questionParts(question: string): string[] {
  const parts = question.split(/\s*(?:[?;,]|\band\b)\s*/i).map((part) => part.trim()).filter((part) => part.split(/\s+/).length >= 2).slice(0, 3);
  return parts.length > 0 ? parts : [question.trim()];
}

function refine(question: string, confirmedPlan: string) {
  const planned = [...confirmedPlan.matchAll(PLAN_ITEM)].map((match) => match[1].trim()).slice(0, MAX_PLAN_ITEMS);
  const parts = planned.length > 0 ? planned : questionParts(question);
  const dimensions = parts.map((part, index) => ({
    dimension: part.slice(0, 200), priority: index === 0 ? 'high' : 'medium', questions: [`${part.replace(/[?.!]+$/, '')}?`.slice(0, 300)],
  }));
  const plan = confirmedPlan ? ` (as planned: ${firstWords(confirmedPlan, 12)})` : '';
  return {
    refined_query: `${question.trim()}${plan}`.slice(0, 2000),
    research_areas: dimensions.map((dimension) => dimension.dimension),
    research_dimensions: dimensions,
    query_type: queryType(question),
    exact_queries: [...question.matchAll(/"([^"]{2,100})"/g)].map((match) => match[1]),
    detected_language: 'en',
  };
}

function queryType(question: string): string {
  if (/\b(compare|comparison|versus|vs\.?|difference between)\b/i.test(question)) return 'comparative';
  if (/\b(company|companies|inc|corp|startup)\b/i.test(question)) return 'company';
  if (/\b(market|industry|sector)\b/i.test(question)) return 'industry';
  if (/\b(study|studies|scientific|theory|evidence)\b/i.test(question)) return 'scientific';
  return 'exploratory';
}

/** What the agent read, one finding per page with its url; the search's snippets when it read nothing. */
function reportFindings(prompt: LanguageModelV3Prompt): string {
  const results = toolResults(prompt);
  const pages = results.filter((result) => result.tool === 'web_fetch').flatMap((result) => fetchedPages(result.value));
  const findings = pages.length > 0
    ? pages.map((page) => `${firstSentence(page.content)} (${page.url})`)
    : results.filter((result) => result.tool === 'web_search').flatMap((result) => searchHits(result.value)).slice(0, PAGES_READ)
      .map((hit) => `${firstSentence(hit.snippet)} (${hit.url})`);
  return findings.length > 0 ? `Findings:\n${findings.map((finding) => `- ${finding}`).join('\n')}` : 'No page answered this assignment.';
}

/** Like a writer, the mock cites the sources that bear on the question first (most shared words), at least three. */
function writeReport(question: string, sources: ParsedSource[]): string {
  const asked = new Set(contentWords(question));
  const overlap = (source: ParsedSource) => contentWords(`${source.title} ${source.excerpt}`).filter((word) => asked.has(word)).length;
  const ranked = sources.map((source) => ({ source, score: overlap(source) })).sort((left, right) => right.score - left.score);
  const relevant = ranked.filter((entry, index) => entry.score > 0 || index < 3).map((entry) => entry.source);
  const cited = relevant.slice(0, REPORT_SOURCES);
  if (cited.length === 0) return `No source was found for: ${question.trim()}`;
  const paragraphs = cited.map((source) => `${stripEnd(firstSentence(source.excerpt) || source.title)} [${source.number}].`);
  return [`Research report: ${question.trim()}`, ...paragraphs].join('\n\n');
}

type ScriptedCoverage = 'gaps' | 'complete' | Record<string, unknown>;

/** A scripted evaluation (`context.mock_coverage`, one entry per round) wins; otherwise three cited sources suffice. */
function evaluateCoverage(scripted: unknown, question: string, report: string) {
  if (typeof scripted === 'object' && scripted !== null) return scripted;
  const cited = new Set([...report.matchAll(/\[(\d{1,3})\]/g)].map((match) => match[1])).size;
  const verdict = (scripted as ScriptedCoverage | undefined) ?? (cited >= 3 ? 'complete' : 'gaps');
  if (verdict === 'complete') {
    return { overall_coverage: 0.9, critical_gaps: [], optional_gaps: [], should_continue: false, recommended_action: 'complete', reasoning: `${cited} sources cited` };
  }
  const topic = firstWords(question.replace(/[?.!]+$/, ''), 10);
  return {
    overall_coverage: 0.5,
    critical_gaps: [`more sources on ${topic}`, `recent figures on ${topic}`],
    optional_gaps: [`history of ${topic}`],
    should_continue: true,
    recommended_action: 'continue',
    reasoning: `${cited} sources cited`,
  };
}

function subqueriesFor(question: string, gaps: string[]) {
  const targets = gaps.length > 0 ? gaps : [question.trim()];
  return { subqueries: targets.slice(0, 10).map((gap) => ({ query: searchQuery(gap), target_gap: gap.slice(0, 500), priority: 'high' })) };
}

interface CitedSentence {
  text: string;
  citations: number[];
}

/** The report's sentences that cite a source, without their markers. */
function citedSentences(report: string): CitedSentence[] {
  const body = report.split(/^#{1,6}\s*sources\b/im)[0];
  return body.split(/(?<=[.!?](?:\s*\[[\d,\s-]+\])*)\s+/).flatMap((sentence) => {
    const citations = [...sentence.matchAll(/\[([\d,\s]+)\]/g)].flatMap((match) => match[1].split(',').map(Number)).filter((number) => number > 0);
    const text = sentence.replace(/\s*\[[\d,\s-]+\]/g, '').trim();
    return citations.length > 0 && contentWords(text).length >= 3 ? [{ text: text.slice(0, 1000), citations: [...new Set(citations)] }] : [];
  });
}

interface ParsedClaim {
  claim: string;
  evidence: Array<{ citation: number; passage: string }>;
}

function parseClaims(section: string): ParsedClaim[] {
  return section.split(/^### Claim \d+\s*$/m).slice(1).map((block) => {
    const [claimPart, evidencePart = ''] = block.split(/^Evidence:\s*$/m);
    const evidence = [...evidencePart.matchAll(/^\[(\d+)\] (.*)$/gm)].map((match) => ({ citation: Number(match[1]), passage: match[2] }));
    return { claim: claimPart.trim().slice(0, 1000), evidence };
  });
}

/** Supported when a passage holds most of the claim's content words; otherwise the evidence is insufficient. */
function judgeClaim({ claim, evidence }: ParsedClaim) {
  const words = contentWords(claim);
  const scored = evidence.map((match) => {
    const passage = new Set(contentWords(match.passage));
    return { citation: match.citation, share: words.length === 0 ? 0 : words.filter((word) => passage.has(word)).length / words.length };
  });
  const supporting = scored.filter((match) => match.share >= 0.5);
  if (supporting.length === 0) {
    return { claim: claim || 'empty claim', verdict: 'insufficient_evidence', confidence: 0.5, supporting_citations: [], conflicting_citations: [] };
  }
  const best = Math.max(...supporting.map((match) => match.share));
  return {
    claim: claim || 'empty claim', verdict: 'supported', confidence: Number((0.6 + 0.4 * best).toFixed(2)),
    supporting_citations: supporting.map((match) => match.citation), conflicting_citations: [],
  };
}

function toFact(sentence: CitedSentence) {
  const year = /\b(1[0-9]{3}|20[0-9]{2})\b/.exec(sentence.text)?.[1] ?? null;
  const quantitative = /\d/.test(sentence.text.replace(/\b(1[0-9]{3}|20[0-9]{2})\b/g, ''));
  const entities = [...new Set([...sentence.text.matchAll(/(?<=\s)([A-Z][\w-]+(?:\s+[A-Z][\w-]+)*)/g)].map((match) => match[1]))].slice(0, 5);
  return {
    statement: sentence.text,
    category: quantitative ? 'statistic' : year ? 'event' : 'description',
    confidence: sentence.citations.length > 1 ? 0.9 : 0.75,
    source_citation: sentence.citations,
    entity_mentions: entities,
    temporal_marker: year,
    is_quantitative: quantitative,
    contradictions: [],
  };
}

interface ParsedSource {
  number: number;
  title: string;
  url: string;
  excerpt: string;
}

/** `[n] title — url` lines, each followed by an excerpt line (research-prompts.ts). */
function parseSources(section: string): ParsedSource[] {
  return [...section.matchAll(/^\[(\d+)\] (.*) — (\S+)\n(.*)$/gm)].map((match) => ({ number: Number(match[1]), title: match[2], url: match[3], excerpt: match[4] }));
}

/** The body of the `## <heading>` section (a heading that starts with `heading`), or ''. */
function sectionOf(text: string, heading: string): string {
  const start = text.search(new RegExp(`^## ${heading.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*$`, 'm'));
  if (start < 0) return '';
  const body = text.slice(text.indexOf('\n', start) + 1);
  const end = body.search(/^## /m);
  return (end < 0 ? body : body.slice(0, end)).trim();
}

const bulletsOf = (section: string) => [...section.matchAll(/^- (.+)$/gm)].map((match) => match[1].trim());

interface ToolResult {
  tool: string;
  value: unknown;
}

function toolResults(prompt: LanguageModelV3Prompt): ToolResult[] {
  return prompt.flatMap((message) => (message.role === 'tool' ? message.content : []))
    .flatMap((part) => (part.type === 'tool-result' ? [{ tool: part.toolName, value: outputValue(part.output) }] : []));
}

function outputValue(output: LanguageModelV3ToolResultOutput): unknown {
  if (output.type === 'json') return output.value;
  if (output.type !== 'text') return undefined;
  try {
    return JSON.parse(output.value);
  } catch {
    return undefined;
  }
}

function searchHits(value: unknown): Array<{ url: string; snippet: string }> {
  const results = (value as { results?: unknown } | undefined)?.results;
  return Array.isArray(results)
    ? results.filter((hit) => typeof hit?.url === 'string').map((hit) => ({ url: hit.url, snippet: String(hit.snippet ?? hit.title ?? '') }))
    : [];
}

function fetchedPages(value: unknown): Array<{ url: string; content: string }> {
  const pages = (value as { pages?: unknown } | undefined)?.pages;
  return Array.isArray(pages)
    ? pages.filter((page) => typeof page?.url === 'string' && typeof page?.content === 'string' && !page.error)
      .map((page) => ({ url: page.final_url ?? page.url, content: page.content }))
    : [];
}

function lastUserText(prompt: LanguageModelV3Prompt): string {
  const message = prompt.findLast((candidate) => candidate.role === 'user');
  return message ? textOf(message) : '';
}

function textOf(message: LanguageModelV3Prompt[number]): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => ('text' in part && typeof part.text === 'string' ? part.text : '')).join('\n');
}

/** The first sentence of a page's prose, its Markdown headings left out. */
function firstSentence(text: string): string {
  const prose = text.split('\n').map((line) => line.trim()).filter((line) => line.length > 0 && !line.startsWith('#')).join(' ');
  const sentence = /^(.{20,400}?[.!?])(\s|$)/.exec(prose)?.[1] ?? prose.slice(0, 300);
  return sentence.trim();
}

const STOP_WORDS = new Set('a an and are as at be by for from has have in is it its of on or that the their this to was were which with'.split(' '));

function contentWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((word) => word.length > 2 && !STOP_WORDS.has(word));
}

const searchQuery = (text: string) => firstWords(text.replace(/[?.!"]+/g, ' '), 12).replace(/ …$/, '') || 'overview';
const stripEnd = (sentence: string) => sentence.replace(/[.!?]+$/, '');

function firstWords(text: string, count: number): string {
  const words = text.split(/\s+/).filter(Boolean);
  return words.slice(0, count).join(' ') + (words.length > count ? ' …' : '');
}
