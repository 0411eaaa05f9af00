// The server's own cron rules (five standard fields, croner with the same options), so the preview shows the
// runs the scheduler will start, and refuses what the server would refuse, with the same message.
import { compileCron, isTimezone } from '../../../src/schedules/cron-times';

const PREVIEW_RUNS = 5;

export type CronPreview = { ok: true; runs: Date[] } | { ok: false; problem: string };

export function previewRuns(expression: string, timezone: string, from = new Date()): CronPreview {
  if (!isTimezone(timezone)) return { ok: false, problem: `"${timezone}" is not an IANA time zone` };
  try {
    const cron = compileCron(expression, timezone);
    const runs: Date[] = [];
    for (let at = cron.nextRun(from); at && runs.length < PREVIEW_RUNS; at = cron.nextRun(at)) runs.push(at);
    return { ok: true, runs };
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
}

/** A run's wall-clock time in the schedule's zone, with the zone's abbreviation (daylight saving shows). */
export function formatInZone(at: Date, timezone: string): string {
  return new Intl.DateTimeFormat('en-GB', {
    timeZone: timezone, weekday: 'short', year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short',
  }).format(at);
}

export function CronPreviewList({ expression, timezone }: { expression: string; timezone: string }) {
  if (!expression.trim()) return <p class="hint" id="cron-preview">Enter a cron expression to see its next runs.</p>;
  const preview = previewRuns(expression, timezone);
  if (!preview.ok) return <p class="error" id="cron-preview" data-testid="cron-problem">{preview.problem}</p>;
  return (
    <div id="cron-preview">
      <p class="hint">Next runs in {timezone}:</p>
      <ol class="plan" data-testid="cron-preview" aria-live="polite">
        {preview.runs.map((at) => <li key={at.toISOString()}><time dateTime={at.toISOString()}>{formatInZone(at, timezone)}</time></li>)}
      </ol>
    </div>
  );
}
