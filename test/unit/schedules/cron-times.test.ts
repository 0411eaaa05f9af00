import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileCron, CronError, isTimezone, planOccurrences, shortestGapMinutes } from '../../../src/schedules/cron-times.ts';
import { fixedTimeRun, nthWeekday, wallTimeOccurrences } from '../../helpers/zone-rules.ts';

const iso = (ms: number) => new Date(ms).toISOString();

/** The next `count` runs after `from`, as the server computes them. */
function runs(expression: string, zone: string, from: string | number, count: number): string[] {
  const cron = compileCron(expression, zone);
  const out: string[] = [];
  let at: Date | null = new Date(from);
  for (let index = 0; index < count && at; index++) {
    at = cron.nextRun(at);
    if (at) out.push(at.toISOString());
  }
  return out;
}

/** Daily fixed-time runs on consecutive days, worked out from the zone's rules (test/helpers/zone-rules.ts). */
function dailyExpected(zone: string, year: number, month: number, firstDay: number, days: number, hour: number, minute: number): string[] {
  return Array.from({ length: days }, (_, index) => {
    const date = new Date(Date.UTC(year, month - 1, firstDay + index));
    return iso(fixedTimeRun(zone, date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), hour, minute));
  });
}

for (const year of [2026, 2027]) {
  const springBerlin = nthWeekday(year, 3, 0, -1);
  const autumnBerlin = nthWeekday(year, 10, 0, -1);
  const springNewYork = nthWeekday(year, 3, 0, 2);
  const autumnNewYork = nthWeekday(year, 11, 0, 1);

  test(`${year}: Europe/Berlin 02:30 daily runs once on the spring-forward day (at 03:00) and once on the autumn day`, () => {
    assert.deepEqual(runs('30 2 * * *', 'Europe/Berlin', Date.UTC(year, 2, springBerlin - 2, 12), 3), dailyExpected('Europe/Berlin', year, 3, springBerlin - 1, 3, 2, 30));
    assert.deepEqual(runs('30 2 * * *', 'Europe/Berlin', Date.UTC(year, 9, autumnBerlin - 2, 12), 3), dailyExpected('Europe/Berlin', year, 10, autumnBerlin - 1, 3, 2, 30));
  });

  test(`${year}: America/New_York 02:30 and 01:30 daily across both changes`, () => {
    assert.deepEqual(runs('30 2 * * *', 'America/New_York', Date.UTC(year, 2, springNewYork - 2, 12), 3), dailyExpected('America/New_York', year, 3, springNewYork - 1, 3, 2, 30));
    assert.deepEqual(runs('30 1 * * *', 'America/New_York', Date.UTC(year, 10, autumnNewYork - 2, 12), 3), dailyExpected('America/New_York', year, 11, autumnNewYork - 1, 3, 1, 30));
  });

  test(`${year}: an interval job (*/30 in hour 2) runs in both passes of the repeated hour and not at all in the skipped one`, () => {
    const autumn = [0, 30].flatMap((minute) => wallTimeOccurrences('Europe/Berlin', year, 10, autumnBerlin, 2, minute)).sort((left, right) => left - right).map(iso);
    assert.equal(autumn.length, 4);
    assert.deepEqual(runs('*/30 2 * * *', 'Europe/Berlin', Date.UTC(year, 9, autumnBerlin - 1, 12), 4), autumn);
    const afterSpring = [0, 30].map((minute) => iso(wallTimeOccurrences('Europe/Berlin', year, 3, springBerlin + 1, 2, minute)[0]));
    assert.deepEqual(runs('*/30 2 * * *', 'Europe/Berlin', Date.UTC(year, 2, springBerlin - 1, 12), 2), afterSpring);
  });
}

test('weekday mornings in New York keep 09:00 local across the spring change (14:00 UTC, then 13:00 UTC)', () => {
  const friday = nthWeekday(2026, 3, 5, 1);
  assert.deepEqual(runs('0 9 * * 1-5', 'America/New_York', Date.UTC(2026, 2, friday, 0), 2), [
    iso(fixedTimeRun('America/New_York', 2026, 3, friday, 9, 0)),
    iso(fixedTimeRun('America/New_York', 2026, 3, friday + 3, 9, 0)),
  ]);
  assert.equal(runs('0 9 * * 1-5', 'America/New_York', Date.UTC(2026, 2, friday, 0), 1)[0].slice(11, 13), '14');
  assert.equal(runs('0 9 * * 1-5', 'America/New_York', Date.UTC(2026, 2, friday, 0), 2)[1].slice(11, 13), '13');
});

test('Asia/Kolkata (UTC+05:30, no daylight saving) runs weekdays at 08:00 local, skipping the weekend', () => {
  // 2026-11-27 is a Friday.
  assert.deepEqual(runs('0 8 * * MON-FRI', 'Asia/Kolkata', '2026-11-26T12:00:00Z', 3), [27, 30, 31].map((day, index) =>
    iso(fixedTimeRun('Asia/Kolkata', 2026, index === 2 ? 12 : 11, index === 2 ? 1 : day, 8, 0))));
});

test('standard syntax: ranges, lists, steps, names, Sunday as 0 or 7, and day-of-month OR day-of-week', () => {
  assert.deepEqual(runs('0 0 * * 0', 'UTC', '2026-11-24T00:00:00Z', 1), runs('0 0 * * 7', 'UTC', '2026-11-24T00:00:00Z', 1));
  assert.deepEqual(runs('0 0 * * SUN', 'UTC', '2026-11-24T00:00:00Z', 1), ['2026-11-29T00:00:00.000Z']);
  assert.deepEqual(runs('15,45 9-10/1 * JAN-MAR *', 'UTC', '2026-11-24T00:00:00Z', 3), ['2027-01-01T09:15:00.000Z', '2027-01-01T09:45:00.000Z', '2027-01-01T10:15:00.000Z']);
  // The 1st of the month, or any Monday.
  assert.deepEqual(runs('0 0 1 * 1', 'UTC', '2026-11-24T00:00:00Z', 3), ['2026-11-30T00:00:00.000Z', '2026-12-01T00:00:00.000Z', '2026-12-07T00:00:00.000Z']);
});

test('refuses what is not a standard five-field expression, saying why', () => {
  const refusals: Array<[string, RegExp]> = [
    ['* * * * * *', /expected 5 fields/], ['* * * *', /expected 5 fields/], ['', /expected 5 fields/], ['@daily', /expected 5 fields/],
    ['61 * * * *', /minute/i], ['0 24 * * *', /hour/i], ['0 0 0 * *', /day/i], ['0 0 * 13 *', /month/i], ['0 0 * * 8', /week/i],
    ['0 0 L * *', /day of month field "L" is not standard/], ['0 0 * * MON#2', /day of week field "MON#2"/], ['0 0 ? * *', /not standard/],
    ['0 0 1W * *', /not standard/], ['5/5 * * * *', /step/i], ['0 0 31 2 *', /never runs/], ['a b c d e', /not standard/],
  ];
  for (const [expression, message] of refusals) {
    assert.throws(() => compileCron(expression, 'UTC'), (error: unknown) => error instanceof CronError && message.test(error.message), expression);
  }
});

test('time zones: IANA names and their aliases, in any case; fixed offsets and anything else are not zones', () => {
  for (const name of ['Europe/Berlin', 'europe/berlin', 'Asia/Kolkata', 'UTC', 'US/Eastern', 'Etc/GMT+5']) assert.equal(isTimezone(name), true, name);
  for (const name of ['Mars/Olympus', '', ' ', 'Berlin', '+02:00', '-0500']) assert.equal(isTimezone(name), false, name);
});

test('the shortest gap between runs, measured over a week and more', () => {
  const from = new Date('2026-11-24T00:00:00Z');
  assert.equal(shortestGapMinutes(compileCron('*/5 * * * *', 'UTC'), from), 5);
  assert.equal(shortestGapMinutes(compileCron('0 * * * *', 'UTC'), from), 60);
  assert.equal(shortestGapMinutes(compileCron('0 9,10 * * *', 'UTC'), from), 60);
  // 09:00 and 09:30 on Mondays only: the short gap comes once a week.
  assert.equal(shortestGapMinutes(compileCron('0,30 9 * * 1', 'UTC'), new Date('2026-11-24T09:15:00Z')), 30);
  // The 1st and 2nd of the month: a day apart, even though the next two runs are a week away.
  assert.equal(shortestGapMinutes(compileCron('0 0 1,2 * *', 'UTC'), from), 24 * 60);
  // Strictly after midnight of 2026-11-24: 2027-11-24, then 2028-11-24 (a leap year between).
  assert.equal(shortestGapMinutes(compileCron('0 0 24 11 *', 'UTC'), from), 366 * 24 * 60);
});

test('catching up: the latest occurrence within the window runs, the rest are skipped with their reason', () => {
  const cron = compileCron('* * * * *', 'UTC');
  const plan = planOccurrences(cron, new Date('2026-11-24T10:00:00Z'), new Date('2026-11-24T10:05:20Z'), 150_000);
  assert.equal(plan.run?.toISOString(), '2026-11-24T10:05:00.000Z');
  assert.deepEqual(plan.skipped.map((entry) => [entry.at.toISOString().slice(11, 16), entry.reason.split(':')[0].split(' ')[0]]),
    [['10:00', 'missed'], ['10:01', 'missed'], ['10:02', 'missed'], ['10:03', 'superseded'], ['10:04', 'superseded']]);
  assert.equal(plan.next?.toISOString(), '2026-11-24T10:06:00.000Z');
});

test('catching up: nothing runs when even the latest occurrence is beyond the window', () => {
  const plan = planOccurrences(compileCron('0 * * * *', 'UTC'), new Date('2026-11-24T08:00:00Z'), new Date('2026-11-24T09:30:00Z'), 300_000);
  assert.equal(plan.run, undefined);
  assert.deepEqual(plan.skipped.map((entry) => entry.at.toISOString()), ['2026-11-24T08:00:00.000Z', '2026-11-24T09:00:00.000Z']);
  assert.match(plan.skipped[0].reason, /^missed: .*300 s/);
  assert.equal(plan.next?.toISOString(), '2026-11-24T10:00:00.000Z');
});

test('on time: the due occurrence runs and nothing is skipped', () => {
  const plan = planOccurrences(compileCron('0 * * * *', 'UTC'), new Date('2026-11-24T08:00:00Z'), new Date('2026-11-24T08:00:00.400Z'), 300_000);
  assert.equal(plan.run?.toISOString(), '2026-11-24T08:00:00.000Z');
  assert.deepEqual(plan.skipped, []);
});
