/**
 * One measurement, in a fresh worker thread (its own heap, JIT warmed by one small page first): the cost of each
 * reading of one generated page. Posts the result; the parent terminates a case that runs past its time limit.
 */
import { parseHTML } from 'linkedom';
import { parentPort, workerData } from 'node:worker_threads';
import { measureHtml } from '../../src/tools/web/html-shape.ts';
import { htmlToMarkdown } from '../../src/tools/web/html-to-markdown.ts';
import { htmlToText } from '../../src/tools/web/html-to-text.ts';
import { cardsPage, chainsPage, deepArticlePage, nestedPage, widePage } from './pages.ts';

/** `size`: the depth of a nested, deep-article or chains page (5 MB of chains), the element count of a wide or cards page. */
export interface CaseRequest { shape: 'nested' | 'deep-article' | 'wide' | 'cards' | 'chains'; size: number; paragraphs?: number }
export interface CaseResult {
  bytes: number; depth: number; elements: number;
  shapeMs: number; linkedomMs: number; textMs: number; markdownMs: number | null; heapMb: number; error?: string;
}

const pages = { nested: nestedPage, 'deep-article': deepArticlePage, wide: widePage, cards: cardsPage, chains: (depth: number) => chainsPage(depth, 5_000_000) };
const { shape, size, paragraphs } = workerData as CaseRequest;

function timed<T>(run: () => T): [T, number] {
  const startedAt = performance.now();
  const value = run();
  return [value, performance.now() - startedAt];
}

htmlToMarkdown(deepArticlePage(5, 5), 'https://site.test/');
const html = shape === 'deep-article' ? deepArticlePage(size, paragraphs) : pages[shape](size);
const [measured, shapeMs] = timed(() => measureHtml(html, 1_000_000));
const [, linkedomMs] = timed(() => parseHTML(html));
const [, textMs] = timed(() => htmlToText(html, 'https://site.test/'));
const result: CaseResult = { bytes: Buffer.byteLength(html), ...measured, shapeMs, linkedomMs, textMs, markdownMs: null, heapMb: 0 };
// The parent keeps this first answer if the Markdown reading never ends.
parentPort!.postMessage(result);
try {
  [, result.markdownMs] = timed(() => htmlToMarkdown(html, 'https://site.test/'));
} catch (error) {
  result.error = (error as Error).message;
}
result.heapMb = process.memoryUsage().heapTotal / 1024 / 1024;
parentPort!.postMessage(result);
