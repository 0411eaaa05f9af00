import { toString as nlcstText } from 'nlcst-to-string';
import type { ToolDefinition } from '../registry.ts';

const MAX_TEXT_CHARS = 100_000;
const DEFAULT_KEYWORDS = 10;

interface RankedTerm { term: string; score: number; count: number }

/**
 * Ranks the words and phrases of an English text with retext-keywords (part-of-speech tagged nouns, scored by how
 * often their stems occur and how they cluster). Pure computation: no model, no network.
 */
export async function extractKeywords(text: string, maximum: number): Promise<{ keywords: RankedTerm[]; keyphrases: RankedTerm[]; word_count: number }> {
  const { retext, retextPos, retextKeywords } = await loadRetext();
  const file = await retext().use(retextPos).use(retextKeywords, { maximum }).process(text);
  const keywords = (file.data.keywords ?? []).map((keyword) => ({
    term: mostCommon(keyword.matches.map((match) => nlcstText(match.node).toLowerCase())),
    score: round(keyword.score),
    count: keyword.matches.length,
  }));
  const keyphrases = (file.data.keyphrases ?? []).map((phrase) => ({
    term: mostCommon(phrase.matches.map((match) => nlcstText(match.nodes).toLowerCase())),
    score: round(phrase.score),
    count: phrase.matches.length,
  }));
  return { keywords: keywords.slice(0, maximum), keyphrases: keyphrases.slice(0, maximum), word_count: text.split(/\s+/).filter(Boolean).length };
}

/** The tagger's lexicon takes most of a second to load: it is loaded at the first call, not at the server's start. */
async function loadRetext() {
  const [{ retext }, { default: retextPos }, { default: retextKeywords }] = await Promise.all([import('retext'), import('retext-pos'), import('retext-keywords')]);
  return { retext, retextPos, retextKeywords };
}

/** The spelling a stem appears in most often (first seen on a tie), e.g. "battery" for batteries, battery, battery. */
function mostCommon(forms: string[]): string {
  const counts = new Map<string, number>();
  for (const form of forms) counts.set(form, (counts.get(form) ?? 0) + 1);
  return [...counts].reduce((best, entry) => (entry[1] > best[1] ? entry : best))[0];
}

const round = (value: number) => Math.round(value * 1000) / 1000;

export const keywordExtractTool: ToolDefinition = {
  name: 'keyword_extract',
  description: 'Extracts the ranked keywords and key phrases of an English text (part-of-speech tagging and stem frequency; no model).',
  parameters: {
    type: 'object',
    properties: {
      text: { type: 'string', minLength: 1, maxLength: MAX_TEXT_CHARS, description: 'The text to read' },
      max_keywords: { type: 'integer', minimum: 1, maximum: 50, default: DEFAULT_KEYWORDS, description: 'How many keywords and phrases at most' },
    },
    required: ['text'],
    additionalProperties: false,
  },
  category: 'nlp',
  costPerUseUsd: 0,
  dangerous: false,
  effects: 'none',
  namedOnly: true,
  execute: (input) => extractKeywords(String(input.text), (input.max_keywords as number | undefined) ?? DEFAULT_KEYWORDS),
};
