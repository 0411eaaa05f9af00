import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../../../src/config.ts';
import { BUILT_IN_TOOLS, createBuiltInToolRegistry } from '../../../../src/tools/built-ins.ts';
import { webCrawlTool } from '../../../../src/tools/web/web-crawl-tool.ts';
import { webFetchTool } from '../../../../src/tools/web/web-fetch-tool.ts';
import { webSubpageFetchTool } from '../../../../src/tools/web/web-subpage-fetch-tool.ts';
import { offlineToolContext } from '../../../helpers/tool-context.ts';

const registry = createBuiltInToolRegistry();
const CORPUS_URL = 'https://corpus.agentgate.example/geography/longest-rivers';

describe('the web tools', () => {
  let corpusDir = '';
  let context = offlineToolContext();
  const contextWith = (env: Record<string, string>) => offlineToolContext({ settings: loadConfig({ SEARCH_CORPUS_DIR: corpusDir, ...env }) });

  before(async () => {
    corpusDir = await mkdtemp(path.join(os.tmpdir(), 'agentgate-corpus-'));
    const page = `---\ntitle: The longest rivers of the world\nurl: ${CORPUS_URL}\n---\n# The longest rivers\n\n${'The Nile and the Amazon. '.repeat(10)}\n`;
    await writeFile(path.join(corpusDir, 'rivers.md'), page);
    context = contextWith({});
  });
  after(() => rm(corpusDir, { recursive: true, force: true }));

  it('are built in: category web, free, not dangerous', () => {
    for (const tool of [webFetchTool, webSubpageFetchTool, webCrawlTool]) {
      assert.ok(BUILT_IN_TOOLS.includes(tool), tool.name);
      assert.deepEqual([tool.category, tool.costPerUseUsd, tool.dangerous], ['web', 0, false]);
    }
  });

  it('web_fetch needs url or urls, and at most 10 urls', async () => {
    assert.deepEqual(await registry.invoke('web_fetch', {}, context), { error: 'give `url` (one page) or `urls` (several)' });
    const outcome = await registry.invoke('web_fetch', { urls: Array.from({ length: 11 }, (_, index) => `https://example.org/${index}`) }, context);
    assert.match(outcome.error!, /must NOT have more than 10 items/);
  });

  it('a refused url in a batch does not fail the others', async () => {
    const outcome = await registry.invoke('web_fetch', { urls: [CORPUS_URL, 'http://127.0.0.1/', 'not a url'] }, context);
    const [served, refused, invalid] = (outcome.output as { pages: any[] }).pages;
    assert.equal(served.source, 'fixture');
    assert.match(refused.error, /^refused: 127\.0\.0\.1 is a loopback address/);
    assert.deepEqual(invalid, { url: 'not a url', error: 'not a valid URL: not a url' });
  });

  it('corpus pages are served offline only while web_search answers from the corpus', async () => {
    const offline = await registry.invoke('web_fetch', { url: CORPUS_URL, max_length: 100 }, context);
    assert.deepEqual({ ...(offline.output as object), content: undefined }, {
      url: CORPUS_URL, final_url: CORPUS_URL, title: 'The longest rivers of the world', content: undefined, truncated: true, status: 200, source: 'fixture',
    });
    const online = await registry.invoke('web_fetch', { url: CORPUS_URL }, contextWith({ WEB_SEARCH_PROVIDER: 'tavily', TOOLS_FETCH_TIMEOUT_MS: '2000' }));
    // `.example` never resolves: the page was looked for on the network.
    assert.match(online.error!, /^cannot resolve corpus\.agentgate\.example: |^timed out after 2000 ms/);
  });

  it('web_subpage_fetch refuses paths that leave the site', async () => {
    const outcome = await registry.invoke('web_subpage_fetch', { url: 'https://corpus.agentgate.example/', paths: [CORPUS_URL, '//127.0.0.1/x'] }, context);
    const [served, elsewhere] = (outcome.output as { pages: any[] }).pages;
    assert.equal(served.source, 'fixture');
    assert.deepEqual(elsewhere, { url: 'https://127.0.0.1/x', error: 'not on corpus.agentgate.example: web_subpage_fetch reads one site only' });
  });

  it('web_crawl caps depth and pages in its schema', async () => {
    assert.match((await registry.invoke('web_crawl', { url: CORPUS_URL, max_depth: 4 }, context)).error!, /max_depth must be <= 3/);
    assert.match((await registry.invoke('web_crawl', { url: CORPUS_URL, max_pages: 31 }, context)).error!, /max_pages must be <= 30/);
  });
});
