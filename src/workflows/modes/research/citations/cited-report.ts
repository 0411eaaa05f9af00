import { doiOf, normalizeUrl } from './normalize-url.ts';

/** What the report step needs of a citation; `matchKeys` (normalised urls, `doi:` keys) widen what a Sources line may name. */
export interface CitableSource {
  url: string;
  title: string;
  matchKeys?: readonly string[];
}

export interface CitedReport<T extends CitableSource> {
  /** The report with its markers renumbered and one `## Sources` section at the end (none when nothing is cited). */
  text: string;
  /** The sources cited, in the order of the new numbers: `[n]` is `citations[n - 1]` (spec 2.6). */
  citations: T[];
  /** Markers dropped because they named no source a tool returned. */
  droppedMarkers: number;
}

/** `## Sources`, `### References:`, or a line of its own such as `**Sources:**` (which runs to the next heading). */
const SOURCES_HEADING = /^(#{1,6})?\s*\**\s*(sources|references|citations|bibliography|works cited)\s*:?\s*\**\s*:?$/i;
const BELOW_EVERY_HEADING = 7;
const HEADING = /^(#{1,6})\s/;
const FENCE = /^\s*(```|~~~)/;
/**
 * `[1]`, `[1, 2]`, `[1-3]` (up to three digits: `[2024]` is a year): not after a word character (`array[1]`) or a
 * link's text (`[text][1]`, while `[1][2]` is two markers), not a link (`[1](…)`) nor a reference definition (`[1]: …`).
 */
const MARKER = /([ \t]*)(?<![\w\\])(?<![^\d\s]\])\[(\d{1,3}(?:\s*[-–]\s*\d{1,3})?(?:\s*,\s*\d{1,3}(?:\s*[-–]\s*\d{1,3})?)*)\](?![(:])/g;
const URL_IN_LINE = /https?:\/\/[^\s<>()\]]+/;

/**
 * The final report (reference §1.9): every `[n]` marker resolved to a source, renumbered by first appearance,
 * and the report's own Sources sections replaced by one listing exactly the sources cited. A marker resolves
 * through the report's Sources list when that list gives its number a url (it must be one of `sources`), else to
 * `sources[n - 1]`; a marker that resolves to nothing is dropped, so no `[n]` points to a url no tool returned.
 * Markers inside code are left alone. With `includeUncited`, the sources never cited follow the cited ones.
 */
export function buildCitedReport<T extends CitableSource>(report: string, sources: readonly T[], options: { includeUncited?: boolean } = {}): CitedReport<T> {
  const { body, listed } = splitSourcesSections(report);
  const lookup = sourceLookup(sources);
  const resolve = (number: number): T | undefined => {
    const listedUrl = listed.get(number);
    if (listedUrl !== undefined) return lookup(listedUrl);
    return number >= 1 && number <= sources.length ? sources[number - 1] : undefined;
  };
  const cited: T[] = [];
  let droppedMarkers = 0;
  const renumber = (markerText: string) => {
    const numbers: number[] = [];
    for (const number of expandMarker(markerText)) {
      const source = resolve(number);
      if (!source) {
        droppedMarkers += 1;
        continue;
      }
      if (!cited.includes(source)) cited.push(source);
      const renumbered = cited.indexOf(source) + 1;
      if (!numbers.includes(renumbered)) numbers.push(renumbered);
    }
    return numbers;
  };
  const text = rewriteOutsideCode(body, (part) => part.replace(MARKER, (marker: string, space: string, inner: string, offset: number, line: string) => {
    const numbers = renumber(inner);
    if (numbers.length > 0) return `${space}[${numbers.join(', ')}]`;
    // A dropped marker takes its leading space with it unless a word follows, so "fact [9]." reads "fact.".
    const next = line[offset + marker.length];
    return next !== undefined && /[\w[]/.test(next) ? space : '';
  }));
  const listedSources = options.includeUncited ? [...cited, ...sources.filter((source) => !cited.includes(source))] : cited;
  return { text: withSourcesSection(text, listedSources), citations: listedSources, droppedMarkers };
}

/** The numbers of `1`, `1, 2`, `2-4` (a range longer than 50 is not a citation range and yields nothing). */
function expandMarker(inner: string): number[] {
  return inner.split(',').flatMap((part) => {
    const [from, to] = part.split(/[-–]/).map((value) => Number.parseInt(value.trim(), 10));
    if (to === undefined) return [from!];
    if (to < from! || to - from! > 50) return [];
    return Array.from({ length: to - from! + 1 }, (_, index) => from! + index);
  });
}

/** The report without its Sources sections, and the urls those sections gave each number. */
function splitSourcesSections(report: string): { body: string; listed: Map<number, string> } {
  const lines = report.split('\n');
  const kept: string[] = [];
  const listed = new Map<number, string>();
  let sectionLevel: number | undefined;
  for (const line of lines) {
    const heading = HEADING.exec(line);
    if (sectionLevel !== undefined && heading && heading[1]!.length <= sectionLevel) sectionLevel = undefined;
    const sourcesHeading = SOURCES_HEADING.exec(line.trim());
    if (sourcesHeading) {
      sectionLevel = sourcesHeading[1]?.length ?? BELOW_EVERY_HEADING;
      continue;
    }
    if (sectionLevel === undefined) kept.push(line);
    else readSourcesLine(line, listed);
  }
  return { body: kept.join('\n').trimEnd(), listed };
}

/** `[1] Title - https://…`, `1. https://…`, `- [2]: Title (https://…)`: the number and the url. */
function readSourcesLine(line: string, listed: Map<number, string>): void {
  const number = /^\s*(?:[-*+]\s*)?\[?(\d+)[\]).:]/.exec(line);
  const url = URL_IN_LINE.exec(line);
  if (number && url && !listed.has(Number(number[1]))) listed.set(Number(number[1]), url[0].replace(/[.,;:]+$/, ''));
}

/** Finds the source a url names, by normalised url or DOI. */
function sourceLookup<T extends CitableSource>(sources: readonly T[]): (url: string) => T | undefined {
  const byKey = new Map<string, T>();
  for (const source of sources) {
    const doi = doiOf(source.url);
    for (const key of [normalizeUrl(source.url), doi && `doi:${doi}`, ...(source.matchKeys ?? [])]) {
      if (key && !byKey.has(key)) byKey.set(key, source);
    }
  }
  return (url) => {
    const doi = doiOf(url);
    return (doi ? byKey.get(`doi:${doi}`) : undefined) ?? byKey.get(normalizeUrl(url) ?? '');
  };
}

/** Applies `rewrite` to every line outside fenced code blocks, and to the parts of a line outside `inline code`. */
function rewriteOutsideCode(text: string, rewrite: (line: string) => string): string {
  let inFence = false;
  return text.split('\n').map((line) => {
    if (FENCE.test(line)) {
      inFence = !inFence;
      return line;
    }
    if (inFence) return line;
    return line.split(/(`[^`]*`)/).map((part) => (part.startsWith('`') && part.endsWith('`') && part.length > 1 ? part : rewrite(part))).join('');
  }).join('\n');
}

function withSourcesSection(text: string, sources: readonly CitableSource[]): string {
  if (sources.length === 0) return text;
  const lines = sources.map((source, index) => `[${index + 1}] ${source.title.replace(/\s+/g, ' ').trim() || source.url} - ${source.url}`);
  return `${text}\n\n## Sources\n\n${lines.join('\n')}\n`;
}
