import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { findChromium } from '../../src/tools/browser/find-chromium.ts';
import { startDnsStandIn, type DnsStandIn } from '../fixtures/dns-stand-in.ts';
import { useGateway, waitForTask } from '../helpers/gateway.ts';

const chromiumMissing = await findChromium(process.env.CHROMIUM_PATH).then(() => false, (error: Error) => error.message);

/** The address TOOLS_NETWORK_ALLOW opens: the allowed server listens here, on the loopback-only server's port. */
const ALLOWED_ADDRESS = '127.0.0.2';
const LOOPBACK_REFUSAL = (name: string) => `refused: ${name} resolves to 127.0.0.1, a loopback address (set TOOLS_NETWORK_ALLOW to allow it)`;

/**
 * Every network tool resolves names with TOOLS_DNS_SERVERS, here a DNS stand-in, and connects to the address it
 * checked. Two kinds of names: `localhost`, which the stand-in answers with the allowed address while the
 * system's resolver says 127.0.0.1 (so any lookup outside the guard reaches the loopback-only server), and
 * `*.rebind.test`, which the stand-in answers with the allowed address the first time and 127.0.0.1 after.
 */
describe('a name whose answer changes to loopback after the guard checked it', { timeout: 240_000 }, () => {
  const env: Record<string, string> = { TOOLS_NETWORK_ALLOW: ALLOWED_ADDRESS, BROWSER_TIMEOUT_MS: '20000' };
  let dns: DnsStandIn;
  let port = 0;
  const loopbackRequests: string[] = [];
  const allowedRequests: string[] = [];
  const loopbackOnly = http.createServer((request, response) => {
    loopbackRequests.push(`${request.headers.host}${request.url}`);
    response.end('secret');
  });
  const allowed = http.createServer((request, response) => {
    allowedRequests.push(`${request.headers.host}${request.url}`);
    const html = (body: string) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    switch (request.url?.replace(/\?.*$/, '')) {
      case '/robots.txt': return void response.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      case '/article': return void html('<title>Allowed article</title><article><h1>Allowed</h1><p>This page is served by the allowed address only, never by loopback.</p></article>');
      case '/site/': return void html('<title>Site</title><p>The start of the site.</p><a href="/site/a">A</a>');
      case '/site/a': return void html('<title>Site A</title><p>Page A of the site.</p>');
      case '/next': return void html('<title>Next page</title><p>Reached by a click.</p>');
      case '/form': return void html(`<title>Form</title><form action="http://form.rebind.test:${port}/next"><input id="q" name="q"></form>`);
      case '/pixel.png': return void response.writeHead(200, { 'content-type': 'image/png' }).end();
      case '/browse': return void html(`<title>Browse</title><p>A page with subresources.</p>
<img src="http://localhost:${port}/pixel.png"><img src="http://pixels.rebind.test:${port}/pixel.png?one"><img src="http://pixels.rebind.test:${port}/pixel.png?two">
<a id="next" href="http://click.rebind.test:${port}/next">Next</a>`);
      default: return void response.writeHead(404).end();
    }
  });

  before(async () => {
    loopbackOnly.listen(0, '127.0.0.1');
    await once(loopbackOnly, 'listening');
    port = (loopbackOnly.address() as AddressInfo).port;
    allowed.listen(port, ALLOWED_ADDRESS);
    await once(allowed, 'listening');
    dns = await startDnsStandIn((name, questionNumber) => {
      if (name === 'localhost') return ALLOWED_ADDRESS;
      if (name.endsWith('.rebind.test')) return questionNumber === 1 ? ALLOWED_ADDRESS : '127.0.0.1';
      return undefined;
    });
    env.TOOLS_DNS_SERVERS = dns.address;
  });
  after(() => {
    loopbackOnly.close();
    allowed.close();
    dns.close();
  });

  const gateway = useGateway({ env });
  async function execute(tool: string, args: Record<string, unknown>) {
    const answer = await gateway().request('POST', `/api/v1/tools/${tool}/execute`, { arguments: args });
    assert.equal(answer.status, 200, answer.text);
    return answer.body as { success: boolean; output: any; error: string | null };
  }

  it('web_fetch connects to the checked answer and asks DNS once per fetch', async () => {
    const throughLocalhost = await execute('web_fetch', { url: `http://localhost:${port}/article` });
    assert.equal(throughLocalhost.error, null);
    assert.match(throughLocalhost.output.content, /served by the allowed address only/);
    const rebound = await execute('web_fetch', { url: `http://fetch.rebind.test:${port}/article` });
    assert.equal(rebound.error, null);
    assert.match(rebound.output.content, /served by the allowed address only/);
    assert.equal(dns.questionsFor('fetch.rebind.test'), 1, 'the second, loopback answer was never asked for');
    assert.deepEqual(loopbackRequests, []);
  });

  it('web_subpage_fetch reads each page from the checked answer', async () => {
    const answer = await execute('web_subpage_fetch', { url: `http://localhost:${port}`, paths: ['/article', '/site/'] });
    assert.equal(answer.error, null);
    assert.deepEqual(answer.output.pages.map((page: any) => [page.title, page.error]), [['Allowed article', undefined], ['Site', undefined]]);
    assert.deepEqual(loopbackRequests, []);
  });

  it('web_crawl reads robots.txt and the pages from checked answers, and refuses a page whose answer turned to loopback', async () => {
    const throughLocalhost = await execute('web_crawl', { url: `http://localhost:${port}/site/` });
    assert.equal(throughLocalhost.error, null);
    assert.equal(throughLocalhost.output.robots, `robots.txt of localhost:${port} honoured`);
    assert.deepEqual(throughLocalhost.output.pages.map((page: any) => page.title), ['Site', 'Site A']);
    // robots.txt gets the first answer; the start page's lookup gets loopback and is refused.
    const rebound = await execute('web_crawl', { url: `http://crawl.rebind.test:${port}/site/` });
    assert.equal(rebound.output.robots, `robots.txt of crawl.rebind.test:${port} honoured`);
    assert.ok(allowedRequests.includes(`crawl.rebind.test:${port}/robots.txt`));
    assert.deepEqual(rebound.output.pages, [{ url: `http://crawl.rebind.test:${port}/site/`, error: LOOPBACK_REFUSAL('crawl.rebind.test') }]);
    assert.deepEqual(loopbackRequests, []);
  });

  it('browser_navigate loads the page and its subresources from checked answers only', { skip: chromiumMissing || undefined }, async () => {
    const navigated = await execute('browser_navigate', { url: `http://localhost:${port}/browse` });
    assert.equal(navigated.error, null);
    assert.equal(navigated.output.title, 'Browse');
    assert.ok(allowedRequests.includes(`localhost:${port}/pixel.png`), 'the localhost image came from the allowed address');
    // Two images on one rebinding name: one lookup gets the allowed address, the other loopback, which is refused.
    assert.equal(allowedRequests.filter((request) => request.startsWith(`pixels.rebind.test:${port}/`)).length, 1);
    assert.equal(dns.questionsFor('pixels.rebind.test'), 2);
    assert.deepEqual(loopbackRequests, []);
  });

  it('a browser navigation whose name turned to loopback after the first check is refused with the guard\'s message', { skip: chromiumMissing || undefined }, async () => {
    const navigated = await execute('browser_navigate', { url: `http://navigate.rebind.test:${port}/browse` });
    assert.equal(navigated.success, false);
    assert.equal(navigated.error, LOOPBACK_REFUSAL('navigate.rebind.test'));
    assert.deepEqual(loopbackRequests, []);
  });

  it('browser_click follows a link to a rebinding name to the checked answer', { skip: chromiumMissing || undefined }, async () => {
    const clicked = await execute('browser_click', { url: `http://localhost:${port}/browse`, selector: '#next' });
    assert.equal(clicked.error, null);
    assert.deepEqual([clicked.output.final_url, clicked.output.title], [`http://click.rebind.test:${port}/next`, 'Next page']);
    assert.ok(allowedRequests.includes(`click.rebind.test:${port}/next`));
    assert.deepEqual(loopbackRequests, []);
  });

  it('browser_extract and browser_type read their pages, and a form\'s target, from checked answers', { skip: chromiumMissing || undefined }, async () => {
    const extracted = await execute('browser_extract', { url: `http://localhost:${port}/article`, selector: 'article' });
    assert.equal(extracted.error, null);
    assert.match(extracted.output.text, /served by the allowed address only/);
    const typed = await execute('browser_type', { url: `http://localhost:${port}/form`, selector: '#q', text: 'deltas', submit: true });
    assert.equal(typed.error, null);
    assert.deepEqual([typed.output.final_url, typed.output.title], [`http://form.rebind.test:${port}/next?q=deltas`, 'Next page']);
    assert.deepEqual(loopbackRequests, []);
  });

  it('browser_screenshot shoots the page from the checked answer, and refuses a name that turned to loopback', { skip: chromiumMissing || undefined }, async () => {
    // A screenshot is stored in a session's workspace: a task opens the session.
    const task = await gateway().request('POST', '/api/v1/tasks', { query: 'open a session', mode: 'simple', session_id: 'rebind-shots' });
    assert.equal(task.status, 200, task.text);
    await waitForTask(gateway(), task.body.task_id);
    const shot = await execute('browser_screenshot', { url: `http://localhost:${port}/article` });
    assert.match(shot.error ?? '', /has no session/);
    const answer = await gateway().request('POST', '/api/v1/tools/browser_screenshot/execute',
      { arguments: { url: `http://localhost:${port}/article` }, session_id: 'rebind-shots' });
    assert.equal(answer.body.error, null, answer.text);
    assert.ok(allowedRequests.includes(`localhost:${port}/article`));
    const refused = await gateway().request('POST', '/api/v1/tools/browser_screenshot/execute',
      { arguments: { url: `http://shot.rebind.test:${port}/article` }, session_id: 'rebind-shots' });
    assert.equal(refused.body.success, false);
    assert.equal(refused.body.error, LOOPBACK_REFUSAL('shot.rebind.test'));
    assert.deepEqual(loopbackRequests, []);
  });

  it('the loopback-only server does answer: the empty lists above are not for want of listening', async () => {
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'secret');
    assert.deepEqual(loopbackRequests, [`127.0.0.1:${port}/`]);
  });
});
