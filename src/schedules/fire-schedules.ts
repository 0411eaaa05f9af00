import { sql } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import type { Db } from '../db/database.ts';
import type { ScheduleRow } from '../db/schema.ts';
import type { Deps } from '../deps.ts';
import { isAppError } from '../errors.ts';
import { countHit, peekHits } from '../http/fixed-window.ts';
import { limitFor, RATE_WINDOW_SECONDS, rateKey } from '../http/rate-limit.ts';
import { backgroundErrors } from '../observability/metrics.ts';
import { inSpan } from '../observability/spans.ts';
import { credentialKey } from '../auth/caller.ts';
import { insertTaskWithSession } from '../tasks/queries.ts';
import { keepTraceContext, prepareTask, startSubmittedTask } from '../tasks/submit-task.ts';
import { markSchedulePaused } from '../task-state/schedule-pause.ts';
import { markScheduledRun } from '../task-state/budgets.ts';
import { uuidFromText } from '../uuid.ts';
import { compileCron, planOccurrences } from './cron-times.ts';
import { runAs, type RunRefusal } from './run-as.ts';

/** Due schedules taken per look, oldest first; the rest are taken at the next look. */
const BATCH = 50;

type Due = ScheduleRow & { now: Date };

/** A run this process started: its task is written and committed, its workflow not yet started. */
interface StartedRun { taskId: string; tenantId: string }

/**
 * Starts the runs that are due (every worker looks every SCHEDULE_POLL_INTERVAL_MS). Each occurrence of a
 * schedule starts one task however many processes look at once, and after any crash: a process takes a due
 * schedule only under its row lock (others skip it), decides every occurrence up to now, and moves next_run_at
 * past now in the same commit; schedule_runs has one row per occurrence. The task's workflow starts after the
 * commit; a process that dies in between leaves a queued task that the orphan sweep starts.
 */
export async function fireDueSchedules(deps: Deps): Promise<number> {
  const due = await deps.db.selectFrom('schedules').select('id')
    .where('status', '=', 'ACTIVE').where('deleted_at', 'is', null).where('next_run_at', '<=', sql<Date>`now()`)
    .orderBy('next_run_at').limit(BATCH).execute();
  let started = 0;
  for (const { id } of due) {
    try {
      const run = await deps.db.transaction().execute((transaction) => fireSchedule(deps, transaction, id));
      if (!run) continue;
      started++;
      await startSubmittedTask(deps, run.taskId, run.tenantId);
    } catch (error) {
      // One schedule's trouble must not hold up the others; it is tried again at the next look.
      backgroundErrors.inc({ source: 'schedule run' });
      deps.logger.error({ err: error, schedule_id: id }, 'schedule run not started; trying again at the next look');
    }
  }
  return started;
}

/** Decides the schedule's due occurrences under its row lock; returns the run it started, if any. */
async function fireSchedule(deps: Deps, transaction: Db, id: string): Promise<StartedRun | undefined> {
  const { rows: [schedule] } = await sql<Due>`
    select *, now() as now from schedules
    where id = ${id} and status = 'ACTIVE' and deleted_at is null and next_run_at <= now()
    for update skip locked`.execute(transaction);
  if (!schedule) return undefined;
  const plan = planOccurrences(compileCron(schedule.cron_expression, schedule.timezone), schedule.next_run_at!, schedule.now, deps.config.schedules.catchUpSeconds * 1000);
  const skipped = plan.skipped;
  let run: StartedRun | undefined;
  if (plan.run) {
    const owner = await runAs(transaction, schedule, schedule.now);
    if ('refused' in owner) return stopSchedule(transaction, schedule, skipped, { at: plan.run, refusal: owner });
    // Over its owner's rate limit, the run waits (nothing is written) and is tried again at the next look,
    // until the window resets or the occurrence falls out of the catch-up window.
    if (await isOverRateLimit(deps, owner)) return undefined;
    const started = await startRun(deps, transaction, schedule, owner, plan.run);
    if ('refused' in started) skipped.push({ at: plan.run, reason: started.refused });
    else run = started;
  }
  await recordSkipped(transaction, schedule.id, skipped);
  await transaction.updateTable('schedules').set({
    next_run_at: plan.next,
    updated_at: sql`now()` as never,
    ...(run ? { total_runs: sql`total_runs + 1` as never, last_run_at: sql`now()` as never } : {}),
  }).where('id', '=', schedule.id).execute();
  return run;
}

/** Starts the run's trace, then writes its task. */
async function startRun(deps: Deps, transaction: Db, schedule: Due, owner: Caller, at: Date): Promise<StartedRun | { refused: string }> {
  // The root of the run's trace, as `task submit` is for a request: every run of the task's workflow joins it.
  const attributes = { 'agentgate.schedule.id': schedule.id, 'agentgate.tenant.id': schedule.tenant_id };
  return inSpan('schedule run', { attributes }, async (span) => {
    const started = await writeRun(deps, transaction, schedule, owner, at);
    if ('taskId' in started) span.setAttribute('agentgate.task.id', started.taskId);
    return started;
  });
}

/**
 * Writes the run's task as its owner would submit it, in the schedule's own session, with the run's budget and
 * time limit. A task its owner may no longer submit (policy, a context that no longer passes) is not an error
 * of the scheduler: the occurrence is skipped, saying why.
 */
async function writeRun(deps: Deps, transaction: Db, schedule: Due, owner: Caller, at: Date): Promise<StartedRun | { refused: string }> {
  const budgetUsd = Number(schedule.max_budget_per_run_usd);
  let task;
  try {
    task = await prepareTask(deps, owner, { query: schedule.task_query, context: schedule.task_context, session_id: `schedule-${schedule.id}` }, {
      taskId: uuidFromText(`schedule-run:${schedule.id}:${at.toISOString()}`),
      serverContext: { trigger_type: 'schedule', schedule_id: schedule.id, max_budget_usd: budgetUsd },
      serverOptions: { timeout_seconds: schedule.timeout_seconds },
    });
  } catch (error) {
    if (isAppError(error) && error.statusCode < 500) return { refused: `refused: ${error.message}` };
    throw error;
  }
  keepTraceContext(deps, task);
  await insertTaskWithSession(transaction, owner, task.claim, task);
  await markScheduledRun(transaction, task.id, schedule.id, budgetUsd);
  await transaction.insertInto('schedule_runs').values({ schedule_id: schedule.id, scheduled_for: at, task_id: task.id }).execute();
  if (!deps.config.skipAuth) await countHit(deps.db, rateKey(credentialKey(owner)), RATE_WINDOW_SECONDS);
  return { taskId: task.id, tenantId: schedule.tenant_id };
}

/** A run counts as a request of its owner, or of the key it runs as (spec: a run executes with its owner's rate limits). */
async function isOverRateLimit(deps: Deps, owner: Caller): Promise<boolean> {
  if (deps.config.skipAuth) return false;
  const [used, limit] = await Promise.all([peekHits(deps.db, rateKey(credentialKey(owner)), RATE_WINDOW_SECONDS), limitFor(deps, owner.tenantId, owner.apiKeyId)]);
  return used >= limit;
}

async function recordSkipped(transaction: Db, scheduleId: string, skipped: Array<{ at: Date; reason: string }>): Promise<void> {
  if (skipped.length === 0) return;
  await transaction.insertInto('schedule_runs')
    .values(skipped.map(({ at, reason }) => ({ schedule_id: scheduleId, scheduled_for: at, skip_reason: reason })))
    .onConflict((conflict) => conflict.columns(['schedule_id', 'scheduled_for']).doNothing())
    .execute();
}

/**
 * A schedule whose runs can no longer act (its owner left the tenant or was deactivated, its key was revoked or
 * expired) stops, saying why: its runs would all be refused.
 */
async function stopSchedule(transaction: Db, schedule: Due, skipped: Array<{ at: Date; reason: string }>, due: { at: Date; refusal: RunRefusal }): Promise<undefined> {
  await recordSkipped(transaction, schedule.id, [...skipped, { at: due.at, reason: due.refusal.refused }]);
  await markSchedulePaused(transaction, schedule.id, due.refusal.pauseReason);
  return undefined;
}
