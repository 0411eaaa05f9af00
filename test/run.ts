/**
 * Runs test files three at a time, as `node --test --test-concurrency=3` does, but the slowest first. Node's own
 * runner starts files in name order, so a file of a minute or two whose name sorts late (the Python executor's unit
 * tests sort after every integration file) ran at the end while the other two slots had nothing left to do
 * (docs/decisions.md, "Test files started slowest first"). Output and exit code are those of `node --test`.
 * Usage: node test/run.ts [glob…]   (default: the unit and integration files)
 */
import { glob } from 'node:fs/promises';
import path from 'node:path';
import { run, type RunOptions } from 'node:test';
import { spec } from 'node:test/reporters';

const ROOT = path.resolve(import.meta.dirname, '..');
const CONCURRENCY = 3;
const DEFAULT_PATTERNS = ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'];

/**
 * The files that took a minute or more in a full run on a 2-core machine (2026-11-28), slowest first. A file not
 * listed runs after these, in name order; a listed file that no longer exists is skipped.
 */
const SLOWEST_FIRST = [
  'test/integration/python-sandboxes.test.ts',
  'test/integration/openai-responses.test.ts',
  'test/integration/faults-read-only.test.ts',
  'test/integration/console.test.ts',
  'test/integration/cron-runs-exactly-once.test.ts',
  'test/integration/tools-body-limits.test.ts',
  'test/unit/tools/python-executor.test.ts',
  'test/integration/cli.test.ts',
  'test/integration/swarm-control.test.ts',
  'test/integration/executors.test.ts',
  'test/integration/provider-limits.test.ts',
  'test/integration/metrics.test.ts',
];

async function main(patterns: string[]): Promise<void> {
  const files: string[] = [];
  for await (const file of glob(patterns, { cwd: ROOT })) files.push(file);
  files.sort();
  const ordered = [...SLOWEST_FIRST.filter((file) => files.includes(file)), ...files.filter((file) => !SLOWEST_FIRST.includes(file))];
  const options: RunOptions & { globalSetupPath: string } = {
    files: ordered.map((file) => path.join(ROOT, file)),
    concurrency: CONCURRENCY,
    // Node 24's option (`--test-global-setup` on the command line); the installed @types/node predates it.
    globalSetupPath: path.join(ROOT, 'test/global-setup.ts'),
  };
  const stream = run(options);
  stream.on('test:fail', () => { process.exitCode = 1; });
  stream.compose(spec).pipe(process.stdout);
}

await main(process.argv.length > 2 ? process.argv.slice(2) : DEFAULT_PATTERNS);
