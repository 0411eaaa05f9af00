import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { useGateway, waitForTask } from '../helpers/gateway.ts';

type ToolCallRow = { tool: string; input: Record<string, any>; output: any; error: string | null };

const REFUSAL = /^refused: .+ \(set TOOLS_NETWORK_ALLOW to allow it\)(; reached by a redirect to .+)?$/;

const ARTICLE_PAGE = `<!doctype html><html><head><title>Deltas | River guide</title></head><body>
<nav><a href="/">Home</a> <a href="/shop">Shop the river store</a></nav>
<article><h1>Deltas</h1>
<p>A river delta is a landform shaped like a triangle, created by the deposition of sediment carried by a river as the
flow leaves its mouth and enters slower or stagnant water, such as an ocean, a sea or a lake.</p>
<p>The Nile delta and the Ganges delta are among the largest in the world; the Ganges delta alone covers more than
100,000 square kilometres and is home to well over a hundred million people.</p>
</article><footer>Newsletter sign-up</footer></body></html>`;

/** The crawled site: /site/ links to three pages and a page robots.txt forbids; each of those links further. */
const SITE_LINKS: Record<string, string[]> = {
  '/site/': ['/site/a', '/site/b', '/private/secret', '/site/c'],
  '/site/a': ['/site/a1', '/site/a2'],
  '/site/b': ['/site/b1'],
  '/site/c': ['/site/'],
};

const sitePage = (url: string) => `<html><head><title>Page ${url}</title></head><body><h1>Page ${url}</h1>
<p>Text of ${url}.</p><ul>${(SITE_LINKS[url] ?? []).map((link) => `<li><a href="${link}">${link}</a></li>`).join('')}</ul></body></html>`;

async function listen(server: http.Server | import('node:net').Server, host: string, port = 0): Promise<number> {
  server.listen(port, host);
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

describe('the network guard and the web tools in a research task', () => {
  const env: Record<string, string> = { DEFAULT_TASK_MODE: 'auto', WEB_SEARCH_PROVIDER: 'fixture', TOOLS_FETCH_TIMEOUT_MS: '5000' };
  let loopbackConnections = 0;
  const counting = [http.createServer((_request, response) => response.end('secret')), http.createServer((_request, response) => response.end('secret'))];
  const requested: string[] = [];
  const standIn = http.createServer((request, response) => {
    const url = request.url ?? '/';
    requested.push(url);
    const redirect = redirects[url];
    if (redirect) return void response.writeHead(302, { location: redirect }).end();
    if (url === '/robots.txt') return void response.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /private\n');
    if (url === '/article') return void response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ARTICLE_PAGE);
    response.writeHead(200, { 'content-type': 'text/html' }).end(sitePage(url));
  });
  const redirects: Record<string, string> = {};
  let loopbackPort = 0;
  let standInUrl = '';
  let corpusDir = '';

  // Before the gateway starts: its environment names the stand-in and the corpus.
  before(async () => {
    for (const server of counting) server.on('connection', () => { loopbackConnections += 1; });
    loopbackPort = await listen(counting[0], '127.0.0.1');
    await listen(counting[1], '::1', loopbackPort).catch(() => {}); // where IPv6 loopback exists
    const standInPort = await listen(standIn, '127.0.0.1');
    standInUrl = `http://127.0.0.1:${standInPort}`;
    Object.assign(redirects, {
      '/redirect-loopback': `http://127.0.0.1:${loopbackPort}/`,
      '/redirect-localhost': `http://localhost:${loopbackPort}/secret`,
      '/redirect-decimal': `http://2130706433:${loopbackPort}/`,
    });
    corpusDir = await mkdtemp(path.join(os.tmpdir(), 'agentgate-corpus-'));
    await writeFile(path.join(corpusDir, 'nile.md'), '---\ntitle: The Nile\nurl: https://offline.agentgate.example/rivers/nile\n---\n# The Nile\n\nThe Nile flows north into the Mediterranean.\n');
    await writeFile(path.join(corpusDir, 'amazon.md'), '---\ntitle: The Amazon\nurl: https://offline.agentgate.example/rivers/amazon\n---\n# The Amazon\n\nThe Amazon carries the most water.\n');
    Object.assign(env, { TOOLS_NETWORK_ALLOW: `127.0.0.1:${standInPort}`, SEARCH_CORPUS_DIR: corpusDir });
  });
  after(async () => {
    for (const server of [...counting, standIn]) server.close();
    await rm(corpusDir, { recursive: true, force: true });
  });

  const gateway = useGateway({ env });

  async function runResearchTask(toolCalls: unknown[]) {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'Research rivers', context: { role: 'research', mock_tool_calls: toolCalls } });
    assert.equal(submitted.status, 200, submitted.text);
    const task = await waitForTask(gateway(), submitted.body.task_id, 60_000);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const { rows: calls } = await gateway().sql.query<ToolCallRow>('select tool, input, output, error from tool_calls where task_id = $1 order by call_key', [task.task_id]);
    const { rows: observations } = await gateway().sql.query(
      "select payload from task_events where task_id = $1 and type = 'TOOL_OBSERVATION' order by seq", [task.task_id]);
    return { calls, observations: observations.map((row) => row.payload) };
  }

  it('20 ways to reach loopback, private and metadata addresses are all refused, and no connection reaches loopback', async () => {
    const loopback = (host: string, pathname = '/') => `http://${host}:${loopbackPort}${pathname}`;
    const direct = [
      loopback('127.0.0.1'), 'http://10.0.0.1/', loopback('[::1]'), 'http://169.254.169.254/latest/meta-data/', loopback('localhost'),
      loopback('2130706433'), loopback('0177.0.0.1'), loopback('0x7f.0.0.1'), loopback('127.1'), loopback('[::ffff:127.0.0.1]'),
    ];
    const more = [
      `${standInUrl}/redirect-loopback`, `${standInUrl}/redirect-localhost`, `${standInUrl}/redirect-decimal`,
      loopback('0x7f000001'), loopback('017700000001'), loopback('0.0.0.0'), loopback('[::]'), loopback('[::ffff:7f00:1]'),
      loopback('[::127.0.0.1]'), loopback('[0:0:0:0:0:0:0:1]'),
    ];
    const { calls, observations } = await runResearchTask([[
      { tool: 'web_fetch', args: { urls: direct } },
      { tool: 'web_fetch', args: { urls: more } },
      { tool: 'web_fetch', args: { url: loopback('127.0.0.1', '/single') } },
    ]]);
    assert.deepEqual(calls.map((call) => call.tool), ['web_fetch', 'web_fetch', 'web_fetch']);
    const batchResults = [...calls[0].output.pages, ...calls[1].output.pages];
    assert.deepEqual(batchResults.map((result: any) => result.url), [...direct, ...more]);
    for (const result of batchResults) assert.match(result.error, REFUSAL, result.url);
    assert.match(batchResults[0].error, /^refused: 127\.0\.0\.1 is a loopback address/);
    assert.match(batchResults[3].error, /^refused: 169\.254\.169\.254 is the cloud metadata address/);
    assert.match(batchResults[4].error, /^refused: localhost resolves to 127\.0\.0\.1, a loopback address/);
    assert.match(batchResults[10].error, new RegExp(`; reached by a redirect to http://127\\.0\\.0\\.1:${loopbackPort}/$`));
    assert.match(calls[2].error!, REFUSAL);
    assert.equal(observations.length, 3);
    assert.match(observations[2].error, REFUSAL);
    assert.equal(loopbackConnections, 0);
    assert.ok(requested.includes('/redirect-loopback'), 'the allowed stand-in itself was reached');
  });

  it('an allowed stand-in page comes back as Markdown of its article; web_subpage_fetch keeps to its host', async () => {
    const { calls } = await runResearchTask([[
      { tool: 'web_fetch', args: { url: `${standInUrl}/article` } },
      { tool: 'web_subpage_fetch', args: { url: standInUrl, paths: ['/article', `http://127.0.0.1:${loopbackPort}/`] } },
    ]]);
    const page = calls[0].output;
    assert.equal(calls[0].error, null);
    assert.deepEqual({ ...page, content: undefined }, {
      url: `${standInUrl}/article`, final_url: `${standInUrl}/article`, title: 'Deltas | River guide', content: undefined, truncated: false, status: 200, source: 'network',
    });
    assert.match(page.content, /^A river delta is a landform/);
    assert.match(page.content, /Ganges delta alone covers/);
    assert.doesNotMatch(page.content, /Shop the river store|Newsletter/);
    const [subpage, elsewhere] = calls[1].output.pages;
    assert.equal(subpage.content, page.content);
    assert.equal(elsewhere.error, `not on 127.0.0.1:${new URL(standInUrl).port}: web_subpage_fetch reads one site only`);
    assert.equal(loopbackConnections, 0);
  });

  it('web_crawl stays on the site, honours robots.txt and stops at the page cap', async () => {
    const { calls } = await runResearchTask([{ tool: 'web_crawl', args: { url: `${standInUrl}/site/`, max_depth: 2, max_pages: 4 } }]);
    const crawl = calls[0].output;
    assert.equal(calls[0].error, null);
    assert.deepEqual(crawl.pages.map((page: any) => new URL(page.url).pathname), ['/site/', '/site/a', '/site/b', '/site/c']);
    assert.ok(crawl.pages.every((page: any) => page.status === 200 && page.source === 'network'));
    assert.deepEqual(crawl.disallowed_by_robots, [`${standInUrl}/private/secret`]);
    assert.equal(crawl.left_by_page_cap, 3, '/site/a1, /site/a2 and /site/b1 were left');
    assert.ok(requested.includes('/robots.txt'));
    assert.ok(!requested.some((url) => url.startsWith('/private')), 'a path robots.txt forbids is never requested');
  });

  it('a page of the offline corpus is served from it, with no network access', async () => {
    const { calls } = await runResearchTask([[
      { tool: 'web_fetch', args: { url: 'https://offline.agentgate.example/rivers/nile' } },
      { tool: 'web_crawl', args: { url: 'https://offline.agentgate.example/rivers/nile' } },
    ]]);
    assert.deepEqual(calls[0].output, {
      url: 'https://offline.agentgate.example/rivers/nile', final_url: 'https://offline.agentgate.example/rivers/nile', title: 'The Nile',
      content: '# The Nile\n\nThe Nile flows north into the Mediterranean.', truncated: false, status: 200, source: 'fixture',
    });
    const crawled = calls[1].output.pages;
    assert.deepEqual(crawled.map((page: any) => [page.title, page.source]), [['The Nile', 'fixture'], ['The Amazon', 'fixture']]);
  });

  it('the loopback listener does count connections: the zeros above are not for want of counting', async () => {
    const before = loopbackConnections;
    await fetch(`http://127.0.0.1:${loopbackPort}/`).then((response) => response.text());
    assert.equal(loopbackConnections, before + 1);
  });
});
