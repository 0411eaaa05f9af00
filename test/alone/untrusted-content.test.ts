import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { before, after, describe, it, type TestContext } from 'node:test';
import { useGateway, waitForTask } from '../helpers/gateway.ts';
import { percentile, watchHealth, watchRss } from '../helpers/process-watch.ts';

type ToolCallRow = { tool: string; input: Record<string, any>; output: any; error: string | null };
interface Watched<T> { result: T; healthP99Ms: number; probes: number; peakRssMb: number }
/** What one or more watched runs showed: the median of their /health p99s, and the largest RSS peak. */
interface Responsiveness { healthP99Ms: number[]; probes: number; peakRssMb: number }

/**
 * The bound on /health at p99, above what the same gateway shows for the same fetches without the parse
 * (ordinary pages, or the same bytes served as an image, which is refused unparsed): on a machine shared with
 * other work that baseline alone passes 100 ms, and so does reading 50 MB bodies (docs/decisions.md, issue 25 part A).
 */
const HEALTH_P99_MS = 100;
/** The gateway's resident memory at the peak (docs/decisions.md, issue 25 part A, says what it is made of). */
const RSS_BOUND_MB = 1_200;
/**
 * Runs of a measurement and of its baseline, taken in turn after a warm-up: their medians are compared, so that a
 * burst of other work on the machine during one run decides nothing. (This file is in test/alone: no other test
 * file runs beside it.)
 */
const ROUNDS = 3;
const DEEP_REFUSAL = /^the page is nested more than 512 elements deep; pages nested deeper than 512 are not read$/;

const median = (values: number[]) => percentile(values, 0.5);
const acrossRuns = (runs: Array<Watched<unknown>>): Responsiveness => ({
  healthP99Ms: runs.map((run) => run.healthP99Ms),
  probes: runs.reduce((total, run) => total + run.probes, 0),
  peakRssMb: Math.max(...runs.map((run) => run.peakRssMb)),
});

/** Starts test/fixtures/hostile-site.ts in a process of its own, so that its 50 MB pages do not load this one. */
async function startHostileSite(): Promise<{ url: string; stop(): void }> {
  const site = spawn(process.execPath, [path.join(import.meta.dirname, '../fixtures/hostile-site.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [port] = await once(createInterface({ input: site.stdout! }), 'line') as [string];
  return { url: `http://127.0.0.1:${Number(port)}`, stop: () => site.kill() };
}

describe('untrusted content is read off the event loop, within limits', () => {
  const env: Record<string, string> = { DEFAULT_TASK_MODE: 'auto', TOOLS_FETCH_TIMEOUT_MS: '60000' };
  let site: Awaited<ReturnType<typeof startHostileSite>>;
  /** /health p99s while ten agents read ordinary pages. */
  let ordinaryPagesP99Ms: number[] = [];
  const HOSTILE_PATHS = ['/nested-100000', '/huge'];
  /** The hostile pages' bytes served as an image: read from the network, then refused unparsed. */
  const asImages = () => HOSTILE_PATHS.map((pathname) => `${site.url}${pathname}?as=image`);

  // Before the gateway starts: its environment names the site.
  before(async () => {
    site = await startHostileSite();
    env.TOOLS_NETWORK_ALLOW = new URL(site.url).host;
  });
  after(() => site.stop());

  const gateway = useGateway({ env });

  // The first tasks of a process compile its code paths, and its first large bodies grow its memory (seconds on a
  // busy machine, hundreds of ms at /health p99): not what is measured here.
  before(async () => {
    await fetchByAgents(10, [`${site.url}/article`]);
    await fetchByAgents(10, asImages());
    const runs = [];
    for (let round = 0; round < ROUNDS; round++) runs.push(await whileWatched(() => fetchByAgents(10, [`${site.url}/article`])));
    ordinaryPagesP99Ms = acrossRuns(runs).healthP99Ms;
  });

  /** One agent per task, each fetching `urls` with one web_fetch call; resolves with every task's tool call. */
  async function fetchByAgents(agents: number, urls: string[]): Promise<ToolCallRow[]> {
    const submitted = await Promise.all(Array.from({ length: agents }, () => gateway().request('POST', '/api/v1/tasks', {
      query: 'Read these pages', context: { role: 'generalist', mock_tool_calls: [{ tool: 'web_fetch', args: { urls } }] },
    })));
    const calls: ToolCallRow[] = [];
    for (const answer of submitted) {
      assert.equal(answer.status, 200, answer.text);
      const task = await waitForTask(gateway(), answer.body.task_id, 300_000);
      assert.equal(task.status, 'TASK_STATUS_COMPLETED', task.error);
      const { rows } = await gateway().sql.query<ToolCallRow>('select tool, input, output, error from tool_calls where task_id = $1', [task.task_id]);
      assert.deepEqual(rows.map((row) => [row.tool, row.error]), [['web_fetch', null]]);
      calls.push(rows[0]);
    }
    return calls;
  }

  async function whileWatched<T>(work: () => Promise<T>): Promise<Watched<T>> {
    const health = watchHealth(gateway().url);
    const rss = watchRss(gateway().pid()!);
    try {
      const result = await work();
      const latencies = await health.stop();
      return { result, healthP99Ms: percentile(latencies, 0.99), probes: latencies.length, peakRssMb: await rss.stop() };
    } finally {
      await Promise.allSettled([health.stop(), rss.stop()]);
    }
  }

  /** /health at p99 (the median of the runs') within HEALTH_P99_MS of the baseline's median, and RSS within its bound. */
  function assertResponsive(t: TestContext, { healthP99Ms, probes, peakRssMb }: Responsiveness, baselineP99Ms: number[], baseline: string): void {
    const [p99Ms, baselineMs] = [median(healthP99Ms), median(baselineP99Ms)];
    const runs = (values: number[]) => values.map((value) => value.toFixed(1)).join(', ');
    const without = `${baselineMs.toFixed(1)} ms without the parse (${baseline}: ${runs(baselineP99Ms)})`;
    t.diagnostic(`/health p99 ${p99Ms.toFixed(1)} ms (${runs(healthP99Ms)}) over ${probes} probes, ${without}; gateway peak RSS ${peakRssMb.toFixed(0)} MB`);
    assert.ok(peakRssMb < RSS_BOUND_MB, `peak RSS ${peakRssMb.toFixed(0)} MB`);
    assert.ok(p99Ms < HEALTH_P99_MS + baselineMs, `/health p99 ${p99Ms.toFixed(1)} ms, ${without}`);
  }

  it('the issue\'s page (1,200 nested <div>s, 13 KB), through the tools API and by an agent, stalls nothing and is refused clearly', async (t) => {
    const url = `${site.url}/nested-1200`;
    const watched = await whileWatched(() => Promise.all([
      gateway().request('POST', '/api/v1/tools/web_fetch/execute', { arguments: { url } }),
      fetchByAgents(1, [url]),
    ]));
    const [direct, [byAgent]] = watched.result;
    assert.equal(direct.status, 200, direct.text);
    assert.equal(direct.body.success, false);
    assert.match(direct.body.error, DEEP_REFUSAL);
    assert.match(byAgent.output.pages[0].error, DEEP_REFUSAL);
    assertResponsive(t, acrossRuns([watched]), ordinaryPagesP99Ms, 'ordinary pages');
  });

  it('ten agents reading a page Readability needs seconds for: /health stays responsive while the worker reads them', async (t) => {
    const watched = await whileWatched(() => fetchByAgents(10, [`${site.url}/slow`]));
    for (const call of watched.result) {
      const [page] = call.output.pages;
      assert.equal(page.title, 'Long page');
      // Read as an article (the body alone), unless the machine is so busy that the article reader hit the
      // time limit: then as plain text, headings and all.
      if (page.notice === undefined) assert.match(page.content, /^Rivers carry sediment/);
      else {
        assert.equal(page.notice, 'read as plain text: the article reader took longer than 10000 ms (TOOLS_PARSE_TIMEOUT_MS)');
        assert.match(page.content, /^Section 0\n[^]*Rivers carry sediment/);
      }
    }
    assertResponsive(t, acrossRuns([watched]), ordinaryPagesP99Ms, 'ordinary pages');
  });

  it(`ten agents reading a page nested 100,000 deep and a 50 MB page: /health responsive, clear observations, RSS under ${RSS_BOUND_MB} MB`, async (t) => {
    const urls = HOSTILE_PATHS.map((pathname) => `${site.url}${pathname}`);
    const [unparsed, parsed] = [[], []] as Array<Array<Watched<ToolCallRow[]>>>;
    for (let round = 0; round < ROUNDS; round++) {
      unparsed.push(await whileWatched(() => fetchByAgents(10, asImages())));
      parsed.push(await whileWatched(() => fetchByAgents(10, urls)));
    }
    for (const call of parsed.flatMap((run) => run.result)) {
      const [deep, huge] = call.output.pages;
      assert.equal(deep.url, urls[0]);
      assert.match(deep.error, DEEP_REFUSAL);
      assert.equal(huge.title, 'Huge');
      assert.equal(huge.truncated, true, 'cut at TOOLS_FETCH_MAX_BYTES');
      assert.match(huge.notice, /^read as plain text: it has \d+ elements, more than the 10000 the article reader takes$/);
      assert.match(huge.content, /^Paragraph 0 of a very long page, a link and bold\./);
    }
    assertResponsive(t, acrossRuns(parsed), acrossRuns(unparsed).healthP99Ms, 'the same bytes as an image');
  });

  it('a PDF is still read, in the worker', async () => {
    const answer = await gateway().request('POST', '/api/v1/tools/web_fetch/execute', { arguments: { url: `${site.url}/report.pdf` } });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.success, true, answer.body.error);
    assert.equal(answer.body.output.title, 'Delta report');
    assert.equal(answer.body.output.content, 'Deltas grow where rivers slow down');
  });
});
