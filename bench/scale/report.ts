import os from 'node:os';
import { QUIET_PERCENT } from '../submit/measure-load.ts';
import { fixed, machineLine } from '../submit/report.ts';
import { isExactlyOnce, type ExactlyOnce } from './exactly-once.ts';
import { MOCK_DELAY_MS, type RecoveryResult } from './recovery-scenario.ts';
import type { TaskKindResult } from './task-kinds.ts';
import { describeSetup, type ThroughputResult } from './throughput-scenario.ts';

export interface ScaleRun {
  date: Date;
  commit: string;
  settings: Record<string, string>;
  throughput: ThroughputResult[];
  recovery: RecoveryResult[];
  kinds: TaskKindResult[];
}

/** A self-contained dated section for bench/RESULTS.md. */
export function formatSection(run: ScaleRun): string {
  const settings = Object.entries(run.settings).map(([name, value]) => `${name}=${value}`).join(', ') || 'every setting at its default';
  return [
    `## Scale: workers on one Postgres: ${run.date.toISOString()} (commit ${run.commit})`,
    '',
    `\`npm run bench:scale\` (\`bench/scale/run.ts\`). ${machineLine()}; one embedded Postgres for the whole run, a database of its own `
      + `per scenario, every process on it through DATABASE_URL (\`serve --role gateway\` or \`--role worker\`, each with its own EXECUTOR_ID); `
      + `LOG_LEVEL=warn, mock model; ${settings}. All the tasks are one tenant's (development user). Before each measured part the `
      + `benchmark waits (up to 3 minutes) for the machine to use under ${QUIET_PERCENT} % of a core; *busy just before* says what it saw.`,
    '',
    ...(run.throughput.length > 0 ? formatThroughput(run.throughput) : []),
    ...(run.recovery.length > 0 ? formatRecovery(run.recovery) : []),
    ...(run.kinds.length > 0 ? formatKinds(run.kinds) : []),
  ].join('\n');
}

function formatThroughput(results: ThroughputResult[]): string[] {
  const cores = os.cpus().length;
  const workerColumns = Math.max(...results.map((result) => result.workers));
  const atDefaults = (workers: number) => results.find((result) => result.workers === workers && Object.keys(result.settings).length === 0);
  const [one, two] = [atDefaults(1), atDefaults(2)];
  return [
    '### Tasks completed per second with 1 and 2 workers',
    '',
    `A backlog of simple tasks (\`mode: simple\`, mock model without delay) is submitted through a gateway-only process (64 keep-alive `
      + `clients) while no worker runs; then the workers start together and drain it. *To the last completion*: completed tasks / (last `
      + `\`completed_at\` − first \`started_at\`), worker start-up included. *Steady*: between the samples (every 0.5 s) at which `
      + `10 % and 90 % of the backlog had completed, every worker up. Database work from before the submission to the last completion `
      + `(submission and execution), per task; connections: the most the run's processes held at once. A worker runs at most `
      + `TENANT_WORKER_SHARE × WORKER_CONCURRENCY tasks of one tenant at once (32 at the defaults), so two run 64; the setup with `
      + `TENANT_WORKER_SHARE=1 gives one worker the same 64, to tell a second process from more tasks in flight.`,
    '',
    '| setup | tasks (not completed) | submitted/s, gateway alone | to the last completion: s, tasks/s | steady: tasks, s, tasks/s | completed by each worker | write transactions per task | WAL kB per task | peak connections | busy just before |',
    `|${' --- |'.repeat(10)}`,
    ...results.map(throughputRow),
    '',
    ...(one && two ? [`2 workers ÷ 1 worker: **${fixed(two.steady.perSecond / one.steady.perSecond, 2)}** steady, `
      + `${fixed(two.toLastCompletion.perSecond / one.toLastCompletion.perSecond, 2)} to the last completion.`, ''] : []),
    `CPU over the steady window, percent of one core (the machine has ${cores}: ${100 * cores} % in all); *rest of the machine*: `
      + 'other sessions\' work on this shared machine, and interrupts. Per task: CPU milliseconds of Postgres and of the workers '
      + 'together per task completed in the window.',
    '',
    `| setup | gateway | ${Array.from({ length: workerColumns }, (_, index) => `worker ${index + 1}`).join(' | ')} | postgres | benchmark | rest of the machine | whole machine | postgres ms per task | workers ms per task |`,
    `|${' --- |'.repeat(workerColumns + 8)}`,
    ...results.map((result) => cpuRow(result, workerColumns)),
    '',
  ];
}

function throughputRow(result: ThroughputResult): string {
  const { steady, toLastCompletion, work } = result;
  return `| ${[
    describeSetup(result), `${result.tasks} (${result.notCompleted})`, fixed(result.submission.submissionsPerSecond, 0),
    `${fixed(toLastCompletion.seconds, 1)}, **${fixed(toLastCompletion.perSecond, 1)}**`,
    `${steady.completedTo - steady.completedFrom}, ${fixed(steady.seconds, 1)}, **${fixed(steady.perSecond, 1)}**`,
    result.completedByWorker.join(' / '), fixed(work.writeTransactionsPerTask, 1), fixed(work.walBytesPerTask / 1024, 1),
    result.peakConnections, busy(result.busyBefore),
  ].join(' | ')} |`;
}

function cpuRow(result: ThroughputResult, workerColumns: number): string {
  const { cpu } = result.steady;
  const workers = Array.from({ length: workerColumns }, (_, index) => (index < cpu.workers.length ? percent(cpu.workers[index]) : '—'));
  const msPerTask = (percentOfCore: number) => fixed((10 * percentOfCore) / result.steady.perSecond, 1);
  const allWorkers = cpu.workers.reduce((sum, used) => sum + used, 0);
  return `| ${[describeSetup(result), percent(cpu.gateway), ...workers, percent(cpu.postgres), percent(cpu.bench), percent(cpu.rest),
    percent(cpu.machine), msPerTask(cpu.postgres), msPerTask(allWorkers)].join(' | ')} |`;
}

function formatRecovery(results: RecoveryResult[]): string[] {
  return [
    '### From a worker\'s death to its last task completed elsewhere',
    '',
    `A gateway-only process and two workers; as many simple tasks as the two run at once for one tenant, each answering over `
      + `${MOCK_DELAY_MS} ms (\`context.mock_delay_ms\`). Once none is left on the queue, one worker is killed (SIGKILL) and never restarted; its `
      + 'tasks are those the engine showed running under its executor id just before. Times in seconds from the kill, read from '
      + 'Postgres (same clock): its last heartbeat (`executors.heartbeat_at`), its detection by the survivor (`recovered_at`), the last '
      + '`ERROR_RECOVERY` event written (it follows the re-queue, which the survivor may dequeue first), the last of its tasks taken '
      + 'from the queue again (the engine\'s `started_at_epoch_ms`), and the last completed. A worker renews its lease every sixth '
      + 'of EXECUTOR_DEAD_AFTER_SECONDS and checks for dead ones as often, so detection is expected at the last heartbeat + EXECUTOR_DEAD_AFTER_SECONDS + up to one '
      + 'such interval. *Exactly once*: every task of the run COMPLETED with one usage row, one `WORKFLOW_COMPLETED` and one final answer. '
      + '*Connections*: those the three processes held with every task running, just before the kill.',
    '',
    '| EXECUTOR_DEAD_AFTER_SECONDS | tasks: on the killed worker / on the survivor | last heartbeat | detected | all handed over | last re-started | **last completed** | re-run of one task p50 / max s | ERROR_RECOVERY events (its tasks with one) | exactly once | connections before the kill | busy just before |',
    `|${' --- |'.repeat(12)}`,
    ...results.map((result) => `| ${[
      result.deadAfterSeconds, `${result.onKilled} / ${result.onSurvivor}`, signed(result.lastHeartbeatBeforeKill), signed(result.detected),
      signed(result.handedOver), signed(result.lastRestarted), `**${signed(result.lastCompleted)}**`,
      `${fixed(result.rerun.p50, 2)} / ${fixed(result.rerun.max, 2)}`,
      `${result.recoveryEvents} (${result.itsTasksWithRecoveryEvent} of ${result.onKilled})`, exactlyOnce(result.exactlyOnce), result.connections, busy(result.busyBefore),
    ].join(' | ')} |`),
    '',
    'Where the time goes:',
    '',
    ...results.map((result) => `- EXECUTOR_DEAD_AFTER_SECONDS=${result.deadAfterSeconds}: detection ${fixed(result.detected, 2)} s `
      + `(the lease was ${fixed(-result.lastHeartbeatBeforeKill, 2)} s old at the kill: expected ${fixed(result.deadAfterSeconds + result.lastHeartbeatBeforeKill, 2)}`
      + `–${fixed(result.deadAfterSeconds + result.lastHeartbeatBeforeKill + result.deadAfterSeconds / 6, 2)} s); then ${fixed(result.lastRestarted - result.detected, 2)} s `
      + `until the last of its tasks ran again on ${result.recoveredBy ?? 'nobody'} (re-queue and dequeue), and ${fixed(result.lastCompleted - result.lastRestarted, 2)} s `
      + 'of re-run to the last completion.'),
    '',
  ];
}

function formatKinds(results: TaskKindResult[]): string[] {
  return [
    '### Database work per task kind',
    '',
    'A gateway-only process and one worker; each kind\'s tasks submitted (64 clients) and drained before the next kind\'s. Write '
      + 'transactions (the transaction id\'s advance) and WAL from before the submission to the last completion, per task; the '
      + 'processes\' own background writes (heartbeats, sweeps) in that time are included. Database growth: `pg_database_size` '
      + 'before and after, per task (space freed by earlier deletes may be reused, and tables grow by whole pages). CPU: '
      + 'user + system time of each side over the same span, per task (CPU time, so a busy machine inflates it less than it does '
      + 'throughput).',
    '',
    '| task kind | tasks (completed) | model calls per task | engine step records per task | events per task | write transactions per task | WAL kB per task | database growth kB per task | CPU ms per task: postgres / gateway / worker | busy just before |',
    `|${' --- |'.repeat(10)}`,
    ...results.map((result) => `| ${[
      result.name, `${result.tasks} (${result.completed})`, fixed(result.modelCalls, 1), fixed(result.engineSteps, 1), fixed(result.events, 1),
      fixed(result.work.writeTransactionsPerTask, 1), fixed(result.work.walBytesPerTask / 1024, 1), fixed(result.storedBytes / 1024, 1),
      `${fixed(result.cpuMs.postgres, 1)} / ${fixed(result.cpuMs.gateway, 1)} / ${fixed(result.cpuMs.worker, 1)}`, busy(result.busyBefore),
    ].join(' | ')} |`),
    '',
  ];
}

const percent = (value: number) => `${fixed(value, 0)} %`;
const signed = (seconds: number) => (Number.isFinite(seconds) ? `${seconds >= 0 ? '+' : ''}${seconds.toFixed(2)}` : '—');
const busy = (value: number) => `${fixed(value, 0)} %${value <= QUIET_PERCENT ? '' : ' (not quiet)'}`;

function exactlyOnce(check: ExactlyOnce): string {
  if (isExactlyOnce(check)) return `yes (${check.tasks} tasks)`;
  return `**no**: of ${check.tasks}, ${check.notCompleted} not completed, ${check.usageRowsNotOne} without exactly one usage row, `
    + `${check.completionEventsNotOne} without exactly one WORKFLOW_COMPLETED, ${check.answersNotOne} without exactly one final answer`;
}
