import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deepArticlePage, widePage } from '../../../../bench/parse/pages.ts';
import type { Body } from '../../../../src/tools/web/extract-content.ts';
import { MAX_WAITING_JOBS, parseInWorker, type ParseSettings } from '../../../../src/tools/web/parse-pool.ts';
import { MAX_ARTICLE_DEPTH } from '../../../../src/tools/web/read-html.ts';
import { inflatingPdf } from '../../../helpers/pdf-files.ts';

const body = (content: string | Uint8Array, contentType = 'text/html'): Body =>
  ({ url: 'https://site.test/page', contentType, bytes: typeof content === 'string' ? new TextEncoder().encode(content) : content, isTruncated: false });
const caller = (signal = new AbortController().signal, tenantId = 'tenant-a') => ({ tenantId, signal });
const readPage = (content: string | Uint8Array, settings: ParseSettings, signal?: AbortSignal, contentType?: string, tenantId?: string) =>
  parseInWorker({ kind: 'content', body: body(content, contentType), maxLength: 100_000 }, caller(signal, tenantId), settings);

/** A robots.txt question with `count` rules (the tools cut a real one at 500 KiB; these go past it). */
const manyRules = (count: number) => ({
  robotsUrl: 'https://site.test/robots.txt', urls: ['https://site.test/a'], userAgent: 'agentgate',
  text: `User-agent: *\n${Array.from({ length: count }, (_, index) => `Disallow: /p${index}\n`).join('')}`,
});

const ARTICLE = '<html><head><title>Deltas</title></head><body><article><h1>Deltas</h1><p>A delta is where a river meets the sea.</p></article></body></html>';
/** Under the article reader's limits, yet seconds of Readability on any machine. */
const SLOW_PAGE = widePage(9_900);

describe('the parse pool', () => {
  it('reads a page in a worker thread and moves its bytes there', async () => {
    const bytes = new TextEncoder().encode(ARTICLE);
    const page = await parseInWorker({ kind: 'content', body: body(bytes), maxLength: 100_000 }, caller(), { threads: 1, timeoutMs: 10_000, memoryMb: 256 });
    assert.equal(page.title, 'Deltas');
    assert.equal(page.content, 'A delta is where a river meets the sea.');
    assert.equal(bytes.byteLength, 0, 'the body was moved to the thread, not copied');
  });

  it('cuts the content at maxLength in the thread: only that much comes back', async () => {
    const settings = { threads: 1, timeoutMs: 10_000, memoryMb: 256 };
    const cut = await parseInWorker({ kind: 'content', body: body('a'.repeat(1_000), 'text/plain'), maxLength: 100 }, caller(), settings);
    assert.deepEqual([cut.content.length, cut.truncated], [100, true]);
    const whole = await parseInWorker({ kind: 'content', body: body('a'.repeat(100), 'text/plain'), maxLength: 100 }, caller(), settings);
    assert.deepEqual([whole.content.length, whole.truncated], [100, false]);
  });

  it('reads a small body that is a view of Node\'s shared Buffer pool (copied, as the pool cannot be moved)', async () => {
    const pooled = Buffer.concat([Buffer.from(ARTICLE)]);
    assert.notEqual(pooled.byteLength, pooled.buffer.byteLength, 'a view of a larger buffer');
    const page = await parseInWorker({ kind: 'content', body: body(pooled), maxLength: 100_000 }, caller(), { threads: 1, timeoutMs: 10_000, memoryMb: 256 });
    assert.equal(page.title, 'Deltas');
    assert.equal(pooled.toString(), ARTICLE, 'the pool is left as it was');
  });

  it('stops the article reader at the time limit and answers with the page\'s plain text, saying so', async () => {
    // Within the article reader's limits (64 deep, 10,000 elements), where it costs some 20 times the plain text.
    const article = deepArticlePage(MAX_ARTICLE_DEPTH - 5, 3_300);
    const unlimited = { threads: 1, timeoutMs: 60_000, memoryMb: 512 };
    // The same page a little deeper is read as plain text only. The limit sits midway (geometrically) between the
    // two readings as timed on this machine now; a busy moment while timing followed by a quiet one for the reading
    // can still let the article reader finish in time, so a reading that did is timed and tried again, up to three.
    const plain = deepArticlePage(MAX_ARTICLE_DEPTH + 5, 3_300);
    const timed = async (html: string) => {
      const startedAt = performance.now();
      const page = await readPage(html, unlimited);
      return { page, ms: performance.now() - startedAt };
    };
    await readPage(plain, unlimited);
    const tries: string[] = [];
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const plainReadings = [await timed(plain), await timed(plain), await timed(plain)];
      assert.ok(plainReadings.every(({ page }) => /^read as plain text: it is nested/.test(page.notice!)));
      const plainMs = Math.min(...plainReadings.map(({ ms }) => ms));
      const articleReading = await timed(article);
      assert.equal(articleReading.page.notice, undefined, 'the article reader reads the page when given time');
      const timeoutMs = Math.ceil(Math.sqrt(plainMs * articleReading.ms));
      const page = await readPage(article, { ...unlimited, timeoutMs });
      tries.push(`plain ${plainMs.toFixed(0)} ms, article ${articleReading.ms.toFixed(0)} ms, limit ${timeoutMs} ms: ${page.notice ?? 'read as an article'}`);
      if (page.notice === undefined) continue;
      assert.equal(page.notice, `read as plain text: the article reader took longer than ${timeoutMs} ms (TOOLS_PARSE_TIMEOUT_MS)`);
      assert.equal(page.title, 'Deltas');
      assert.match(page.content, /^Deltas\n\nRivers carry sediment/);
      return;
    }
    assert.fail(`the article reader finished within the limit every time:\n${tries.join('\n')}`);
  });

  it('stops any other reading at the time limit with an observation saying so, and reads the next on a fresh thread', async () => {
    const settings = { threads: 1, timeoutMs: 200, memoryMb: 512 };
    await assert.rejects(parseInWorker({ kind: 'robots', question: manyRules(1_000_000) }, caller(), settings),
      { message: 'reading it took longer than 200 ms (TOOLS_PARSE_TIMEOUT_MS), so it was stopped' });
    // Same pool, a limit that leaves a fresh thread time to compile its readers on a busy machine.
    assert.equal((await readPage(ARTICLE, { ...settings, timeoutMs: 60_000 })).title, 'Deltas');
  });

  it('the time limit counts the reading, not the wait for a thread', async () => {
    const page = deepArticlePage(10, 300);
    const unlimited = { threads: 1, timeoutMs: 60_000, memoryMb: 512 };
    await readPage(page, unlimited);
    // The slowest of three readings on the warm thread (one timed in a quiet moment made a limit that a reading in a
    // busy one could pass): a reading may take five times the slowest before the limit stops it, and twenty-four in one
    // thread take some four limits, so a limit that counted the wait would stop the last of them.
    let readingMs = 0;
    for (let run = 0; run < 3; run += 1) {
      const startedAt = performance.now();
      await readPage(page, unlimited);
      readingMs = Math.max(readingMs, performance.now() - startedAt);
    }
    const settings = { threads: 1, timeoutMs: Math.ceil(5 * readingMs), memoryMb: 512 };
    const pages = await Promise.all(Array.from({ length: 24 }, () => readPage(page, settings)));
    assert.ok(pages.every((read) => read.title === 'Deltas'));
  });

  it('stops a reading whose heap outgrows the memory limit', async () => {
    const settings = { threads: 1, timeoutMs: 60_000, memoryMb: 64 };
    // A million rules are a million objects: far more heap than the limit (the tools cut robots.txt at 500 KiB).
    await assert.rejects(parseInWorker({ kind: 'robots', question: manyRules(1_000_000) }, caller(), settings),
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

  it(`refuses a tenant's reading when ${MAX_WAITING_JOBS} of its own already wait, not another tenant's`, async () => {
    const settings = { threads: 1, timeoutMs: 60_000, memoryMb: 512 };
    const controller = new AbortController();
    // Started in one go, none has reached the thread yet: all of them wait.
    const waiting = Array.from({ length: MAX_WAITING_JOBS }, () => readPage(SLOW_PAGE, settings, controller.signal).catch((error: Error) => error));
    await assert.rejects(readPage(ARTICLE, settings), { message: `too many pages are waiting to be read (${MAX_WAITING_JOBS}): try again shortly` });
    assert.equal((await readPage(ARTICLE, settings, undefined, undefined, 'tenant-b')).title, 'Deltas');
    controller.abort(new Error('done'));
    // The first of them had its turn while tenant b waited for the thread: it was read.
    for (const outcome of await Promise.all(waiting)) assert.ok(outcome instanceof Error ? outcome.message === 'done' : outcome.title === 'Long page');
  });

  it('a tenant\'s reading waits behind one reading of another tenant per thread, not behind its whole queue', async () => {
    const settings = { threads: 1, timeoutMs: 60_000, memoryMb: 512 };
    const finished: string[] = [];
    const read = (name: string, tenantId: string) => readPage(deepArticlePage(10, 50), settings, undefined, undefined, tenantId).then(() => { finished.push(name); });
    const busyTenant = [1, 2, 3, 4].map((index) => read(`a${index}`, 'tenant-a'));
    await Promise.all([...busyTenant, read('b1', 'tenant-b')]);
    assert.deepEqual(finished, ['a1', 'b1', 'a2', 'a3', 'a4']);
  });

  it('answers robots.txt questions in the worker', async () => {
    const question = { robotsUrl: 'https://site.test/robots.txt', text: 'User-agent: *\nDisallow: /private\n', urls: ['https://site.test/a', 'https://site.test/private/b'], userAgent: 'agentgate' };
    assert.deepEqual(await parseInWorker({ kind: 'robots', question }, caller(), { threads: 1, timeoutMs: 10_000, memoryMb: 256 }), ['https://site.test/a']);
  });
});
