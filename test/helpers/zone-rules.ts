/**
 * Expected schedule times worked out from the published daylight-saving rules of three zones, with neither
 * Intl's time-zone data nor a cron library: the tests compare the server's cron evaluation against these.
 */
const HOUR_MS = 3600_000;

interface ZoneRule {
  standardOffsetMs: number;
  /** The UTC instants summer time starts and ends in `year` (none for a zone without it). */
  summer?: (year: number) => { startsMs: number; endsMs: number };
}

/** The day of month of the `nth` weekday (Sunday 0) of a month; nth = -1 for the last. */
export function nthWeekday(year: number, month: number, weekday: number, nth: number): number {
  if (nth > 0) {
    const first = new Date(Date.UTC(year, month - 1, 1)).getUTCDay();
    return 1 + ((weekday - first + 7) % 7) + (nth - 1) * 7;
  }
  const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const last = new Date(Date.UTC(year, month - 1, lastDay)).getUTCDay();
  return lastDay - ((last - weekday + 7) % 7);
}

export const ZONES: Record<string, ZoneRule> = {
  // EU: last Sunday of March 01:00 UTC to last Sunday of October 01:00 UTC.
  'Europe/Berlin': {
    standardOffsetMs: HOUR_MS,
    summer: (year) => ({
      startsMs: Date.UTC(year, 2, nthWeekday(year, 3, 0, -1), 1),
      endsMs: Date.UTC(year, 9, nthWeekday(year, 10, 0, -1), 1),
    }),
  },
  // US: second Sunday of March 02:00 local standard time to first Sunday of November 02:00 local summer time.
  'America/New_York': {
    standardOffsetMs: -5 * HOUR_MS,
    summer: (year) => ({
      startsMs: Date.UTC(year, 2, nthWeekday(year, 3, 0, 2), 7),
      endsMs: Date.UTC(year, 10, nthWeekday(year, 11, 0, 1), 6),
    }),
  },
  'Asia/Kolkata': { standardOffsetMs: 5.5 * HOUR_MS },
};

export function offsetAt(zone: string, utcMs: number): number {
  const rule = ZONES[zone];
  const year = new Date(utcMs).getUTCFullYear();
  const summer = rule.summer?.(year);
  return summer && utcMs >= summer.startsMs && utcMs < summer.endsMs ? rule.standardOffsetMs + HOUR_MS : rule.standardOffsetMs;
}

/**
 * The instant a job set for this local wall time runs, by the Vixie cron rule for a fixed-time job: a time
 * that does not exist (spring forward) runs at the first instant after the gap, a repeated one (autumn) at its
 * first occurrence.
 */
export function fixedTimeRun(zone: string, year: number, month: number, day: number, hour: number, minute: number): number {
  // In the gap: summer time began at its start instant.
  return wallTimeOccurrences(zone, year, month, day, hour, minute)[0] ?? ZONES[zone].summer!(year).startsMs;
}

/** Every instant a local wall time occurs at (none in a gap, two in a repeated hour): the times an interval job runs. */
export function wallTimeOccurrences(zone: string, year: number, month: number, day: number, hour: number, minute: number): number[] {
  const wallMs = Date.UTC(year, month - 1, day, hour, minute);
  const rule = ZONES[zone];
  return [rule.standardOffsetMs + HOUR_MS, rule.standardOffsetMs]
    .map((offset) => wallMs - offset)
    .filter((utcMs) => offsetAt(zone, utcMs) === wallMs - utcMs)
    .sort((left, right) => left - right)
    .filter((utcMs, index, all) => all.indexOf(utcMs) === index);
}
