import MiniSearch from 'minisearch';

/** What a citation offers as evidence: its page text when it was fetched, else its title and snippet. */
export interface EvidenceSource {
  title: string;
  snippet: string;
  content?: string;
}

export interface EvidenceMatch {
  /** The citation's number: `sources[citation - 1]`, as the report's `[n]`. */
  citation: number;
  /** BM25+ score of the best passage (comparable within one claim only). */
  score: number;
  /** The passage that matched best, to show the verifier. */
  passage: string;
}

export interface ClaimEvidence {
  claim: string;
  /** Best first; empty when no passage shares a meaningful term with the claim. */
  evidence: EvidenceMatch[];
}

export interface EvidenceOptions {
  /** Citations kept per claim (default 3). */
  perClaim?: number;
  /** Longest passage a page is cut into (default 600 characters). */
  passageChars?: number;
}

interface Passage {
  id: number;
  citation: number;
  title: string;
  text: string;
}

/** Words too common to tell passages apart; BM25's idf would weigh them little, but they would still match everything. */
const STOP_WORDS = new Set(('a an and are as at be been but by for from has have in is it its of on or that the their this '
  + 'to was were which will with not no than then there these they those into over also more most such can may').split(' '));

/**
 * For each claim, the citations whose text matches it best, by BM25+ over passages of each citation (MiniSearch):
 * a long page is cut into passages so that one matching paragraph is not drowned by the rest of the page, and a
 * citation scores as its best passage. Long query terms match with a small edit distance (plural, tense).
 */
export function rankEvidence(claims: readonly string[], sources: readonly EvidenceSource[], options: EvidenceOptions = {}): ClaimEvidence[] {
  const perClaim = options.perClaim ?? 3;
  const passages = sources.flatMap((source, index) => passagesOf(source, options.passageChars ?? 600)
    .map((text) => ({ citation: index + 1, title: source.title, text })))
    .map((passage, id): Passage => ({ id, ...passage }));
  const index = new MiniSearch<Passage>({
    fields: ['title', 'text'],
    storeFields: ['citation', 'text'],
    processTerm: (term) => (STOP_WORDS.has(term.toLowerCase()) ? null : term.toLowerCase()),
    searchOptions: { boost: { text: 1, title: 0.5 }, fuzzy: (term) => (term.length > 5 ? 0.2 : false), combineWith: 'OR' },
  });
  index.addAll(passages);
  return claims.map((claim) => ({ claim, evidence: bestPerCitation(index.search(claim), perClaim) }));
}

function bestPerCitation(results: ReturnType<MiniSearch<Passage>['search']>, perClaim: number): EvidenceMatch[] {
  const best = new Map<number, EvidenceMatch>();
  for (const result of results) {
    const citation = result.citation as number;
    const current = best.get(citation);
    if (!current || result.score > current.score) best.set(citation, { citation, score: result.score, passage: result.text as string });
  }
  return [...best.values()].sort((left, right) => right.score - left.score || left.citation - right.citation).slice(0, perClaim);
}

/** The snippet, then the content in paragraphs packed up to `maxChars` (a longer paragraph is cut at sentence ends). */
function passagesOf(source: EvidenceSource, maxChars: number): string[] {
  const passages = source.snippet.trim() ? [source.snippet.trim()] : [];
  let current = '';
  for (const piece of piecesOf(source.content ?? '', maxChars)) {
    if (current && current.length + piece.length + 1 > maxChars) {
      passages.push(current);
      current = '';
    }
    current = current ? `${current} ${piece}` : piece;
  }
  if (current) passages.push(current);
  return passages;
}

function piecesOf(content: string, maxChars: number): string[] {
  return content.split(/\n\s*\n/).map((paragraph) => paragraph.replace(/\s+/g, ' ').trim()).filter(Boolean)
    .flatMap((paragraph) => (paragraph.length <= maxChars ? [paragraph] : paragraph.split(/(?<=[.!?])\s+/)))
    .flatMap((piece) => (piece.length <= maxChars ? [piece] : piece.match(new RegExp(`.{1,${maxChars}}`, 'g')) ?? []));
}
