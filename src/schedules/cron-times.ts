import { Cron } from 'croner';

/**
 * When a schedule runs: a standard five-field cron expression (minute hour day-of-month month day-of-week;
 * ranges, lists, steps, JAN-DEC and SUN-SAT names, Sunday 0 or 7; day-of-month and day-of-week together
 * match either, as in Vixie cron) evaluated in an IANA time zone by croner. Daylight saving follows Vixie
 * cron's rule: a job whose minute and hour fields have no wildcard or step (`30 2 * * *`, `0,30 9 * * *`)
 * runs once at the first instant after a spring-forward gap that swallowed its time, and once, at the first
 * occurrence, of a time the autumn change repeats; a job with `*` or a step in those fields runs at every
 * time that exists, so in the repeated hour it runs in both passes and in the skipped hour not at all.
 * (croner's `fixedTimeRule: 'no-wildcard'`.) `cron.nextRun(after)` gives the first run strictly after `after`.
 */

export class CronError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CronError';
  }
}

const NAMES = /\b(JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC|SUN|MON|TUE|WED|THU|FRI|SAT)\b/gi;
/** What a standard field may hold once names are read: croner's extensions (`L`, `W`, `#`, `?`) are not standard cron. */
const STANDARD_FIELD = /^[0-9*,/-]+$/;
const FIELD_NAMES = ['minute', 'hour', 'day of month', 'month', 'day of week'];

/** Compiles the expression for the zone; a CronError says what is wrong with it. */
export function compileCron(expression: string, timezone: string): Cron {
  const fields = expression.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== 5) throw new CronError(`expected 5 fields (minute hour day-of-month month day-of-week), got ${fields.length}`);
  fields.forEach((field, index) => {
    if (!STANDARD_FIELD.test(field.replace(NAMES, '0'))) throw new CronError(`${FIELD_NAMES[index]} field "${field}" is not standard cron`);
  });
  let cron: Cron;
  try {
    cron = new Cron(fields.join(' '), { timezone, paused: true, mode: '5-part', fixedTimeRule: 'no-wildcard', domAndDow: false });
  } catch (error) {
    throw new CronError((error as Error).message.replace(/^CronPattern: /, ''));
  }
  if (cron.nextRun() === null) throw new CronError('it never runs');
  return cron;
}

/**
 * Whether the name is an IANA time zone (in any case; aliases such as `US/Eastern` too). The name is kept as
 * given: Intl would turn `Asia/Kolkata` into the legacy `Asia/Calcutta`. Intl also takes fixed offsets
 * (`+02:00`), which are not zones: they know nothing of daylight saving.
 */
export function isTimezone(name: string): boolean {
  if (!/^[A-Za-z]/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Runs measured for the interval check: a day, a week and a daylight-saving change are inside this. */
const GAP_HORIZON_MS = 8 * 24 * 3600_000;
const MAX_MEASURED_RUNS = 1000;

/**
 * The shortest time between two consecutive runs from `from` on, in minutes, measured over the runs of the next
 * eight days (at least two runs, at most a thousand); undefined for a schedule that runs only once more.
 */
export function shortestGapMinutes(cron: Cron, from: Date): number | undefined {
  let previous = cron.nextRun(from);
  if (!previous) return undefined;
  const first = previous.getTime();
  let shortest: number | undefined;
  for (let count = 1; count < MAX_MEASURED_RUNS; count++) {
    const next = cron.nextRun(previous);
    if (!next) break;
    const gap = (next.getTime() - previous.getTime()) / 60_000;
    shortest = shortest === undefined ? gap : Math.min(shortest, gap);
    if (next.getTime() - first > GAP_HORIZON_MS) break;
    previous = next;
  }
  return shortest;
}

export interface OccurrencePlan {
  /** The occurrence to run now: the latest one still within the catch-up window. */
  run: Date | undefined;
  /** Occurrences not run: older than the window, or superseded by a later one within it. */
  skipped: Array<{ at: Date; reason: string }>;
  /** The first occurrence after `now`. */
  next: Date | null;
}

/** Missed occurrences are looked at one by one up to this many; a schedule down longer skips the rest unrecorded. */
const MAX_MISSED_OCCURRENCES = 1000;

/**
 * What to do with a schedule due at `due` when the time is `now`: every occurrence from `due` up to `now`
 * is either run (the latest within `catchUpMs` of its time) or skipped with its reason, and the schedule
 * moves on to the first occurrence after `now`.
 */
export function planOccurrences(cron: Cron, due: Date, now: Date, catchUpMs: number): OccurrencePlan {
  const passed: Date[] = [due];
  for (let at = cron.nextRun(due); at && at <= now && passed.length < MAX_MISSED_OCCURRENCES; at = cron.nextRun(at)) passed.push(at);
  const latest = passed.at(-1)!;
  const run = now.getTime() - latest.getTime() <= catchUpMs ? latest : undefined;
  const missed = `missed: no process could start it within ${Math.round(catchUpMs / 1000)} s of its time (SCHEDULE_CATCHUP_SECONDS)`;
  const skipped = passed.filter((at) => at !== run).map((at) => ({
    at,
    reason: run && now.getTime() - at.getTime() <= catchUpMs ? `superseded by the run of ${run.toISOString()}` : missed,
  }));
  return { run, skipped, next: cron.nextRun(now) };
}
