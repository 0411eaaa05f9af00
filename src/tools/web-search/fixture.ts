import type { FixtureCorpus, FixturePage } from '../web/fixture-corpus.ts';
import { cappedCount, isOnSite, plainSnippet, type SearchProvider, type SearchResult } from './provider.ts';

/** A term in the title weighs as much as this many occurrences in the text. */
const TITLE_WEIGHT = 3;
/** Past this, more repetitions of a term in a page say little more about it. */
const MAX_COUNTED_OCCURRENCES = 5;

const STOP_WORDS = new Set([
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'by', 'did', 'do', 'does', 'for', 'from', 'has', 'how', 'in', 'is', 'it', 'its',
  'of', 'on', 'or', 'that', 'the', 'this', 'to', 'was', 'were', 'what', 'when', 'where', 'which', 'who', 'why', 'with',
]);

/**
 * Answers from the offline corpus: pages ranked by the query's terms in their title and text, each term
 * weighted by how rare it is in the corpus; the snippet is the paragraph that matches best.
 */
export function createFixtureProvider(corpus: FixtureCorpus): SearchProvider {
  const indexed = corpus.pages.map((page) => ({ page, title: termCounts(page.title), text: termCounts(page.text) }));
  return {
    name: 'fixture',
    async search({ query, maxResults, siteFilter }) {
      const terms = [...new Set(termsOf(query))];
      const candidates = indexed.filter(({ page }) => !siteFilter || isOnSite(page.url, siteFilter));
      const rarity = new Map(terms.map((term) => [term, rarityOf(term, indexed)]));
      return candidates
        .map((entry) => ({ entry, score: terms.reduce((sum, term) => sum + rarity.get(term)! * weightIn(entry, term), 0) }))
        .filter(({ score }) => score > 0)
        .sort((left, right) => right.score - left.score)
        .slice(0, cappedCount(maxResults))
        .map(({ entry }) => resultOf(entry.page, terms));
    },
  };
}

type IndexedPage = { page: FixturePage; title: Map<string, number>; text: Map<string, number> };

const weightIn = ({ title, text }: IndexedPage, term: string) =>
  TITLE_WEIGHT * (title.get(term) ?? 0) + Math.min(MAX_COUNTED_OCCURRENCES, text.get(term) ?? 0);

function rarityOf(term: string, pages: IndexedPage[]): number {
  const containing = pages.filter((entry) => entry.title.has(term) || entry.text.has(term)).length;
  return Math.log(1 + pages.length / Math.max(1, containing));
}

function resultOf(page: FixturePage, terms: string[]): SearchResult {
  return { title: page.title, url: page.url, snippet: plainSnippet(bestPassage(page.text, terms)), date: page.date, source: page.source ?? 'fixture corpus' };
}

/** The paragraph (headings left out) holding most of the query's terms; the first one when none does. */
function bestPassage(text: string, terms: string[]): string {
  const paragraphs = text.split(/\n\s*\n/).map((paragraph) => paragraph.trim()).filter((paragraph) => paragraph && !paragraph.startsWith('#'));
  const hits = (paragraph: string) => {
    const counts = termCounts(paragraph);
    return terms.reduce((sum, term) => sum + Math.min(1, counts.get(term) ?? 0), 0);
  };
  let best = paragraphs[0] ?? '';
  for (const paragraph of paragraphs) if (hits(paragraph) > hits(best)) best = paragraph;
  return best;
}

function termCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of termsOf(text)) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
}

function termsOf(text: string): string[] {
  return (text.toLowerCase().normalize('NFKD').replace(/[\u0300-\u036f]/g, '').match(/[a-z0-9]+/g) ?? [])
    .filter((word) => !STOP_WORDS.has(word))
    .map(singular);
}

/** Enough stemming for "rivers" to find "river" and "batteries" "battery"; not a linguist's stemmer. */
function singular(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('s') && !/(ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}
