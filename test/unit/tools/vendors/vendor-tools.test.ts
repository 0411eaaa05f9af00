import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../../../src/config.ts';
import { toolSettingsOf, type ToolContext } from '../../../../src/tools/registry.ts';
import { adsSerpExtractTool } from '../../../../src/tools/vendors/ads-tools.ts';
import { marketQuoteTool, priceHistoryTool } from '../../../../src/tools/vendors/market-tools.ts';

/** Alpha Vantage's and SerpApi's wire formats (test/fixtures), answered by a stand-in on 127.0.0.1. */
describe('the vendor tools against stand-ins', () => {
  const seen: URL[] = [];
  let answer: { status: number; body: string } | undefined;
  const server = createServer(async (request, response) => {
    const url = new URL(request.url!, 'http://stand-in');
    seen.push(url);
    if (answer) return response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    const fixture = url.searchParams.get('function') === 'GLOBAL_QUOTE' ? 'global-quote.json' : 'time-series-daily.json';
    response.writeHead(200, { 'content-type': 'application/json' }).end(await readFile(`test/fixtures/alpha-vantage/${fixture}`));
  });
  let context: ToolContext;
  before(async () => {
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const settings = toolSettingsOf(loadConfig({ ALPHA_VANTAGE_API_KEY: 'av-key', ALPHA_VANTAGE_BASE_URL: base, SERPAPI_BASE_URL: base }));
    context = { settings, signal: new AbortController().signal } as ToolContext;
  });
  after(() => server.close());

  it('market_quote reads GLOBAL_QUOTE into numbers', async () => {
    answer = undefined;
    assert.deepEqual(await marketQuoteTool.execute({ symbol: 'IBM' }, context), {
      symbol: 'IBM', price: 224.15, open: 222.31, high: 224.98, low: 221.01, volume: 3589641, trading_day: '2025-11-03',
      previous_close: 221.87, change: 2.28, change_percent: 1.0276,
    });
    const sent = seen.at(-1)!;
    assert.deepEqual([sent.pathname, sent.searchParams.get('function'), sent.searchParams.get('symbol'), sent.searchParams.get('apikey')], ['/query', 'GLOBAL_QUOTE', 'IBM', 'av-key']);
  });

  it('price_history returns the days newest first and the period\'s return', async () => {
    answer = undefined;
    const history = await priceHistoryTool.execute({ symbol: 'IBM', days: 3 }, context) as { days: Array<{ date: string; close: number }>; return_percent: number };
    assert.deepEqual(history.days.map((day) => [day.date, day.close]), [['2025-11-03', 224.15], ['2025-10-31', 221.87], ['2025-10-30', 220]]);
    assert.equal(history.return_percent, 1.89);
  });

  it('Alpha Vantage\'s problems, sent with HTTP 200, are failures with its words', async () => {
    answer = { status: 200, body: JSON.stringify({ Note: 'Thank you for using Alpha Vantage! Our standard API rate limit is 25 requests per day.' }) };
    await assert.rejects(marketQuoteTool.execute({ symbol: 'IBM' }, context), /^Error: Alpha Vantage: Thank you for using Alpha Vantage! Our standard API rate limit/);
    answer = { status: 200, body: JSON.stringify({ 'Error Message': 'Invalid API call. Please retry or visit the documentation.' }) };
    await assert.rejects(priceHistoryTool.execute({ symbol: 'NOPE' }, context), /Alpha Vantage: Invalid API call/);
  });

  it('SerpApi\'s refusal of the key names the variable; a missing key is named before any request', async () => {
    answer = { status: 401, body: JSON.stringify({ error: 'Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key' }) };
    const withKey = { ...context, settings: { ...context.settings, vendors: { ...context.settings.vendors, serpApi: { ...context.settings.vendors.serpApi, apiKey: 'wrong' } } } };
    await assert.rejects(adsSerpExtractTool.execute({ query: 'x' }, withKey), /SerpApi refused the key \(HTTP 401\): Invalid API key.*; check SERPAPI_API_KEY/);
    const before = seen.length;
    await assert.rejects(adsSerpExtractTool.execute({ query: 'x' }, context), /^Error: SERPAPI_API_KEY is not set: ads_serp_extract calls SerpApi/);
    assert.equal(seen.length, before);
  });
});
