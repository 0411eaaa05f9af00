/** Generated pages of a known shape, for the parse cost measurements and the tests that need a hostile page. */

/** The page: `depth` nested <div>s around one letter. */
export const nestedPage = (depth: number) => `<html><body>${'<div>'.repeat(depth)}x${'</div>'.repeat(depth)}</body></html>`;

const SENTENCE = 'Rivers carry sediment from the mountains to the sea, and their deltas grow where the current slows. ';

/** A real article (paragraphs with a link and bold words) wrapped in `depth` <div>s: layouts nest, text does not. */
export function deepArticlePage(depth: number, paragraphs = 100): string {
  const article = Array.from({ length: paragraphs }, (_, index) =>
    `<p>${SENTENCE.repeat(3)}<a href="/notes/${index}">note ${index}</a> and <b>bold words</b>.</p>`).join('\n');
  return `<html><head><title>Deltas</title></head><body>${'<div class="wrap">'.repeat(depth)}<article><h1>Deltas</h1>${article}</article>${'</div>'.repeat(depth)}</body></html>`;
}

/** A long page of ordinary shape: navigation, then paragraphs of three elements each, `elements` in all. */
export function widePage(elements: number): string {
  const nav = Array.from({ length: 50 }, (_, index) => `<li><a href="/section/${index}">Section ${index}</a></li>`).join('');
  const paragraphs = Math.max(1, Math.floor((elements - 110) / 3));
  const body = Array.from({ length: paragraphs }, (_, index) => `<p>${SENTENCE}<a href="/p/${index}">more</a> <b>${index}</b></p>`).join('\n');
  return `<html><head><title>Long page</title></head><body><nav><ul>${nav}</ul></nav><main><article>${body}</article></main></body></html>`;
}

/** A grid of cards (a shop, a feed): `elements` <div>s four to a card, each card a few words and a link. */
export function cardsPage(elements: number): string {
  const cards = Array.from({ length: Math.max(1, Math.floor(elements / 4)) }, (_, index) =>
    `<div class="card"><div class="title"><a href="/item/${index}">Item ${index}</a></div><div class="price">${index} EUR</div></div>`).join('');
  return `<html><head><title>Shop</title></head><body><div class="grid">${cards}</div></body></html>`;
}

/** Chains of `depth` nested <div>s one after another, `bytes` long: the most tags at that depth a page can hold. */
export function chainsPage(depth: number, bytes: number): string {
  const chain = `${'<div>'.repeat(depth)}x${'</div>'.repeat(depth)}`;
  return `<html><body>${chain.repeat(Math.max(1, Math.floor(bytes / chain.length)))}</body></html>`;
}
