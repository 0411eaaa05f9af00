import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deepArticlePage, widePage } from '../../../../bench/parse/pages.ts';
import type { Body } from '../../../../src/tools/web/extract-content.ts';
import { MAX_WAITING_JOBS, parseInWorker, type ParseSettings } from '../../../../src/tools/web/parse-pool.ts';
import { inflatingPdf } from '../../../helpers/pdf-files.ts';

const body = (content: string | Uint8Array, contentType = 'text/html'): Body =>
  ({ url: 'https://site.test/page', contentType, bytes: typeof content === 'string' ? new TextEncoder().encode(content) : content, isTruncated: false });
const readPage = (content: string | Uint8Array, settings: ParseSettings, signal = new AbortController().signal, contentType?: string) =>
  parseInWorker({ kind: 'content', body: body(content, contentType), maxLength: 100_000 }, signal, settings);

const ARTICLE = '<html><head><title>Deltas</title></head><body><article><h1>Deltas</h1><p>A delta is where a river meets the sea.</p></article></body></html>';
/** Under the article reader's limits, yet seconds of Readability on any machine. */
const SLOW_PAGE = widePage(9_900);

describe('the parse pool', () => {
  it('reads a page in a worker thread and moves its bytes there', async () => {
    const bytes = new TextEncoder().encode(ARTICLE);
    const page = await parseInWorker({ kind: 'content', body: body(bytes), maxLength: 100_000 }, new AbortController().signal, { threads: 1, timeoutMs: 10_000, memoryMb: 256 });
    assert.equal(page.title, 'Deltas');
    assert.equal(page.content, 'A delta is where a river meets the sea.');
    assert.equal(bytes.byteLength, 0, 'the body was moved to the thread, not copied');
  });

  it('cuts the content at maxLength in the thread: only that much comes back', async () => {
    const settings = { threads: 1, timeoutMs: 10_000, memoryMb: 256 };
    const cut = await parseInWorker({ kind: 'content', body: body('a'.repeat(1_000), 'text/plain'), maxLength: 100 }, new AbortController().signal, settings);
    assert.deepEqual([cut.content.length, cut.truncated], [100, true]);
    const whole = await parseInWorker({ kind: 'content', body: body('a'.repeat(100), 'text/plain'), maxLength: 100 }, new AbortController().signal, settings);
    assert.deepEqual([whole.content.length, whole.truncated], [100, false]);
  });

  it('reads a small body that is a view of Node\'s shared Buffer pool (copied, as the pool cannot be moved)', async () => {
    const pooled = Buffer.concat([Buffer.from(ARTICLE)]);
    assert.notEqual(pooled.byteLength, pooled.buffer.byteLength, 'a view of a larger buffer');
    const page = await parseInWorker({ kind: 'content', body: body(pooled), maxLength: 100_000 }, new AbortController().signal, { threads: 1, timeoutMs: 10_000, memoryMb: 256 });
    assert.equal(page.title, 'Deltas');
    assert.equal(pooled.toString(), ARTICLE, 'the pool is left as it was');
  });

  it('stops a reading at the time limit, saying so, and reads the next page on a fresh thread', async () => {
    const settings = { threads: 1, timeoutMs: 200, memoryMb: 512 };
    await assert.rejects(readPage(SLOW_PAGE, settings), { message: 'reading it took longer than 200 ms (TOOLS_PARSE_TIMEOUT_MS), so it was stopped' });
    assert.equal((await readPage(ARTICLE, settings)).title, 'Deltas');
  });

  it('the time limit counts the reading, not the wait for a thread', async () => {
    const page = deepArticlePage(10, 300);
    const unlimited = { threads: 1, timeoutMs: 60_000, memoryMb: 512 };
    await readPage(page, unlimited);
    const startedAt = performance.now();
    await readPage(page, unlimited);
    // On the warm thread, each reading takes a third of the limit; ten in one thread take three limits.
    const settings = { threads: 1, timeoutMs: Math.ceil(3 * (performance.now() - startedAt)) + 100, memoryMb: 512 };
    const pages = await Promise.all(Array.from({ length: 10 }, () => readPage(page, settings)));
    assert.ok(pages.every((read) => read.title === 'Deltas'));
  });

  it('stops a reading whose heap outgrows the memory limit', async () => {
    const settings = { threads: 1, timeoutMs: 60_000, memoryMb: 64 };
    // A million rules are a million objects: far more heap than the limit (the tools cut robots.txt at 500 KiB).
    const text = `User-agent: *\n${Array.from({ length: 1_000_000 }, (_, index) => `Disallow: /p${index}\n`).join('')}`;
    const question = { robotsUrl: 'https://site.test/robots.txt', text, urls: ['https://site.test/a'], userAgent: 'agentgate' };
    await assert.rejects(parseInWorker({ kind: 'robots', question }, new AbortController().signal, settings),
      { message: 'reading it needed more than 64 MB (TOOLS_PARSE_MEMORY_MB), so it was stopped' });
    assert.equal((await readPage(ARTICLE, settings)).title, 'Deltas');
  });

  it('stops a PDF whose streams inflate past the memory limit (buffers, which V8 does not cap)', async () => {
    const settings = { threads: 1, timeoutMs: 60_000, memoryMb: 64 };
    const pdf = inflatingPdf(256);
    assert.ok(pdf.byteLength < 512 * 1024, `${pdf.byteLength} bytes`);
    await assert.rejects(readPage(pdf, settings, undefined, 'application/pdf'), { message: 'reading it needed more than 64 MB (TOOLS_PARSE_MEMORY_MB), so it was stopped' });
  });

  it('a cancelled call stops its reading at once with the signal\'s reason', async () => {
    const settings = { threads: 1, timeoutMs: 60_000, memoryMb: 512 };
    const controller = new AbortController();
    const reading = readPage(SLOW_PAGE, settings, controller.signal);
    setTimeout(() => controller.abort(new Error('task cancelled')), 100);
    const startedAt = Date.now();
    await assert.rejects(reading, { message: 'task cancelled' });
    assert.ok(Date.now() - startedAt < 30_000, 'long before the reading would have ended');
    assert.equal((await readPage(ARTICLE, settings)).title, 'Deltas');
  });

  it(`refuses a reading when ${MAX_WAITING_JOBS} already wait for a thread`, async () => {
    const settings = { threads: 1, timeoutMs: 60_000, memoryMb: 512 };
    const controller = new AbortController();
    // Started in one go, none has reached the thread yet: all of them wait.
    const waiting = Array.from({ length: MAX_WAITING_JOBS }, () => readPage(SLOW_PAGE, settings, controller.signal).catch((error: Error) => error));
    await assert.rejects(readPage(ARTICLE, settings), { message: `the gateway is reading too many pages at once (${MAX_WAITING_JOBS} waiting): try again shortly` });
    controller.abort(new Error('done'));
    assert.ok((await Promise.all(waiting)).every((outcome) => outcome instanceof Error && outcome.message === 'done'));
  });

  it('answers robots.txt questions in the worker', async () => {
    const question = { robotsUrl: 'https://site.test/robots.txt', text: 'User-agent: *\nDisallow: /private\n', urls: ['https://site.test/a', 'https://site.test/private/b'], userAgent: 'agentgate' };
    assert.deepEqual(await parseInWorker({ kind: 'robots', question }, new AbortController().signal, { threads: 1, timeoutMs: 10_000, memoryMb: 256 }), ['https://site.test/a']);
  });
});
