import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { guardedFetch, MAX_REDIRECTS, type NetworkSettings } from '../../../../src/tools/network/guarded-fetch.ts';
import { startDnsStandIn } from '../../../fixtures/dns-stand-in.ts';

/** A local server that counts the connections it accepts. */
async function listen(handler: http.RequestListener) {
  const server = http.createServer(handler);
  let connections = 0;
  server.on('connection', () => { connections += 1; });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port, connections: () => connections };
}

describe('guardedFetch', () => {
  let target: Awaited<ReturnType<typeof listen>>;
  let standIn: Awaited<ReturnType<typeof listen>>;
  let otherOrigin: Awaited<ReturnType<typeof listen>>;
  let network: NetworkSettings;
  const echo: http.RequestListener = (request, response) =>
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: request.method, headers: request.headers }));

  before(async () => {
    target = await listen((_request, response) => response.end('must never be read'));
    otherOrigin = await listen(echo);
    standIn = await listen((request, response) => {
      const redirects: Record<string, string> = {
        '/to-loopback': `http://127.0.0.1:${target.port}/`,
        '/to-localhost': `http://localhost:${target.port}/`,
        '/to-decimal': `http://2130706433:${target.port}/`,
        '/relative': '/page',
        '/endless': '/endless',
        '/to-file': 'file:///etc/passwd',
        '/to-echo': '/echo',
        '/to-other-origin': `http://127.0.0.1:${otherOrigin.port}/echo`,
      };
      if (request.url === '/echo') return void echo(request, response);
      if (request.url === '/see-other') return void response.writeHead(303, { location: '/echo' }).end();
      if (request.url === '/slow') return void setTimeout(() => response.end('late'), 2000);
      if (request.url === '/large') return void response.end('x'.repeat(50_000));
      const location = redirects[request.url ?? ''];
      if (location) return void response.writeHead(302, { location }).end();
      response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(`page ${request.url}`);
    });
    network = { allow: [`127.0.0.1:${standIn.port}`], fetchTimeoutMs: 1000, fetchMaxBytes: 10_000, dnsServers: [] };
  });
  after(() => {
    for (const { server } of [target, standIn, otherOrigin]) server.close();
  });

  it('fetches an allowed stand-in and follows a redirect on it', async () => {
    const response = await guardedFetch(`http://127.0.0.1:${standIn.port}/relative`, { network });
    assert.equal(response.status, 200);
    assert.equal(response.finalUrl, `http://127.0.0.1:${standIn.port}/page`);
    assert.equal(new TextDecoder().decode(response.body), 'page /page');
    assert.equal(response.headers.get('content-type'), 'text/plain; charset=utf-8');
  });

  it('a redirect from the stand-in to loopback, in any form, is refused before connecting', async () => {
    for (const path of ['/to-loopback', '/to-localhost', '/to-decimal']) {
      await assert.rejects(guardedFetch(`http://127.0.0.1:${standIn.port}${path}`, { network }),
        { message: /^refused: .*a loopback address \(set TOOLS_NETWORK_ALLOW to allow it\); reached by a redirect to http:\/\/(127\.0\.0\.1|localhost)/ });
    }
    await assert.rejects(guardedFetch(`http://127.0.0.1:${standIn.port}/to-file`, { network }), { message: /only http and https.*reached by a redirect/ });
    assert.equal(target.connections(), 0);
  });

  it('credentials follow a redirect within the origin only', async () => {
    const headers = { authorization: 'Bearer secret', 'x-api-key': 'secret', 'user-agent': 'agentgate-test' };
    const echoed = async (path: string, allow: string[]) => {
      const response = await guardedFetch(`http://127.0.0.1:${standIn.port}${path}`, { network: { ...network, allow }, headers });
      return JSON.parse(new TextDecoder().decode(response.body)).headers;
    };
    const sameOrigin = await echoed('/to-echo', network.allow);
    assert.equal(sameOrigin.authorization, 'Bearer secret');
    assert.equal(sameOrigin['x-api-key'], 'secret');
    const otherOriginHeaders = await echoed('/to-other-origin', [...network.allow, `127.0.0.1:${otherOrigin.port}`]);
    assert.equal(otherOriginHeaders.authorization, undefined);
    assert.equal(otherOriginHeaders['x-api-key'], undefined);
    assert.equal(otherOriginHeaders['user-agent'], 'agentgate-test');
  });

  it('a POST answered with 303 is followed with a GET', async () => {
    const response = await guardedFetch(`http://127.0.0.1:${standIn.port}/see-other`, {
      network, method: 'POST', body: '{"q":1}', headers: { 'content-type': 'application/json' },
    });
    assert.equal(JSON.parse(new TextDecoder().decode(response.body)).method, 'GET');
  });

  it(`stops after ${MAX_REDIRECTS} redirects`, async () => {
    await assert.rejects(guardedFetch(`http://127.0.0.1:${standIn.port}/endless`, { network }), { message: /stopped after 5 redirects/ });
  });

  it('resolves with TOOLS_DNS_SERVERS and connects to the address it checked, never asking again', async () => {
    // The first answer is the allowed stand-in; any later question would be answered with the forbidden target.
    const dns = await startDnsStandIn((name, questionNumber) => {
      if (name !== 'stand-in.test') return undefined;
      return questionNumber === 1 ? '127.0.0.1' : '127.0.0.3';
    });
    try {
      const response = await guardedFetch(`http://stand-in.test:${standIn.port}/pinned`, { network: { ...network, allow: ['127.0.0.1'], dnsServers: [dns.address] } });
      assert.equal(new TextDecoder().decode(response.body), 'page /pinned');
      assert.equal(dns.questionsFor('stand-in.test'), 1);
      await assert.rejects(guardedFetch(`http://unknown.test:${standIn.port}/`, { network: { ...network, dnsServers: [dns.address] } }), { message: /^cannot resolve unknown\.test: / });
    } finally {
      dns.close();
    }
  });

  it('a body over the size cap is cut there and says so', async () => {
    const response = await guardedFetch(`http://127.0.0.1:${standIn.port}/large`, { network });
    assert.equal(response.body.length, 10_000);
    assert.equal(response.bodyTruncated, true);
  });

  it('a server slower than the time cap is given up on', async () => {
    await assert.rejects(guardedFetch(`http://127.0.0.1:${standIn.port}/slow`, { network }), { message: 'timed out after 1000 ms (TOOLS_FETCH_TIMEOUT_MS)' });
  });

  it("the caller's abort ends the fetch with the caller's reason", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('task cancelled')), 50);
    await assert.rejects(guardedFetch(`http://127.0.0.1:${standIn.port}/slow`, { network: { ...network, fetchTimeoutMs: 5000 }, signal: controller.signal }), { message: 'task cancelled' });
  });

  it('a refused connection says why', async () => {
    const closed = await listen(() => {});
    closed.server.close();
    await assert.rejects(guardedFetch(`http://127.0.0.1:${closed.port}/`, { network: { ...network, allow: [`127.0.0.1:${closed.port}`] } }), { message: 'fetch failed: ECONNREFUSED' });
  });
});
