import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { findChromium } from '../../src/tools/browser/find-chromium.ts';
import { useGateway, waitFor } from '../helpers/gateway.ts';
import { residentBytes, withPeakResident } from '../helpers/process-memory.ts';

const chromiumMissing = await findChromium(process.env.CHROMIUM_PATH).then(() => false, (error: Error) => error.message);

const MIB = 1024 * 1024;
const HUGE_BYTES = 800 * MIB;
/**
 * Large enough that what the reading leaves for the garbage collector (V8 collects once some 64 MB of buffers
 * has been allocated since its last collection, and more arrive while it marks) does not hide the bound: at
 * 16 MiB a first read grew RSS by 56-75 MiB, at 128 MiB three reads by up to 225 MiB, at 256 MiB by up to 342.
 */
const LIMIT_BYTES = 256 * MIB;
/** What the kernel may hold on top of what the gateway read: loopback socket buffers (tcp_rmem max 32 MiB + tcp_wmem 4 MiB here). */
const SOCKET_BUFFERS_BYTES = 40 * MIB;

/**
 * Serves HUGE_BYTES, generated chunk by chunk as the client takes them (never held in memory), and records how
 * many bytes it handed to the socket before the client hung up.
 */
function serveHuge(response: http.ServerResponse, contentType: string, isLengthAnnounced: boolean, onClose: (sentBytes: number) => void): void {
  const chunk = Buffer.alloc(64 * 1024, contentType === 'text/html' ? '<p>xxxxxxxxxxxxxxxxxxxxxxxxxxxx</p>\n' : 'x');
  let sentBytes = 0;
  response.writeHead(200, { 'content-type': contentType, ...(isLengthAnnounced ? { 'content-length': String(HUGE_BYTES) } : {}) });
  response.on('close', () => onClose(sentBytes));
  const writeMore = () => {
    while (sentBytes < HUGE_BYTES && !response.destroyed) {
      sentBytes += chunk.length;
      if (!response.write(chunk)) return void response.once('drain', writeMore);
    }
    response.end();
  };
  writeMore();
}

describe('an 800 MB response to a tool', { timeout: 600_000 }, () => {
  const env: Record<string, string> = { TOOLS_FETCH_MAX_BYTES: String(LIMIT_BYTES), TOOLS_FETCH_TIMEOUT_MS: '60000', BROWSER_TIMEOUT_MS: '60000' };
  const sent = new Map<string, number>();
  const standIn = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://stand-in');
    if (url.pathname === '/small') return void response.writeHead(200, { 'content-type': 'text/html' }).end('<title>Small</title><p>A small page.</p>');
    const contentType = url.searchParams.get('type') ?? 'text/plain';
    serveHuge(response, contentType, url.searchParams.has('announced'), (sentBytes) => sent.set(request.url!, sentBytes));
  });
  let standInUrl = '';

  before(async () => {
    standIn.listen(0, '127.0.0.1');
    await once(standIn, 'listening');
    const { port } = standIn.address() as AddressInfo;
    standInUrl = `http://127.0.0.1:${port}`;
    env.TOOLS_NETWORK_ALLOW = `127.0.0.1:${port}`;
  });
  after(() => standIn.close());

  const gateway = useGateway({ env });
  const execute = (tool: string, args: Record<string, unknown>) =>
    gateway().request('POST', `/api/v1/tools/${tool}/execute`, { arguments: args });

  /** The stand-in's count for a path, once the gateway has hung up on it. */
  const sentFor = (path: string) => waitFor(`the stand-in to see ${path} closed`, async () => sent.get(path));

  /**
   * Calls the tool on an 800 MB response three times (chunked, with its Content-Length, chunked again), checks
   * each answer and that the stand-in could send no more than the limit and the socket buffers, and resolves
   * with the gateway's highest RSS over the three calls less its RSS before them.
   */
  async function growthOverThreeHugeReads(tool: string, type: string, checkAnswer: (answer: any, url: string) => void): Promise<number> {
    const pid = gateway().pid();
    const readHuge = async (index: number, isLengthAnnounced: boolean) => {
      const path = `/huge?type=${type}&read=${index}${isLengthAnnounced ? '&announced' : ''}`;
      const answer = await execute(tool, { url: `${standInUrl}${path}` });
      assert.equal(answer.status, 200, answer.text);
      checkAnswer(answer.body, `${standInUrl}${path}`);
      const sentBytes = await sentFor(path);
      assert.ok(sentBytes < LIMIT_BYTES + SOCKET_BUFFERS_BYTES, `the stand-in sent ${mib(sentBytes)}`);
    };
    const before = await residentBytes(pid);
    const { peakBytes } = await withPeakResident(pid, async () => {
      for (const [index, isLengthAnnounced] of [[1, false], [2, true], [3, false]] as const) await readHuge(index, isLengthAnnounced);
    });
    return peakBytes - before;
  }

  const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;

  it('web_fetch: each read stops at the limit with a clear observation, and RSS grows by less than 2x the limit', async () => {
    const small = await execute('web_fetch', { url: `${standInUrl}/small` });
    assert.equal(small.body.output?.title, 'Small', small.text);
    // A PDF cut short cannot be read: what is measured is the read, not a parser (their costs are their own tests').
    const growthBytes = await growthOverThreeHugeReads('web_fetch', 'application/pdf', (answer) => {
      assert.equal(answer.success, false);
      assert.match(answer.error, /^the PDF is larger than TOOLS_FETCH_MAX_BYTES/);
    });
    console.log(`web_fetch: RSS +${mib(growthBytes)} at most over three reads (limit ${mib(LIMIT_BYTES)})`);
    assert.ok(growthBytes < 2 * LIMIT_BYTES, `RSS grew by ${mib(growthBytes)}`);
  });

  it('browser_navigate: each read stops at the limit, the navigation is refused naming it, and RSS grows by less than 2x the limit', { skip: chromiumMissing || undefined }, async () => {
    // The browser is launched by a first call, so that its start is not counted.
    const small = await execute('browser_navigate', { url: `${standInUrl}/small` });
    assert.equal(small.body.output?.title, 'Small', small.text);
    const growthBytes = await growthOverThreeHugeReads('browser_navigate', 'text/html', (answer, url) => {
      assert.equal(answer.success, false);
      assert.equal(answer.error, `${url} answered more than ${LIMIT_BYTES} bytes (TOOLS_FETCH_MAX_BYTES)`);
    });
    console.log(`browser_navigate: RSS +${mib(growthBytes)} at most over three reads (limit ${mib(LIMIT_BYTES)})`);
    assert.ok(growthBytes < 2 * LIMIT_BYTES, `RSS grew by ${mib(growthBytes)}`);
  });
});
