/** Titles are counted in code points (spec 8: 1-60 characters, "UTF-8 safe"), never in bytes. */
export const MAX_TITLE_CHARACTERS = 60;
const QUERY_TITLE_CHARACTERS = 40;
const LONGEST_MODEL_ANSWER = 200;
/** A title is a few words; a chattier answer is cut after this many. */
const MODEL_TITLE_WORDS = 8;
/** Answers that are not a title but a model's complaint (the reference system rejects the same). */
const REJECTED_ANSWERS = [/\[Incomplete response:/i, /token limit/i, /truncated/i];

const QUOTES_AND_MARKUP = /["“”„«»`*#]/g;
const TRAILING_PUNCTUATION = /[\s.,;:!?…。，；：！？]+$/u;
const LINE_BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]+/g;
const CONTROLS = /\p{Cc}/gu;
/** Zero-width space, word joiner, BOM, and the marks that reorder text invisibly (bidi spoofing). */
const INVISIBLES = /[\u200B\u200E\u200F\u202A-\u202E\u2060\u2066-\u2069\uFEFF]/g;
/** Joiners and variation selectors stay (emoji sequences and some scripts need them) but are not text. */
const VISIBLE = /[^\s\u200C\u200D\uFE00-\uFE0F]/u;

const graphemes = new Intl.Segmenter('und', { granularity: 'grapheme' });

/** Line breaks become spaces; control and invisible characters go; runs of spaces shrink; ends are trimmed. */
export function cleanTitle(text: string): string {
  return text.replace(LINE_BREAKS, ' ').replace(CONTROLS, '').replace(INVISIBLES, '').replace(/ {2,}/g, ' ').trim();
}

export const countCharacters = (text: string) => [...text].length;

export const hasVisibleText = (text: string) => VISIBLE.test(text);

/** A model's answer as a title: the first words of its first line, without quotes or markdown; undefined when unusable. */
export function titleFromModel(answer: string): string | undefined {
  if (answer.length > LONGEST_MODEL_ANSWER || REJECTED_ANSWERS.some((pattern) => pattern.test(answer))) return undefined;
  const firstLine = answer.split(/\r?\n/).find((line) => line.trim() !== '') ?? '';
  const words = cleanTitle(firstLine.replace(/^\s*title\s*:/i, '').replace(QUOTES_AND_MARKUP, '')).split(' ').slice(0, MODEL_TITLE_WORDS);
  const title = words.join(' ').replace(TRAILING_PUNCTUATION, '');
  return hasVisibleText(title) ? truncate(title, MAX_TITLE_CHARACTERS, '') : undefined;
}

/** The fallback title: the query's first line, cut at a word boundary to 40 characters plus "…". */
export function titleFromQuery(query: string): string {
  const firstLine = cleanTitle(query.split(/\r?\n/).find((line) => hasVisibleText(cleanTitle(line))) ?? '');
  return hasVisibleText(firstLine) ? truncate(firstLine, QUERY_TITLE_CHARACTERS, '…') : 'New session';
}

/** Cuts between graphemes (never inside an emoji sequence), at the last space when there is one late enough. */
function truncate(text: string, maxCharacters: number, ellipsis: string): string {
  if (countCharacters(text) <= maxCharacters) return text;
  let cut = '';
  for (const { segment } of graphemes.segment(text)) {
    if (countCharacters(cut) + countCharacters(segment) > maxCharacters) break;
    cut += segment;
  }
  const lastSpace = cut.lastIndexOf(' ');
  if (lastSpace > cut.length / 2) cut = cut.slice(0, lastSpace);
  return cut.trimEnd() + ellipsis;
}
