/**
 * Issue 26's full-size lease scenario: Postgres stopped 40 s (EXECUTOR_DEAD_AFTER_SECONDS at its default, 30) under
 * 50 five-agent DAG tasks on an API process and 3 workers. It runs the integration test
 * test/integration/faults-lease-outage.test.ts (scaled down there) with the issue's numbers, and prints whether it
 * passed and how long after Postgres came back the last task finished.
 *
 *   node bench/faults/lease-outage.ts [--dead-after 30] [--outage-ms 40000] [--tasks 50]
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(import.meta.dirname, '../..');
const { values } = parseArgs({ options: {
  'dead-after': { type: 'string', default: '30' }, 'outage-ms': { type: 'string', default: '40000' }, tasks: { type: 'string', default: '50' },
} });

const startedAt = Date.now();
const child = spawn(process.execPath, ['--test', '--test-global-setup=test/global-setup.ts', '--test-concurrency=1', 'test/integration/faults-lease-outage.test.ts'], {
  cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, LEASE_OUTAGE_DEAD_AFTER_SECONDS: values['dead-after'], LEASE_OUTAGE_MS: values['outage-ms'], LEASE_OUTAGE_TASKS: values.tasks },
});
let output = '';
child.stdout!.on('data', (chunk) => { output += chunk; });
const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
const finished = /every task finished (\d+) ms after Postgres came back/.exec(output)?.[1];
console.log(JSON.stringify({
  dead_after_seconds: Number(values['dead-after']), outage_ms: Number(values['outage-ms']), tasks: Number(values.tasks),
  passed: code === 0, last_task_after_return_ms: finished === undefined ? null : Number(finished), run_seconds: Math.round((Date.now() - startedAt) / 1000),
}));
if (code !== 0) console.log(output.split('\n').filter((line) => !line.includes('"level"')).slice(-40).join('\n'));
