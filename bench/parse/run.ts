/**
 * How the cost of reading an HTML page grows with its nesting depth and its element count: the shape pre-scan,
 * linkedom's parse, the plain-text reading and the Markdown reading (linkedom + Readability + turndown), each
 * case in a fresh worker thread, the median of ROUNDS runs. Prints a Markdown table for bench/RESULTS.md.
 *
 *   node bench/parse/run.ts [rounds, default 3] [only the pages of this shape]
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { CaseRequest, CaseResult } from './measure-case.ts';

const CASE_LIMIT_MS = 60_000;
const ROUNDS = Number(process.argv[2] ?? 3);
const ONLY_SHAPE = process.argv[3];

const CASES: CaseRequest[] = [
  ...[100, 200, 300, 400, 600, 800, 1200].map((size) => ({ shape: 'nested', size }) as const),
  ...[10, 50, 100, 200, 300, 400, 600].map((size) => ({ shape: 'deep-article', size }) as const),
  // Depth and element count together: an article of 330, 1,000 or 3,300 paragraphs (3 elements each), 16 to 128 deep.
  ...[16, 32, 64, 128].flatMap((size) => [330, 1_000, 3_300].map((paragraphs) => ({ shape: 'deep-article', size, paragraphs }) as const)),
  ...[1_000, 10_000, 50_000, 100_000, 200_000].map((size) => ({ shape: 'wide', size }) as const),
  ...[1_000, 10_000, 50_000, 100_000, 200_000].map((size) => ({ shape: 'cards', size }) as const),
  // The plain-text reading's worst: 5 MB of tags, all at most 512 deep.
  ...[64, 512].map((size) => ({ shape: 'chains', size }) as const),
];

function runCase(request: CaseRequest): Promise<CaseResult & { timedOut: boolean }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./measure-case.ts', import.meta.url), { workerData: request, resourceLimits: { maxOldGenerationSizeMb: 4096 } });
    let last: CaseResult | undefined;
    const timer = setTimeout(() => { void worker.terminate(); }, CASE_LIMIT_MS);
    worker.on('message', (result: CaseResult) => { last = result; });
    worker.on('error', reject);
    worker.on('exit', () => {
      clearTimeout(timer);
      // A case whose first readings alone outlast the limit reports what it reached.
      const reached = last ?? { bytes: 0, depth: 0, elements: 0, shapeMs: NaN, linkedomMs: NaN, textMs: NaN, markdownMs: null, heapMb: 0 };
      resolve({ ...reached, timedOut: reached.markdownMs === null && reached.error === undefined });
    });
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ms = (value: number) => (value >= 100 ? Math.round(value).toString() : value.toFixed(1));

console.log(`${os.cpus().length} cores (${os.cpus()[0]?.model}), Node ${process.version}, median of ${ROUNDS} rounds, load average before: ${os.loadavg()[0].toFixed(2)}\n`);
console.log('| page | size | paragraphs | bytes | depth | elements | shape pre-scan ms | linkedom parse ms | plain text ms | Markdown (Readability) ms | heap after MB |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const request of CASES.filter((candidate) => !ONLY_SHAPE || candidate.shape === ONLY_SHAPE)) {
  const runs = [];
  for (let round = 0; round < ROUNDS; round++) runs.push(await runCase(request));
  const [first] = runs;
  const markdown = runs.some((run) => run.timedOut) ? `> ${CASE_LIMIT_MS / 1000} s`
    : first.error ? `fails: ${first.error}` : ms(median(runs.map((run) => run.markdownMs!)));
  console.log(`| ${request.shape} | ${request.size} | ${request.paragraphs ?? (request.shape === 'deep-article' ? 100 : '')} | ${first.bytes} | ${first.depth} | ${first.elements} | ${ms(median(runs.map((run) => run.shapeMs)))} | `
    + `${ms(median(runs.map((run) => run.linkedomMs)))} | ${ms(median(runs.map((run) => run.textMs)))} | ${markdown} | ${Math.round(median(runs.map((run) => run.heapMb)))} |`);
}
console.log(`\nload average after: ${os.loadavg()[0].toFixed(2)}`);
