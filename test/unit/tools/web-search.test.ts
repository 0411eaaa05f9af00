import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { BUILT_IN_TOOLS, createBuiltInToolRegistry } from '../../../src/tools/built-ins.ts';
import { loadFixtureCorpus } from '../../../src/tools/web/fixture-corpus.ts';
import { createBraveProvider } from '../../../src/tools/web-search/brave.ts';
import { describeWebSearch } from '../../../src/tools/web-search/choose-provider.ts';
import { createExaProvider } from '../../../src/tools/web-search/exa.ts';
import { createFixtureProvider } from '../../../src/tools/web-search/fixture.ts';
import { SearchFailure, type SearchProvider, type SearchRequest } from '../../../src/tools/web-search/provider.ts';
import { createSearxngProvider } from '../../../src/tools/web-search/searxng.ts';
import { createTavilyProvider } from '../../../src/tools/web-search/tavily.ts';
import { webSearchTool } from '../../../src/tools/web-search/web-search-tool.ts';
import {
  STAND_IN_HITS, STAND_IN_KEY, STAND_IN_RETRY_AFTER_SECONDS, startSearchStandIn, type RecordedSearchRequest, type SearchStandIn, type SearchVendor,
} from '../../fixtures/search-stand-ins.ts';
import { offlineToolContext } from '../../helpers/tool-context.ts';

const search = (provider: SearchProvider, request: Partial<SearchRequest> = {}) =>
  provider.search({ query: 'longest river', maxResults: 5, signal: new AbortController().signal, ...request });

async function failureOf(work: Promise<unknown>): Promise<SearchFailure> {
  try {
    await work;
  } catch (error) {
    assert.ok(error instanceof SearchFailure, `expected a SearchFailure, got ${error}`);
    return error;
  }
  throw new Error('expected the search to fail');
}

interface VendorCase {
  vendor: SearchVendor;
  create(baseUrl: string, apiKey: string): SearchProvider;
  /** What the vendor's documentation asks of a search for "longest river", 3 results, site rivers.example.org. */
  checkRequest(request: RecordedSearchRequest): void;
  credentialName: string;
  /** Whether the vendor gives publication dates in its plain web results. */
  hasDates: boolean;
}

const limits = { timeoutMs: 5_000, maxAnswerBytes: 1_048_576 };

const VENDORS: VendorCase[] = [
  {
    vendor: 'tavily',
    create: (baseUrl, apiKey) => createTavilyProvider({ baseUrl, apiKey, ...limits }),
    checkRequest: (request) => {
      assert.equal(request.headers.authorization, `Bearer ${STAND_IN_KEY}`);
      assert.deepEqual(
        [request.body.query, request.body.max_results, request.body.include_domains, request.body.search_depth],
        ['longest river', 3, ['rivers.example.org'], 'basic'],
      );
    },
    credentialName: 'TAVILY_API_KEY',
    hasDates: false,
  },
  {
    vendor: 'brave',
    create: (baseUrl, apiKey) => createBraveProvider({ baseUrl, apiKey, ...limits }),
    checkRequest: (request) => {
      assert.equal(request.headers['x-subscription-token'], STAND_IN_KEY);
      assert.equal(request.headers.accept, 'application/json');
      assert.deepEqual([request.query.get('q'), request.query.get('count')], ['site:rivers.example.org longest river', '3']);
    },
    credentialName: 'BRAVE_API_KEY',
    hasDates: true,
  },
  {
    vendor: 'exa',
    create: (baseUrl, apiKey) => createExaProvider({ baseUrl, apiKey, ...limits }),
    checkRequest: (request) => {
      assert.equal(request.headers['x-api-key'], STAND_IN_KEY);
      assert.deepEqual(
        [request.body.query, request.body.numResults, request.body.includeDomains, request.body.contents],
        ['longest river', 3, ['rivers.example.org'], { highlights: true }],
      );
    },
    credentialName: 'EXA_API_KEY',
    hasDates: true,
  },
];

for (const { vendor, create, checkRequest, credentialName, hasDates } of VENDORS) {
  describe(`the ${vendor} client against its stand-in`, () => {
    let standIn: SearchStandIn;
    before(async () => { standIn = await startSearchStandIn(vendor); });
    after(() => standIn.close());

    test('a search sends the documented request and answers title, url, snippet, date and source', async () => {
      standIn.behave('answer');
      const results = await search(create(standIn.url, STAND_IN_KEY), { maxResults: 3, siteFilter: 'rivers.example.org' });
      checkRequest(standIn.requests.at(-1)!);
      assert.deepEqual(results.map((result) => result.url), ['https://rivers.example.org/nile', 'https://www.rivers.example.org/amazon']);
      assert.equal(results[0].title, 'The Nile');
      assert.equal(results[0].snippet, STAND_IN_HITS[0].snippet);
      assert.equal(results[0].source, vendor);
      assert.equal(results[0].date, hasDates ? '2024-03-02' : undefined);
    });

    test('a refused credential is an auth failure naming the setting to check', async () => {
      standIn.behave('answer');
      const failure = await failureOf(search(create(standIn.url, 'wrong-key')));
      assert.equal(failure.kind, 'auth');
      assert.match(failure.message, new RegExp(`^${vendor} refused the request \\(HTTP 4\\d\\d\\).*check ${credentialName}$`));
    });

    test('a rate limit says when to retry', async () => {
      standIn.behave('rate-limit');
      const failure = await failureOf(search(create(standIn.url, STAND_IN_KEY)));
      assert.equal(failure.kind, 'rate-limited');
      assert.equal(failure.retryAfterSeconds, STAND_IN_RETRY_AFTER_SECONDS);
      assert.match(failure.message, new RegExp(`^${vendor} rate limit reached \\(HTTP 429\\).*retry after ${STAND_IN_RETRY_AFTER_SECONDS} s$`));
    });

    test('a malformed answer is a malformed failure, not an empty result', async () => {
      standIn.behave('malformed');
      const failure = await failureOf(search(create(standIn.url, STAND_IN_KEY)));
      assert.equal(failure.kind, 'malformed');
      assert.match(failure.message, new RegExp(`^${vendor} answered`));
    });
  });
}

describe('the searxng client against its stand-in', () => {
  let standIn: SearchStandIn;
  const searxng = () => createSearxngProvider({ baseUrl: `${standIn.url}/`, ...limits });
  before(async () => { standIn = await startSearchStandIn('searxng'); });
  after(() => standIn.close());

  test('a search asks for json with `site:` in the query and cuts the page to the count asked for', async () => {
    standIn.behave('answer');
    const results = await search(searxng(), { maxResults: 1, siteFilter: 'rivers.example.org' });
    const request = standIn.requests.at(-1)!;
    assert.deepEqual([request.path, request.query.get('q'), request.query.get('format')], ['/search', 'site:rivers.example.org longest river', 'json']);
    assert.equal(request.headers.authorization, undefined);
    assert.deepEqual(results, [{
      title: 'The Nile', url: 'https://rivers.example.org/nile', snippet: STAND_IN_HITS[0].snippet, date: '2024-03-02', source: 'searxng (duckduckgo)',
    }]);
  });

  test('an instance without the json format is an auth failure that says how to enable it', async () => {
    standIn.behave('json-format-disabled');
    const failure = await failureOf(search(searxng()));
    assert.equal(failure.kind, 'auth');
    assert.match(failure.message, /searxng refused the request \(HTTP 403\).*search\.formats in its settings\.yml/);
  });

  test('a rate limit says when to retry', async () => {
    standIn.behave('rate-limit');
    const failure = await failureOf(search(searxng()));
    assert.deepEqual([failure.kind, failure.retryAfterSeconds], ['rate-limited', STAND_IN_RETRY_AFTER_SECONDS]);
  });

  test('a result without a url is a malformed answer naming the field', async () => {
    standIn.behave('malformed');
    const failure = await failureOf(search(searxng()));
    assert.equal(failure.kind, 'malformed');
    assert.match(failure.message, /\/results\/0/);
  });
});

describe('vendor requests that go wrong on the way', () => {
  test('the count asked of a vendor is capped at 20', async () => {
    const standIn = await startSearchStandIn('brave');
    try {
      await search(createBraveProvider({ baseUrl: standIn.url, apiKey: STAND_IN_KEY, ...limits }), { maxResults: 500 });
      assert.equal(standIn.requests.at(-1)!.query.get('count'), '20');
    } finally {
      await standIn.close();
    }
  });

  test('a vendor that does not answer in time fails saying so', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const failure = await failureOf(search(createExaProvider({ baseUrl, apiKey: STAND_IN_KEY, ...limits, timeoutMs: 200 })));
      assert.deepEqual([failure.kind, failure.message], ['upstream', 'exa did not answer within 0.2 s']);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  test('an answer longer than the size limit is refused while it is read, not after', async () => {
    let sentBytes = 0;
    const endless = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, ' ');
      const writeMore = () => {
        while (!response.destroyed && sentBytes < 1024 * 1024 * 1024) {
          sentBytes += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', writeMore);
        }
      };
      response.write('{"results": [');
      writeMore();
    });
    await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(endless.address() as AddressInfo).port}`;
      const failure = await failureOf(search(createExaProvider({ baseUrl, apiKey: STAND_IN_KEY, ...limits })));
      assert.deepEqual([failure.kind, failure.message], ['malformed', 'exa answered more than 1048576 bytes (TOOLS_FETCH_MAX_BYTES)']);
      // What the socket buffers hold on top of the limit (tcp_rmem max 32 MiB + tcp_wmem 4 MiB here), not the gigabyte offered.
      assert.ok(sentBytes < 64 * 1024 * 1024, `the vendor stand-in sent ${sentBytes} bytes`);
    } finally {
      endless.closeAllConnections();
      endless.close();
    }
  });

  test('a vendor that cannot be reached fails saying so', async () => {
    const failure = await failureOf(search(createTavilyProvider({ baseUrl: 'http://127.0.0.1:9', apiKey: STAND_IN_KEY, ...limits })));
    assert.equal(failure.kind, 'upstream');
    assert.match(failure.message, /^tavily could not be reached: /);
  });
});

describe('the fixture provider', () => {
  const corpus = loadFixtureCorpus(path.resolve('config/search-corpus'));
  const fixture = createFixtureProvider(corpus);

  test('the shipped corpus has a few dozen pages, each with a title, url and date on the corpus host (a market\'s pages on their own .example sites)', () => {
    assert.ok(corpus.pages.length >= 30, `${corpus.pages.length} pages`);
    for (const page of corpus.pages) {
      const host = new URL(page.url).hostname;
      assert.ok(host === 'corpus.agentgate.example' || (page.source !== undefined && host.endsWith('.example') && !host.endsWith('agentgate.example')), page.url);
      assert.match(page.date ?? '', /^\d{4}-\d{2}-\d{2}$/, page.url);
    }
    assert.equal(new Set(corpus.pages.map((page) => page.url)).size, corpus.pages.length, 'urls are unique');
  });

  test('pages are ranked by the query terms in their title and text; the snippet is the best passage', async () => {
    const results = await search(fixture, { query: 'longest river', maxResults: 3 });
    assert.equal(results.length, 3);
    assert.equal(results[0].url, 'https://corpus.agentgate.example/geography/longest-rivers');
    assert.ok(results.every((result) => result.url.includes('/geography/')), JSON.stringify(results));
    assert.match(results[0].snippet, /longest river/);
    assert.deepEqual([results[0].date, results[0].source], ['2024-03-02', 'agentgate corpus']);
    const [rust] = await search(fixture, { query: 'borrow checker memory safety' });
    assert.equal(rust.url, 'https://corpus.agentgate.example/programming/rust');
    assert.match(rust.snippet, /borrow checker/);
  });

  test('a query matching nothing finds nothing', async () => {
    assert.deepEqual(await search(fixture, { query: 'zxqv plorth' }), []);
  });

  describe('on a corpus of two sites', () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'corpus-'));
    const page = (file: string, url: string, title: string) =>
      writeFileSync(path.join(directory, file), `---\ntitle: ${title}\nurl: ${url}\n---\nAll about ${title.toLowerCase()}.\n`);
    page('a.md', 'https://alpha.example/rivers', 'Rivers');
    page('b.md', 'https://docs.beta.example/rivers', 'Rivers and lakes');
    page('c.md', 'https://beta.example/lakes', 'Lakes');
    writeFileSync(path.join(directory, 'README.md'), '# How to add a page\n\nNo front matter here: it is not a page.\n');
    after(() => rmSync(directory, { recursive: true, force: true }));
    const twoSites = () => createFixtureProvider(loadFixtureCorpus(directory));

    test('site_filter keeps the domain and its subdomains only; the README is not a page', async () => {
      const urls = async (siteFilter?: string) => (await search(twoSites(), { query: 'rivers lakes', siteFilter })).map((result) => result.url);
      assert.deepEqual(await urls(), ['https://docs.beta.example/rivers', 'https://alpha.example/rivers', 'https://beta.example/lakes']);
      assert.deepEqual(await urls('beta.example'), ['https://docs.beta.example/rivers', 'https://beta.example/lakes']);
      assert.deepEqual(await urls('gamma.example'), []);
    });

    test('max results caps the answer', async () => {
      assert.equal((await search(twoSites(), { query: 'rivers lakes', maxResults: 1 })).length, 1);
    });
  });
});

describe('the web_search tool', () => {
  test('is a built-in search tool, not dangerous, charged per call at its provider price', () => {
    assert.ok(BUILT_IN_TOOLS.includes(webSearchTool));
    assert.deepEqual([webSearchTool.category, webSearchTool.dangerous], ['search', false]);
    const priceWith = (env: Record<string, string>) => createBuiltInToolRegistry(undefined, loadConfig(env)).get('web_search')!.costPerUseUsd;
    assert.equal(priceWith({}), 0);
    assert.equal(priceWith({ WEB_SEARCH_PROVIDER: 'brave', BRAVE_API_KEY: 'k' }), 0.005);
    assert.equal(priceWith({ WEB_SEARCH_PROVIDER: 'tavily', TAVILY_API_KEY: 'k' }), 0.008);
    assert.equal(priceWith({ WEB_SEARCH_PROVIDER: 'exa', EXA_API_KEY: 'k' }), 0.007);
  });

  test('searches the offline corpus by default, with max_results 5', async () => {
    const registry = createBuiltInToolRegistry(undefined, loadConfig({}));
    const outcome = await registry.invoke('web_search', { query: 'space telescope' }, offlineToolContext());
    const output = outcome.output as { provider: string; query: string; results: Array<{ url: string }> };
    assert.deepEqual([output.provider, output.query], ['fixture', 'space telescope']);
    assert.ok(output.results.length > 0 && output.results.length <= 5);
    assert.ok(output.results.every((result) => result.url.startsWith('https://corpus.agentgate.example/')));
  });

  test('refuses more than 20 results and a site_filter that is not a domain, naming the field', async () => {
    const registry = createBuiltInToolRegistry(undefined, loadConfig({}));
    const context = offlineToolContext();
    assert.match((await registry.invoke('web_search', { query: 'x', max_results: 21 }, context)).error!, /max_results must be <= 20/);
    assert.match((await registry.invoke('web_search', { query: 'x', site_filter: 'http://a.b/c' }, context)).error!, /site_filter must match pattern/);
  });

  test('a vendor chosen without its key: calls fail naming the setting, and start-up says so', async () => {
    const config = loadConfig({ WEB_SEARCH_PROVIDER: 'tavily' });
    const outcome = await createBuiltInToolRegistry(undefined, config).invoke('web_search', { query: 'x' }, offlineToolContext({ settings: config }));
    assert.equal(outcome.error, 'WEB_SEARCH_PROVIDER=tavily needs TAVILY_API_KEY');
    assert.deepEqual(describeWebSearch(config.webSearch), {
      ready: false, message: 'web search: WEB_SEARCH_PROVIDER=tavily needs TAVILY_API_KEY; web_search calls will fail until it is set',
    });
    assert.equal(describeWebSearch(loadConfig({ WEB_SEARCH_PROVIDER: 'searxng' }).webSearch).ready, false);
    assert.match(describeWebSearch(loadConfig({}).webSearch).message, /^web search: offline fixture corpus \(\d+ pages in .*search-corpus\)$/);
  });

  test('the configured vendor is called at its configured base url', async () => {
    const standIn = await startSearchStandIn('brave');
    try {
      const config = loadConfig({ WEB_SEARCH_PROVIDER: 'brave', BRAVE_API_KEY: STAND_IN_KEY, BRAVE_BASE_URL: standIn.url });
      const outcome = await createBuiltInToolRegistry(undefined, config)
        .invoke('web_search', { query: 'longest river', max_results: 2, site_filter: 'example.org' }, offlineToolContext({ settings: config }));
      assert.deepEqual((outcome.output as any).results.map((result: { url: string }) => result.url),
        ['https://rivers.example.org/nile', 'https://www.rivers.example.org/amazon']);
      assert.equal(standIn.requests.at(-1)!.query.get('q'), 'site:example.org longest river');
    } finally {
      await standIn.close();
    }
  });

  test('an unknown provider is a configuration error naming the variable', () => {
    assert.throws(() => loadConfig({ WEB_SEARCH_PROVIDER: 'bing' }), /WEB_SEARCH_PROVIDER/);
    assert.throws(() => loadConfig({ TAVILY_BASE_URL: 'api.tavily.com' }), /TAVILY_BASE_URL/);
  });
});
