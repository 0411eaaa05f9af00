import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { findChromium } from '../../src/tools/browser/find-chromium.ts';
import { useGateway, waitForTask } from '../helpers/gateway.ts';

type ToolCallRow = { tool: string; output: any; error: string | null };

const REFUSAL = /^refused: 127\.0\.0\.1 is a loopback address \(set TOOLS_NETWORK_ALLOW to allow it\)/;

const chromiumMissing = await findChromium(process.env.CHROMIUM_PATH).then(() => false, (error: Error) => error.message);

async function listen(server: http.Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

describe('the browser tools in a browser_use task', { skip: chromiumMissing || undefined, timeout: 180_000 }, () => {
  const env: Record<string, string> = { DEFAULT_TASK_MODE: 'auto', BROWSER_TIMEOUT_MS: '15000' };
  let loopbackConnections = 0;
  const forbidden = http.createServer((_request, response) => response.end('secret'));
  let forbiddenPort = 0;
  const standIn = http.createServer((request, response) => {
    const html = (body: string) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    if (request.url === '/redirect-loopback') return void response.writeHead(302, { location: `http://127.0.0.1:${forbiddenPort}/` }).end();
    if (request.url === '/next') return void html('<title>Second page</title><p>You followed the link.</p>');
    if (request.url === '/gzipped') {
      return void response.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }).end(gzipSync('<title>Compressed</title><p>Sent gzipped.</p>'));
    }
    if (request.url === '/form') {
      response.setHeader('set-cookie', ['first=1; Path=/', 'second=2; Path=/']);
      return void html('<title>Form</title><form method="post" action="/posted"><input name="q" id="q"></form>');
    }
    if (request.method === 'POST' && request.url === '/posted') {
      let body = '';
      request.on('data', (chunk) => { body += chunk; });
      request.on('end', () => html(`<title>Posted</title><p>${request.headers['content-type']}|${body}|${request.headers.cookie}</p>`));
      return;
    }
    html(`<!doctype html><title>River guide</title><nav><a href="/shop">Shop</a></nav>
<article id="story"><h1>Deltas</h1><p>A river delta is a landform.</p><a id="more" href="/next">Read more</a></article>
<img src="http://127.0.0.1:${forbiddenPort}/tracker.png">`);
  });
  let standInUrl = '';

  before(async () => {
    forbidden.on('connection', () => { loopbackConnections += 1; });
    forbiddenPort = await listen(forbidden);
    const standInPort = await listen(standIn);
    standInUrl = `http://127.0.0.1:${standInPort}`;
    env.TOOLS_NETWORK_ALLOW = `127.0.0.1:${standInPort}`;
  });
  after(() => {
    forbidden.close();
    standIn.close();
  });

  const gateway = useGateway({ env });

  async function runBrowserTask(sessionId: string, toolCalls: unknown[]): Promise<ToolCallRow[]> {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'Browse', session_id: sessionId, context: { role: 'browser_use', mock_tool_calls: toolCalls } });
    assert.equal(submitted.status, 200, submitted.text);
    const task = await waitForTask(gateway(), submitted.body.task_id, 90_000);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const { rows } = await gateway().sql.query<ToolCallRow>('select tool, output, error from tool_calls where task_id = $1 order by call_key', [task.task_id]);
    return rows;
  }

  it('navigate, extract and click read the allowed stand-in; a loopback image on another port is never requested', async () => {
    const calls = await runBrowserTask('browse-read', [
      { tool: 'browser_navigate', args: { url: `${standInUrl}/` } },
      { tool: 'browser_extract', args: { url: `${standInUrl}/`, selector: '#story' } },
      { tool: 'browser_click', args: { url: `${standInUrl}/`, selector: '#more' } },
    ]);
    assert.deepEqual(calls.map((call) => [call.tool, call.error]), [['browser_navigate', null], ['browser_extract', null], ['browser_click', null]]);
    const [navigated, extracted, clicked] = calls.map((call) => call.output);
    assert.equal(navigated.title, 'River guide');
    assert.equal(navigated.final_url, `${standInUrl}/`);
    assert.match(navigated.text, /A river delta is a landform\./);
    assert.equal(extracted.text, 'Deltas\n\nA river delta is a landform.\n\nRead more');
    assert.deepEqual(extracted.links, [{ text: 'Read more', url: `${standInUrl}/next` }]);
    assert.deepEqual({ final_url: clicked.final_url, title: clicked.title, text: clicked.text }, { final_url: `${standInUrl}/next`, title: 'Second page', text: 'You followed the link.' });
    assert.equal(loopbackConnections, 0, 'the image on the loopback port that is not allowed was aborted');
  });

  it('a navigation to a loopback port that is not allowed, directly or by a redirect, is refused with the guard\'s message', async () => {
    const calls = await runBrowserTask('browse-refused', [[
      { tool: 'browser_navigate', args: { url: `http://127.0.0.1:${forbiddenPort}/` } },
      { tool: 'browser_navigate', args: { url: `${standInUrl}/redirect-loopback` } },
    ]]);
    assert.equal(calls.length, 2, JSON.stringify(calls));
    assert.match(calls[0].error!, REFUSAL);
    assert.match(calls[1].error!, REFUSAL);
    assert.match(calls[1].error!, new RegExp(`; reached by a redirect to http://127\\.0\\.0\\.1:${forbiddenPort}/$`));
    assert.equal(loopbackConnections, 0);
  });

  it('a compressed page is decoded once, and a form is posted with its body and the cookies the page set', async () => {
    const calls = await runBrowserTask('browse-forms', [
      { tool: 'browser_navigate', args: { url: `${standInUrl}/gzipped` } },
      { tool: 'browser_type', args: { url: `${standInUrl}/form`, selector: '#q', text: 'river deltas', submit: true } },
    ]);
    assert.deepEqual(calls.map((call) => call.error), [null, null]);
    assert.deepEqual([calls[0].output.title, calls[0].output.text], ['Compressed', 'Sent gzipped.']);
    assert.deepEqual([calls[1].output.title, calls[1].output.text], ['Posted', 'application/x-www-form-urlencoded|q=river+deltas|first=1; second=2']);
  });

  it('a screenshot is stored as a PNG in the session workspace and downloadable through the files API', async () => {
    const calls = await runBrowserTask('browse-shots', [{ tool: 'browser_screenshot', args: { url: `${standInUrl}/` } }]);
    assert.equal(calls[0].error, null);
    const shot = calls[0].output;
    assert.match(shot.path, /^screenshots\/\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z\.png$/);
    assert.deepEqual([shot.width, shot.height], [1280, 720]);
    const listed = await gateway().request('GET', '/api/v1/sessions/browse-shots/files');
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(listed.body.files.map((file: any) => [file.path, file.size]), [[shot.path, shot.bytes]]);
    const download = await fetch(`${gateway().url}/api/v1/sessions/browse-shots/files/${shot.path}`);
    assert.equal(download.status, 200);
    const png = Buffer.from(await download.arrayBuffer());
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    assert.equal(png.length, shot.bytes);
  });

  it('the loopback listener does count connections: the zeros above are not for want of counting', async () => {
    await fetch(`http://127.0.0.1:${forbiddenPort}/`).then((response) => response.text());
    assert.equal(loopbackConnections, 1);
  });
});
