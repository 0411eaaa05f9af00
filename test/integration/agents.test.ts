import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import zlib from 'node:zlib';
import path from 'node:path';
import { after, before, describe, it, test } from 'node:test';
import { findChromium } from '../../src/tools/browser/find-chromium.ts';
import { addMember, registerAccount, withKey, type Account } from '../helpers/accounts.ts';
import { createTestDatabase, runRefused, startGateway, useGateway, waitFor, waitForTask, type Gateway } from '../helpers/gateway.ts';

const authEnv = { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!' };
const chromiumMissing = await findChromium(process.env.CHROMIUM_PATH).then(() => false, (error: Error) => `no Chromium to drive: ${error.message}`);
const SERPAPI_KEY = 'stand-in-serpapi-key';

/** A 3x2 PNG (an ad creative as the network would serve it), made here: signature, IHDR, one IDAT, IEND. */
const TINY_PNG = (() => {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(3, 0);
  header.writeUInt32BE(2, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows = Buffer.from([0, 255, 0, 0, 255, 0, 0, 255, 0, 0, 0, 0, 0, 255, 0, 0, 255, 0, 0, 255]);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', zlib.deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
})();

/** SerpApi's wire format (test/fixtures/serpapi) and a feed and a page, as the network would serve them, on 127.0.0.1. */
function standInServer(): { server: Server; requests: URL[] } {
  const requests: URL[] = [];
  const server = createServer(async (request, response) => {
    const url = new URL(request.url!, 'http://stand-in');
    requests.push(url);
    const send = (status: number, type: string, body: string | Buffer) => response.writeHead(status, { 'content-type': type }).end(body);
    if (url.pathname === '/search.json') {
      if (url.searchParams.get('api_key') !== SERPAPI_KEY) return send(401, 'application/json', JSON.stringify({ error: 'Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key' }));
      const fixture = url.searchParams.get('engine') === 'google_ads_transparency_center' ? 'ads-transparency.json' : 'google-ads.json';
      return send(200, 'application/json', await readFile(`test/fixtures/serpapi/${fixture}`));
    }
    if (url.pathname === '/creative.png') return send(200, 'image/png', TINY_PNG);
    if (url.pathname === '/missing.png') return send(404, 'text/plain', 'no such image');
    if (url.pathname === '/feeds/slow.xml' && holdSlowFeed) return; // never answered: the process is killed meanwhile
    if (url.pathname === '/feeds/markets.xml' || url.pathname === '/feeds/slow.xml') return send(200, 'application/rss+xml', await readFile('config/news-feeds/markets.xml'));
    return send(200, 'text/html', '<!doctype html><title>Landing page</title><h1 style="color:#c00">Try Quillpad free</h1><button>Start</button>');
  });
  return { server, requests };
}

/** While true, the slow feed is never answered (a worker killed mid-call); the run after the restart gets it. */
let holdSlowFeed = true;
const standIn = standInServer();
standIn.server.listen(0, '127.0.0.1');
await new Promise((resolve) => standIn.server.once('listening', resolve));
const standInUrl = `http://127.0.0.1:${(standIn.server.address() as AddressInfo).port}`;
after(() => standIn.server.close());

async function runAgent(gateway: Gateway, account: Account, id: string, input: unknown, extra: Record<string, unknown> = {}) {
  const answer = await gateway.request('POST', `/api/v1/agents/${id}`, { input, ...extra }, withKey(account));
  assert.equal(answer.status, 202, answer.text);
  return { answer, task: await waitForTask(gateway, answer.body.task_id, 90_000, withKey(account)) };
}

const modelCalls = async (gateway: Gateway, taskId: string) =>
  Number((await gateway.sql.query('select count(*) from usage_records where task_id = $1 and (input_tokens > 0 or output_tokens > 0)', [taskId])).rows[0].count);

const eventTypes = async (gateway: Gateway, taskId: string) =>
  (await gateway.sql.query('select type, agent_id from task_events where task_id = $1 order by seq', [taskId])).rows as Array<{ type: string; agent_id: string | null }>;


/** Spec 4.9's input checks: [agent, input, the exact 400 message]. */
const INVALID_INPUTS: Array<[string, unknown, string]> = [
  ['keyword-extract', {}, 'missing required field: text'],
  ['keyword-extract', { text: null }, 'required field text must not be null'],
  ['keyword-extract', { text: 5 }, 'field text must be a string, got integer'],
  ['keyword-extract', { text: 1.5 }, 'field text must be a string, got number'],
  ['keyword-extract', { text: true }, 'field text must be a string, got boolean'],
  ['keyword-extract', { text: ['a'] }, 'field text must be a string, got array'],
  ['keyword-extract', { text: { a: 1 } }, 'field text must be a string, got object'],
  ['keyword-extract', { text: 'x', max_keywords: 'five' }, 'field max_keywords must be an integer, got string'],
  ['keyword-extract', { text: 'x', max_keywords: 2.5 }, 'field max_keywords must be an integer, got number'],
  ['keyword-extract', { text: 'x', max_keywords: null }, 'field max_keywords must be an integer, got null'],
  ['keyword-extract', { text: 'x', max_keywords: 500 }, 'field max_keywords must be <= 50'],
  ['keyword-extract', { text: 'x', colour: 'red' }, 'unknown field: colour'],
  ['keyword-extract', { colour: 'red', size: 2 }, 'missing required field: text; unknown field: colour; unknown field: size'],
  ['serp-ads', {}, 'missing required field: query'],
  ['serp-ads', { query: 'x', device: 'watch' }, 'field device must be one of "desktop", "mobile", "tablet", got "watch"'],
  ['serp-ads', { query: 'x', device: 1 }, 'field device must be a string, got integer'],
  ['browser-screenshot', { url: 'http://example.com', full_page: 'yes' }, 'field full_page must be a boolean, got string'],
  ['browser-screenshot', { url: 'http://example.com', full_page: 1 }, 'field full_page must be a boolean, got integer'],
  ['news-aggregator', { feeds: 'http://example.com/feed' }, 'field feeds must be an array, got string'],
  ['news-aggregator', { feeds: {} }, 'field feeds must be an array, got object'],
  ['news-aggregator', { max_items: true }, 'field max_items must be an integer, got boolean'],
  ['news-aggregator', { query: null }, 'field query must be a string, got null'],
  ['competitor-discover', { company: null, domain: 7 }, 'required field company must not be null; field domain must be a string, got integer'],
  ['ads-transparency', { advertiser: 'tesla.com', format: 'audio' }, 'field format must be one of "text", "image", "video", got "audio"'],
];

describe('agents', { timeout: 300_000 }, () => {
  const gateway = useGateway({
    env: { ...authEnv, SERPAPI_BASE_URL: standInUrl, SERPAPI_API_KEY: SERPAPI_KEY, TOOLS_NETWORK_ALLOW: standInUrl.replace('http://', '') },
  });
  let owner: Account;
  let member: Account;
  let stranger: Account;
  before(async () => {
    owner = await registerAccount(gateway(), 'owner');
    member = await addMember(gateway(), owner, 'member');
    stranger = await registerAccount(gateway(), 'stranger');
  });

  it('lists the catalogue sorted by id, with the spec\'s fields, and finds one agent', async () => {
    const listed = await gateway().request('GET', '/api/v1/agents', undefined, withKey(owner));
    assert.equal(listed.status, 200, listed.text);
    const ids = listed.body.agents.map((agent: any) => agent.id);
    assert.equal(listed.body.count, ids.length);
    assert.deepEqual(ids, [...ids].sort());
    for (const id of ['keyword-extract', 'browser-screenshot', 'news-aggregator', 'competitor-discover', 'serp-ads', 'ads-transparency']) assert.ok(ids.includes(id), id);
    const one = await gateway().request('GET', '/api/v1/agents/keyword-extract', undefined, withKey(owner));
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(Object.keys(one.body).sort(), ['category', 'cost_per_call', 'description', 'id', 'input_schema', 'name', 'output_schema', 'timeout_seconds', 'tool']);
    assert.equal(one.body.tool, 'keyword_extract');
    assert.deepEqual(one.body.input_schema.required, ['text']);
    const missing = await gateway().request('GET', '/api/v1/agents/no-such-agent', undefined, withKey(owner));
    assert.deepEqual([missing.status, missing.body], [404, { error: 'Agent not found: no-such-agent' }]);
    const executeMissing = await gateway().request('POST', '/api/v1/agents/no-such-agent', { input: {} }, withKey(owner));
    assert.deepEqual([executeMissing.status, executeMissing.body], [404, { error: 'Agent not found: no-such-agent' }]);
  });

  it('answers 401 without a credential, and serves the avatar presets from configuration', async () => {
    for (const url of ['/api/v1/agents', '/api/v1/agents/keyword-extract', '/api/v1/agents/avatars/presets', '/api/v1/agents/sync']) {
      assert.equal((await gateway().request('GET', url)).status, 401, url);
    }
    const presets = await gateway().request('GET', '/api/v1/agents/avatars/presets', undefined, withKey(owner));
    assert.equal(presets.status, 200, presets.text);
    assert.ok(presets.body.presets.length >= 1);
    for (const preset of presets.body.presets) assert.deepEqual(Object.keys(preset).sort(), ['id', 'name', 'url']);
  });

  it('keyword-extract runs its tool with no model call: 202, the headers, events, and the ranked keywords as the result', async () => {
    const text = 'Heat pumps move heat instead of making it. A heat pump uses electricity to move heat from cold air into a warm house. '
      + 'Modern heat pumps are efficient, and heat pumps pair well with solar panels.';
    const sessionId = `agent-session-${randomUUID()}`;
    const { answer, task } = await runAgent(gateway(), owner, 'keyword-extract', { text, max_keywords: 5 }, { session_id: sessionId, stream: false });
    assert.deepEqual(Object.keys(answer.body).sort(), ['agent_id', 'created_at', 'status', 'task_id']);
    assert.equal(answer.body.agent_id, 'keyword-extract');
    assert.equal(answer.body.status, 'STATUS_CODE_OK');
    assert.equal(answer.headers.get('x-workflow-id'), answer.body.task_id);
    assert.equal(answer.headers.get('x-session-id'), sessionId);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const result = JSON.parse(task.result);
    assert.equal(result.keywords[0].term, 'heat');
    assert.ok(result.keyphrases.some((phrase: any) => phrase.term.includes('heat pumps')), JSON.stringify(result.keyphrases));
    assert.equal(await modelCalls(gateway(), task.task_id), 0, 'no planning call, no model call');
    const types = await eventTypes(gateway(), task.task_id);
    assert.ok(types.some((event) => event.type === 'AGENT_STARTED' && event.agent_id === 'keyword-extract'));
    assert.ok(types.some((event) => event.type === 'AGENT_COMPLETED' && event.agent_id === 'keyword-extract'));
    assert.ok(!types.some((event) => event.type === 'LLM_PARTIAL' || event.type === 'LLM_PROMPT'));
  });

  it('context.agent with context.agent_input on POST /tasks is the same agent run; the query fills its main field', async () => {
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'Solar panels and wind turbines make solar power and wind power.', context: { agent: 'keyword-extract', agent_input: { max_keywords: 3 } } }, withKey(owner));
    assert.equal(submitted.status, 200, submitted.text);
    const task = await waitForTask(gateway(), submitted.body.task_id, 60_000, withKey(owner));
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.ok(JSON.parse(task.result).keywords.length > 0);
    assert.equal(await modelCalls(gateway(), task.task_id), 0);
    const bad = await gateway().request('POST', '/api/v1/tasks', { query: 'x', context: { agent: 'keyword-extract', agent_input: { colour: 'red' } } }, withKey(owner));
    assert.deepEqual([bad.status, bad.body], [400, { error: 'input validation failed: unknown field: colour' }]);
    const unknown = await gateway().request('POST', '/api/v1/tasks', { query: 'x', context: { agent: 'nobody' } }, withKey(owner));
    assert.deepEqual([unknown.status, unknown.body], [400, { error: 'Agent not found: nobody' }]);
  });

  it('the tasks an agent creates are their owner\'s: another tenant gets 404, another user of the tenant 403', async () => {
    const { task } = await runAgent(gateway(), owner, 'keyword-extract', { text: 'Owner only text about rivers and deltas.' });
    assert.equal((await gateway().request('GET', `/api/v1/tasks/${task.task_id}`, undefined, withKey(stranger))).status, 404);
    assert.equal((await gateway().request('GET', `/api/v1/tasks/${task.task_id}`, undefined, withKey(member))).status, 403);
    assert.equal((await gateway().request('GET', `/api/v1/tasks/${task.task_id}/events`, undefined, withKey(stranger))).status, 404);
  });

  it('news-aggregator reads the offline feed set, and a feed through the network guard', async () => {
    const offline = await runAgent(gateway(), owner, 'news-aggregator', { query: 'rates' });
    assert.equal(offline.task.status, 'TASK_STATUS_COMPLETED', offline.task.error);
    const result = JSON.parse(offline.task.result);
    assert.equal(result.feeds.length, 3);
    assert.ok(result.items.length >= 1);
    assert.ok(result.items.every((item: any) => `${item.title} ${item.summary}`.toLowerCase().includes('rates')));
    const guarded = await runAgent(gateway(), owner, 'news-aggregator', { feeds: [`${standInUrl}/feeds/markets.xml`], max_items: 2 });
    assert.equal(guarded.task.status, 'TASK_STATUS_COMPLETED', guarded.task.error);
    const items = JSON.parse(guarded.task.result).items;
    assert.deepEqual(items.map((item: any) => item.title), ['Central bank holds rates steady, signals patience on inflation', 'Chipmaker shares jump after record quarterly revenue']);
    assert.ok(standIn.requests.some((url) => url.pathname === '/feeds/markets.xml'));
    assert.equal(await modelCalls(gateway(), offline.task.task_id) + await modelCalls(gateway(), guarded.task.task_id), 0);
  });

  it('competitor-discover finds the other sites of the market with web_search, leaving out the company\'s own', async () => {
    const { task } = await runAgent(gateway(), owner, 'competitor-discover', { company: 'Inkwell Notes', domain: 'inkwell-notes.example', market: 'note-taking app' });
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const result = JSON.parse(task.result);
    const domains = result.competitors.map((candidate: any) => candidate.domain);
    assert.ok(domains.includes('quillpad.example') && domains.includes('margin-app.example'), domains.join(', '));
    assert.ok(!domains.includes('inkwell-notes.example'));
    assert.equal(await modelCalls(gateway(), task.task_id), 0);
  });

  it('serp-ads returns what the vendor (a SerpApi stand-in) answered', async () => {
    const { task } = await runAgent(gateway(), owner, 'serp-ads', { query: 'note taking app', country: 'us' });
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const result = JSON.parse(task.result);
    assert.equal(result.ads_count, 2);
    assert.deepEqual(result.ads[0], {
      position: 1, block: 'top', title: 'Quillpad - Notes That Open Instantly', url: 'https://quillpad.example/lp/notes', displayed_url: 'https://www.quillpad.example/',
      description: 'Sync notes across devices. Free for personal use.', sitelinks: [{ title: 'Pricing', url: 'https://quillpad.example/pricing' }, { title: 'Import', url: 'https://quillpad.example/import' }],
    });
    const sent = standIn.requests.find((url) => url.pathname === '/search.json')!;
    assert.deepEqual([sent.searchParams.get('engine'), sent.searchParams.get('q'), sent.searchParams.get('gl'), sent.searchParams.get('device')], ['google', 'note taking app', 'us', 'desktop']);
  });

  it('ads-transparency returns the advertiser\'s creatives from the vendor stand-in', async () => {
    const { task } = await runAgent(gateway(), owner, 'ads-transparency', { advertiser: 'quillpad.example', region: '2840' });
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const result = JSON.parse(task.result);
    assert.equal(result.ads_count, 2);
    assert.deepEqual([result.ads[0].creative_id, result.ads[0].first_shown, result.ads[0].last_shown, result.ads[1].format], ['CR09876543210987654321', '2024-11-01', '2024-11-22', 'text']);
  });

  it('ad-creative-analyze downloads the image into the workspace and one vision call describes it (the mock, deterministically)', async () => {
    const sessionId = `creative-${randomUUID()}`;
    const { task } = await runAgent(gateway(), owner, 'ad-creative-analyze', { image_url: `${standInUrl}/creative.png` }, { session_id: sessionId });
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const result = JSON.parse(task.result);
    assert.match(result.path, /^images\/.+\.png$/);
    assert.equal(result.media_type, 'image/png');
    assert.match(result.analysis, new RegExp(`^Image 1: image/png, 3x2 pixels, ${TINY_PNG.length} bytes, sha256 [0-9a-f]{12}\\.`));
    assert.equal(await modelCalls(gateway(), task.task_id), 1, 'the vision step is the one model call; no planning');
    const failed = await runAgent(gateway(), owner, 'ad-creative-analyze', { image_url: `${standInUrl}/missing.png` }, { session_id: sessionId });
    assert.equal(failed.task.status, 'TASK_STATUS_FAILED');
    assert.match(failed.task.error, /answered HTTP 404/);
    assert.equal(await modelCalls(gateway(), failed.task.task_id), 0, 'no image, no model call');
  });

  it('news-sentiment scores the offline feeds\' items, and serp-organic ranks the offline corpus, with no model call', async () => {
    const sentiment = await runAgent(gateway(), owner, 'news-sentiment', {});
    assert.equal(sentiment.task.status, 'TASK_STATUS_COMPLETED', sentiment.task.error);
    const scored = JSON.parse(sentiment.task.result);
    assert.equal(scored.items.length, 7);
    assert.ok(scored.items.every((item: any) => ['positive', 'neutral', 'negative'].includes(item.sentiment.label)));
    assert.equal(scored.counts.positive + scored.counts.neutral + scored.counts.negative, 7);
    const organic = await runAgent(gateway(), owner, 'serp-organic', { query: 'note-taking app', max_results: 3 });
    assert.equal(organic.task.status, 'TASK_STATUS_COMPLETED', organic.task.error);
    assert.equal(JSON.parse(organic.task.result).results.length, 3);
    assert.equal(await modelCalls(gateway(), sentiment.task.task_id) + await modelCalls(gateway(), organic.task.task_id), 0);
  });

  it('a vendor agent without its credential fails its task naming the variable, never with a made-up result', async () => {
    const { task } = await runAgent(gateway(), owner, 'market-quote', { symbol: 'IBM' });
    assert.equal(task.status, 'TASK_STATUS_FAILED');
    assert.match(task.error, /ALPHA_VANTAGE_API_KEY is not set/);
    const types = await eventTypes(gateway(), task.task_id);
    assert.ok(types.some((event) => event.type === 'ERROR_OCCURRED' && event.agent_id === 'market-quote'));
    assert.ok(!types.some((event) => event.type === 'AGENT_COMPLETED'));
  });

  it('browser-screenshot saves the page\'s PNG into the session workspace', { skip: chromiumMissing || undefined }, async () => {
    const sessionId = `shots-${randomUUID()}`;
    const { task } = await runAgent(gateway(), owner, 'browser-screenshot', { url: `${standInUrl}/landing` }, { session_id: sessionId });
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    const result = JSON.parse(task.result);
    assert.match(result.path, /^screenshots\/.+\.png$/);
    assert.ok(result.width > 0 && result.height > 0 && result.bytes > 100);
    const file = await gateway().sql.query('select size from session_files where path = $1', [result.path]);
    assert.equal(Number(file.rows[0].size), result.bytes);
    assert.equal(await modelCalls(gateway(), task.task_id), 0);
  });

  it('lp-visual-analyze and lp-batch-analyze screenshot pages and have each looked at; a batch reports the page that failed', { skip: chromiumMissing || undefined }, async () => {
    const sessionId = `lp-${randomUUID()}`;
    const single = await runAgent(gateway(), owner, 'lp-visual-analyze', { url: `${standInUrl}/landing` }, { session_id: sessionId });
    assert.equal(single.task.status, 'TASK_STATUS_COMPLETED', single.task.error);
    const seen = JSON.parse(single.task.result);
    assert.match(seen.analysis, /^Image 1: image\/png, \d+x\d+ pixels/);
    assert.equal(await modelCalls(gateway(), single.task.task_id), 1);
    const batch = await runAgent(gateway(), owner, 'lp-batch-analyze', { urls: [`${standInUrl}/landing`, 'http://127.0.0.1:9/refused'] }, { session_id: sessionId });
    assert.equal(batch.task.status, 'TASK_STATUS_COMPLETED', batch.task.error);
    const items = JSON.parse(batch.task.result).items;
    assert.equal(items.length, 2);
    assert.equal(items[0].ok, true);
    assert.match(items[0].output.analysis, /^Image 1: image\/png/);
    assert.equal(items[1].ok, false);
    assert.match(items[1].error, /refused|loopback|TOOLS_NETWORK_ALLOW/);
    assert.equal(await modelCalls(gateway(), batch.task.task_id), 1, 'one look per page that loaded');
  });

  it('works unchanged with the Shannon SDK\'s wire shapes: list_agents, get_agent, execute_agent, then get_status', async () => {
    // The SDK sends exactly these bodies and reads exactly these fields (reference, SDK wire contract).
    const headers = { 'x-api-key': owner.apiKey, 'content-type': 'application/json' };
    const listed = await gateway().request('GET', '/api/v1/agents', undefined, { 'x-api-key': owner.apiKey });
    const agent = listed.body.agents.find((candidate: any) => candidate.id === 'keyword-extract');
    for (const field of ['id', 'name', 'description', 'category', 'tool', 'input_schema', 'cost_per_call']) assert.ok(field in agent, field);
    const detail = (await gateway().request('GET', '/api/v1/agents/keyword-extract', undefined, { 'x-api-key': owner.apiKey })).body;
    assert.equal(detail.id, 'keyword-extract');
    const executed = await gateway().requestRaw('POST', '/api/v1/agents/keyword-extract', JSON.stringify({ input: { text: 'Tidal power and tidal turbines.' }, stream: false, session_id: 'sdk-session' }), headers);
    assert.ok([200, 202].includes(executed.status), executed.text);
    const workflowId = executed.headers.get('x-workflow-id');
    assert.ok(workflowId, 'X-Workflow-ID is required by execute_agent');
    const body = JSON.parse(executed.text);
    assert.deepEqual([body.task_id, body.agent_id, typeof body.status, typeof body.created_at, executed.headers.get('x-session-id')], [workflowId, 'keyword-extract', 'string', 'string', 'sdk-session']);
    const status = await waitForTask(gateway(), workflowId!, 60_000, withKey(owner));
    assert.equal(status.status.replace('TASK_STATUS_', ''), 'COMPLETED');
    assert.ok(JSON.parse(status.result).keywords.length > 0);
  });

  it('refuses each invalid input with 400 and the exact message of spec 4.9, creating no task', async () => {
    const taskCount = async () => Number((await gateway().sql.query('select count(*) from tasks where tenant_id = $1', [owner.tenantId])).rows[0].count);
    const before = await taskCount();
    for (const [agent, input, message] of INVALID_INPUTS) {
      const answer = await gateway().request('POST', `/api/v1/agents/${agent}`, { input }, withKey(owner));
      assert.deepEqual([answer.status, answer.body], [400, { error: `input validation failed: ${message}` }], `${agent} ${JSON.stringify(input)}`);
    }
    for (const body of [{}, { input: [] }, { input: 'text' }, { input: null }, { input: {}, extra: 1 }]) {
      const answer = await gateway().request('POST', '/api/v1/agents/keyword-extract', body, withKey(owner));
      assert.equal(answer.status, 400, JSON.stringify(body));
    }
    assert.equal(await taskCount(), before, 'no task was created');
    // JSON cannot tell 3.0 from 3: a whole-number float is an integer.
    const whole = await gateway().requestRaw('POST', '/api/v1/agents/keyword-extract', '{"input":{"text":"rivers and deltas","max_keywords":3.0}}', { ...withKey(owner), 'content-type': 'application/json' });
    assert.equal(whole.status, 202, whole.text);
  });

  it('the sync mirror holds every agent for the tenant', async () => {
    const synced = await gateway().request('GET', '/api/v1/agents/sync', undefined, withKey(owner));
    assert.equal(synced.status, 200, synced.text);
    const listed = await gateway().request('GET', '/api/v1/agents', undefined, withKey(owner));
    assert.deepEqual(synced.body.agents.map((row: any) => row.agent_key), listed.body.agents.map((agent: any) => agent.id));
    assert.ok(synced.body.agents.every((row: any) => row.tenant_id === owner.tenantId && row.is_deleted === false && row.version === 1));
    assert.deepEqual(synced.body.agents[0].config, listed.body.agents[0]);
  });

  it('an agent removed from the catalogue stays in the mirror as a tombstone; the others are unchanged', async (t) => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'agents-'));
    t.after(() => rm(directory, { recursive: true, force: true }));
    await cp('config/agents', directory, { recursive: true });
    await rm(path.join(directory, 'price-history.yaml'));
    const second = await startGateway(t, { databaseUrl: gateway().databaseUrl, env: { ...authEnv, AGENTS_DIR: directory } });
    const synced = await second.request('GET', '/api/v1/agents/sync', undefined, withKey(owner));
    assert.equal(synced.status, 200, synced.text);
    const removed = synced.body.agents.find((row: any) => row.agent_key === 'price-history');
    assert.equal(removed.is_deleted, true);
    assert.ok(Date.parse(removed.deleted_at) > 0);
    assert.equal(removed.version, 2);
    assert.ok(synced.body.agents.filter((row: any) => row.agent_key !== 'price-history').every((row: any) => !row.is_deleted && row.version === 1));
    assert.equal((await second.request('GET', '/api/v1/agents/price-history', undefined, withKey(owner))).status, 404);
    const strangers = await second.request('GET', '/api/v1/agents/sync', undefined, withKey(stranger));
    assert.ok(strangers.body.agents.every((row: any) => row.tenant_id === stranger.tenantId && !row.is_deleted), 'each tenant has its own mirror');
  });
});

describe('an agent task whose worker dies mid-call', { timeout: 120_000 }, () => {
  const gateway = useGateway({ env: { TOOLS_NETWORK_ALLOW: standInUrl.replace('http://', '') } });

  it('is run again from its step by the restarted process and completes once', async () => {
    const submitted = await gateway().request('POST', '/api/v1/agents/news-aggregator', { input: { feeds: [`${standInUrl}/feeds/slow.xml`] } });
    assert.equal(submitted.status, 202, submitted.text);
    const taskId = submitted.body.task_id;
    await waitFor('the feed to be asked for', async () => (standIn.requests.some((url) => url.pathname === '/feeds/slow.xml') ? true : undefined));
    await gateway().kill('SIGKILL');
    holdSlowFeed = false;
    await gateway().restart();
    const task = await waitForTask(gateway(), taskId, 60_000);
    assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
    assert.equal(JSON.parse(task.result).items.length, 3);
    const types = (await eventTypes(gateway(), taskId)).map((event) => event.type);
    assert.equal(types.filter((type) => type === 'AGENT_STARTED').length, 1);
    assert.equal(types.filter((type) => type === 'AGENT_COMPLETED').length, 1);
    assert.equal(types.filter((type) => type === 'WORKFLOW_COMPLETED').length, 1);
  });
});

test('an invalid agent file stops the server, naming the file and what is wrong', async (t) => {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'agents-'));
  t.after(() => rm(directory, { recursive: true, force: true }));
  await cp('config/agents/keyword-extract.yaml', path.join(directory, 'keyword-extract.yaml'));
  await writeFile(path.join(directory, 'broken.yaml'), 'id: broken\nname: Broken\ndescription: runs a tool that does not exist\ncategory: ads_research\ntool: no_such_tool\n'
    + 'input_schema: { properties: {} }\noutput_schema: {}\ncost_per_call: 0\ntimeout_seconds: 10\n');
  const databaseUrl = await createTestDatabase(t, { migrated: true });
  const refused = await runRefused(databaseUrl, { AGENTS_DIR: directory });
  assert.notEqual(refused.code, 0);
  assert.match(refused.output, new RegExp(`invalid agent file ${path.join(directory, 'broken.yaml')}`));
  assert.match(refused.output, /tool no_such_tool is not a tool of this server/);
});
