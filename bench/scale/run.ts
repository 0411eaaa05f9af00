/**
 * Scale benchmark (issue 17): tasks completed per second with one and with two worker processes on one Postgres,
 * the CPU each side takes, the time from a worker's death to its last task completed on the other worker, and the
 * database work per task of each kind. One embedded Postgres serves the whole run, a database per scenario.
 * Prints a Markdown section; appends it to bench/RESULTS.md only with --record.
 * Usage: npm run bench:scale [-- --record] [--tasks 3000] [--dead-after 30,6] [--kind-tasks 100] [--scenarios throughput,recovery,kinds]
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { describeCommit } from '../submit/describe-commit.ts';
import { serviceSettings } from '../submit/gateway-process.ts';
import { appendSection } from '../submit/report.ts';
import { startBenchPostgres } from './postgres-server.ts';
import { benchmarkRecovery, type RecoveryResult } from './recovery-scenario.ts';
import { formatSection } from './report.ts';
import type { ScaleContext } from './scale-context.ts';
import { measureTaskKinds, type TaskKindResult } from './task-kinds.ts';
import { benchmarkThroughput, type ThroughputResult, type ThroughputSetup } from './throughput-scenario.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const RESULTS_PATH = path.join(ROOT, 'bench/RESULTS.md');
const SCENARIOS = ['throughput', 'recovery', 'kinds'] as const;
/**
 * One and two workers at the defaults. A worker runs at most TENANT_WORKER_SHARE × WORKER_CONCURRENCY = 32 tasks
 * of one tenant at once, so two workers also run twice as many tasks at once; the third setup gives one worker
 * the same 64, to tell the gain of a second process from the gain of more tasks in flight.
 */
const THROUGHPUT_SETUPS: ThroughputSetup[] = [
  { workers: 1, settings: {} },
  { workers: 2, settings: {} },
  { workers: 1, settings: { TENANT_WORKER_SHARE: '1' } },
];

interface Options {
  shouldRecord: boolean;
  tasks: number;
  deadAfterSeconds: number[];
  kindTasks: number;
  scenarios: string[];
}

async function main(argv: string[]): Promise<void> {
  const options = parseOptions(argv);
  const commit = describeCommit(ROOT);
  log('starting one embedded Postgres for the whole run');
  const postgres = await startBenchPostgres();
  process.once('SIGINT', () => void postgres.stop().finally(() => process.exit(130)));
  const context: ScaleContext = { root: ROOT, postgres, settings: serviceSettings(), log };
  const throughput: ThroughputResult[] = [];
  const recovery: RecoveryResult[] = [];
  let kinds: TaskKindResult[] = [];
  try {
    if (options.scenarios.includes('throughput')) {
      for (const setup of THROUGHPUT_SETUPS) throughput.push(await benchmarkThroughput(context, setup, options.tasks));
    }
    if (options.scenarios.includes('recovery')) {
      for (const seconds of options.deadAfterSeconds) recovery.push(await benchmarkRecovery(context, seconds));
    }
    if (options.scenarios.includes('kinds')) kinds = await measureTaskKinds(context, options.kindTasks);
  } finally {
    log('stopping Postgres and removing its data directory');
    await postgres.stop();
  }
  const section = formatSection({ date: new Date(), commit, settings: context.settings, throughput, recovery, kinds });
  console.log(`\n${section}`);
  if (options.shouldRecord) await appendSection(RESULTS_PATH, section);
  else log('not recorded (add --record to append this section to bench/RESULTS.md)');
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      record: { type: 'boolean', default: false },
      tasks: { type: 'string', default: '3000' },
      'dead-after': { type: 'string', default: '30,6' },
      'kind-tasks': { type: 'string', default: '100' },
      scenarios: { type: 'string', default: SCENARIOS.join(',') },
    },
  });
  const scenarios = values.scenarios.split(',');
  const unknown = scenarios.filter((name) => !(SCENARIOS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`unknown scenario(s) ${unknown.join(', ')}; choose from ${SCENARIOS.join(', ')}`);
  return {
    shouldRecord: values.record,
    tasks: positiveInteger('--tasks', values.tasks),
    deadAfterSeconds: values['dead-after'].split(',').map((value) => positiveInteger('--dead-after', value)),
    kindTasks: positiveInteger('--kind-tasks', values['kind-tasks']),
    scenarios,
  };
}

function positiveInteger(name: string, value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number <= 0) throw new Error(`${name} takes a positive integer, not ${JSON.stringify(value)}`);
  return number;
}

const log = (message: string) => console.error(`[bench] ${message}`);

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
