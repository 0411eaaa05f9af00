/**
 * The web console (issue 32): (a) JavaScript and CSS the first screen transfers, raw and gzip; (b) time from
 * navigation to the first task list on a cold load (a fresh browser context, nothing cached) against a local
 * gateway; (c) the browser's JS heap and frame rate while one task page streams about 5,000 events.
 * Prints a Markdown section and appends it to bench/RESULTS.md.
 * Usage: npm run bench:console [-- --no-record] [-- --no-stream]   (needs Chromium: CHROMIUM_PATH or `chromium` on PATH;
 * --no-stream leaves out (c), for a quick before/after of the first two)
 */
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium, type Page } from 'playwright-core';
import { findChromium } from '../../src/tools/browser/find-chromium.ts';
import { describeCommit } from '../submit/describe-commit.ts';
import { startGateway } from '../submit/gateway-process.ts';
import { appendSection, fixed, machineLine } from '../submit/report.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const RESULTS_PATH = path.join(ROOT, 'bench/RESULTS.md');
const COLD_LOADS = 15;
/**
 * With EVENT_PARTIAL_INTERVAL_MS=1 and a word every ~10 ms, each word is about one LLM_PARTIAL event (fewer when a
 * loaded machine fires the timer late and words coalesce): this many words make 5,000 events or a few more. The
 * large tier's mock model, because the small one stops at 2,048 output tokens.
 */
const STREAM_WORDS = 6_000;
/** Frames counted on an idle page first: what the machine itself allows, to read the streaming figure against. */
const IDLE_MS = 5_000;
const STREAM_MS = 60_000;
const AIMS = { firstScreenGzipKb: 150, firstListMs: 1_000, minFps: 30 };

const record = !process.argv.includes('--no-record');
const withStream = !process.argv.includes('--no-stream');
const executablePath = await findChromium(process.env.CHROMIUM_PATH);
// One LLM_PARTIAL per word (instead of one per 50 ms), so that one task streams thousands of events.
const gateway = await startGateway({ root: ROOT, profileDir: undefined, env: { GATEWAY_SKIP_AUTH: '1', EVENT_PARTIAL_INTERVAL_MS: '1' } });
const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
try {
  for (let index = 0; index < 20; index += 1) await post(`/api/v1/tasks`, { query: `seed task ${index}` });
  const transfer = await measureFirstScreen();
  const loads = await measureColdLoads();
  const stream = withStream ? await measureStreaming() : undefined;
  const section = formatSection(transfer, loads, stream);
  process.stdout.write(section);
  if (record) await appendSection(RESULTS_PATH, section);
} finally {
  await browser.close();
  await gateway.stop();
}

async function post(route: string, body: unknown): Promise<any> {
  const response = await fetch(`${gateway.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${route}: ${response.status} ${await response.text()}`);
  return response.json();
}

interface Transfer { files: number; rawBytes: number; gzipBytes: number; sentBytes: number }

/** Every script and stylesheet the first screen loads, as sent and as gzip would send it. */
async function measureFirstScreen(): Promise<Transfer> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const bodies: Array<Promise<{ raw: Buffer; sent: number }>> = [];
  page.on('response', (response) => {
    if (!/\.(js|css)$/.test(new URL(response.url()).pathname)) return;
    bodies.push((async () => ({ raw: await response.body(), sent: (await response.request().sizes()).responseBodySize }))());
  });
  await page.goto(`${gateway.url}/console/`);
  await page.getByTestId('task-table').waitFor();
  const files = await Promise.all(bodies);
  await context.close();
  return {
    files: files.length,
    rawBytes: sum(files.map((file) => file.raw.length)),
    gzipBytes: sum(files.map((file) => gzipSync(file.raw, { level: 9 }).length)),
    sentBytes: sum(files.map((file) => file.sent)),
  };
}

/** Navigation start to the task table on screen, each time in a fresh context (cold cache). */
async function measureColdLoads(): Promise<number[]> {
  const times: number[] = [];
  for (let run = 0; run < COLD_LOADS; run += 1) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const started = performance.now();
    await page.goto(`${gateway.url}/console/`, { waitUntil: 'commit' });
    await page.locator('[data-testid="task-table"] tbody tr').first().waitFor();
    times.push(performance.now() - started);
    await context.close();
  }
  return times.sort((a, b) => a - b);
}

interface StreamRun { idleWorstSecondFps: number; idleFrames: number; events: number; durationMs: number; frames: number; worstSecondFps: number; longFrames: number; heapStartMb: number; heapPeakMb: number; heapEndMb: number }

async function measureStreaming(): Promise<StreamRun> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  const heapMb = async () => {
    const { metrics } = await cdp.send('Performance.getMetrics');
    return (metrics.find((metric) => metric.name === 'JSHeapUsedSize')?.value ?? 0) / 2 ** 20;
  };
  await page.goto(`${gateway.url}/console/`);
  await page.getByTestId('task-table').waitFor();
  await startFrameCounter(page);
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const idle = await page.evaluate(() => (globalThis as any).__frames as number[]);
  const task = await post('/api/v1/tasks', { query: 'stream five thousand events', mode: 'simple', context: { mock_answer_words: STREAM_WORDS, mock_delay_ms: STREAM_MS, model_tier: 'large' } });
  await page.goto(`${gateway.url}/console/tasks/${task.task_id}`);
  await page.getByTestId('stream-state').filter({ hasText: 'live' }).waitFor();
  const heapStartMb = await heapMb();
  await startFrameCounter(page);
  let heapPeakMb = heapStartMb;
  const started = performance.now();
  while (!await page.getByTestId('stream-state').filter({ hasText: 'ended' }).isVisible()) {
    heapPeakMb = Math.max(heapPeakMb, await heapMb());
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const durationMs = performance.now() - started;
  const frames = await page.evaluate(() => (globalThis as any).__frames as number[]);
  const events = Number((await page.getByTestId('event-count').innerText()).split(' ')[0]);
  const heapEndMb = await heapMb();
  await context.close();
  return { idleWorstSecondFps: worstSecond(idle), idleFrames: idle.length, events, durationMs, frames: frames.length, worstSecondFps: worstSecond(frames), longFrames: frames.filter((gap, index) => index > 0 && gap - frames[index - 1] > 1000 / AIMS.minFps).length, heapStartMb, heapPeakMb, heapEndMb };
}

/** requestAnimationFrame timestamps, installed through DevTools (the page's CSP admits no injected script). */
async function startFrameCounter(page: Page): Promise<void> {
  await page.evaluate(() => {
    const frames: number[] = [];
    (globalThis as any).__frames = frames;
    const tick = (time: number) => { frames.push(time); requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
  });
}

/** The fewest frames drawn in any whole second of the run. */
function worstSecond(frames: number[]): number {
  if (frames.length < 2) return 0;
  let worst = Infinity;
  for (let start = frames[0]; start + 1000 <= frames[frames.length - 1]; start += 250) {
    worst = Math.min(worst, frames.filter((time) => time >= start && time < start + 1000).length);
  }
  return Number.isFinite(worst) ? worst : frames.length;
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

function formatSection(transfer: Transfer, loads: number[], stream: StreamRun | undefined): string {
  const kb = (bytes: number) => fixed(bytes / 1024, 1);
  const median = loads[Math.floor(loads.length / 2)];
  return [
    `## Web console: ${new Date().toISOString()} (commit ${describeCommit(ROOT)})`,
    '',
    `Machine: ${machineLine()}; headless Chromium (playwright-core), gateway with embedded Postgres on this machine.`,
    '',
    '| Measure | Result | Aim |',
    '|---|---|---|',
    `| First screen JS + CSS (${transfer.files} files): raw / gzip -9 / as sent | ${kb(transfer.rawBytes)} kB / ${kb(transfer.gzipBytes)} kB / ${kb(transfer.sentBytes)} kB | ≤ ${AIMS.firstScreenGzipKb} kB gzip |`,
    `| Cold load to first task list (${loads.length} runs): median / max | ${fixed(median, 0)} ms / ${fixed(loads[loads.length - 1], 0)} ms | ≤ ${AIMS.firstListMs} ms |`,
    ...(stream ? [
      `| One task streaming ${stream.events} events over ${fixed(stream.durationMs / 1000, 1)} s: frames drawn / worst 1-s window | ${stream.frames} / ${stream.worstSecondFps} fps | no window below ${AIMS.minFps} fps |`,
      `| An idle task list for ${IDLE_MS / 1000} s first (what the machine allows): frames drawn / worst 1-s window | ${stream.idleFrames} / ${stream.idleWorstSecondFps} fps | |`,
      `| Frames longer than ${fixed(1000 / AIMS.minFps, 1)} ms while streaming | ${stream.longFrames} | |`,
      `| JS heap used: before / peak / after the stream | ${fixed(stream.heapStartMb, 1)} / ${fixed(stream.heapPeakMb, 1)} / ${fixed(stream.heapEndMb, 1)} MB | |`,
    ] : []),
    '',
  ].join('\n');
}
