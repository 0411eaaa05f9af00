import { measureHtml } from './html-shape.ts';
import { htmlToMarkdown, type ReadablePage } from './html-to-markdown.ts';
import { htmlToText } from './html-to-text.ts';

/**
 * The limits of each reading, from bench/parse (bench/RESULTS.md, "Reading HTML"). Readability's cost grows
 * faster than linearly with nesting depth and with element count, so the article reader only gets pages within
 * both of its limits. The plain-text reading is linear in the page up to MAX_DEPTH (the tokenizer's stack costs
 * the depth at each tag); Chromium's parser stops nesting at that depth too.
 */
export const MAX_DEPTH = 512;
export const MAX_ARTICLE_DEPTH = 64;
export const MAX_ARTICLE_ELEMENTS = 10_000;

export interface HtmlReading extends ReadablePage {
  /** Set when the page was read as plain text instead of as an article, saying why. */
  notice?: string;
}

/** Given the plain-text reading before the article reader starts: the answer if that reader does not end in time. */
export type OfferFallback = (page: ReadablePage) => void;

/**
 * Markdown of the page's article; plain text for a page too large for the article reader (offered first as the
 * fallback of the others); nothing for one too deep.
 */
export function readHtml(html: string, pageUrl: string, offerFallback: OfferFallback = () => {}): HtmlReading {
  const { depth, elements } = measureHtml(html, MAX_DEPTH);
  if (depth > MAX_DEPTH) throw new Error(`the page is nested more than ${MAX_DEPTH} elements deep; pages nested deeper than ${MAX_DEPTH} are not read`);
  const plainText = htmlToText(html, pageUrl);
  const tooLarge = elements > MAX_ARTICLE_ELEMENTS ? `it has ${elements} elements, more than the ${MAX_ARTICLE_ELEMENTS}`
    : depth > MAX_ARTICLE_DEPTH ? `it is nested ${depth} elements deep, more than the ${MAX_ARTICLE_DEPTH}` : undefined;
  if (tooLarge) return { ...plainText, notice: `read as plain text: ${tooLarge} the article reader takes` };
  offerFallback(plainText);
  return htmlToMarkdown(html, pageUrl);
}
