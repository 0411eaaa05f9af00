import { useEffect, useState } from 'preact/hooks';
import { api, type Schedule, type ScheduleBody, type ScheduleCreated, type ScheduleList, type ScheduleRuns } from '../api/client';
import { formatCost, shortEnum } from '../format';
import { BASE, onLinkClick } from '../router';
import { CronPreviewList, formatInZone } from './cron-preview';

const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
const ZONES = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];

export function SchedulesScreen() {
  const [list, setList] = useState<ScheduleList | null>(null);
  const [error, setError] = useState('');
  const load = () => api<ScheduleList>('GET', '/api/v1/schedules?page_size=100').then((answer) => { setList(answer); setError(''); }, (failure: Error) => setError(failure.message));
  useEffect(() => { void load(); }, []);
  return (
    <>
      <h1>Schedules</h1>
      <div class="columns">
        <CreateSchedule onCreated={load} />
        <section class="card grow" aria-labelledby="schedule-list-title">
          <h2 id="schedule-list-title">Your schedules</h2>
          {error && <p role="alert" class="error">{error}</p>}
          {!list && !error && <p role="status">Loading schedules…</p>}
          {list && list.schedules.length === 0 && <p>No schedules yet.</p>}
          {list?.schedules.map((schedule) => <ScheduleItem key={schedule.id} schedule={schedule} onChanged={load} />)}
        </section>
      </div>
    </>
  );
}

function CreateSchedule({ onCreated }: { onCreated: () => Promise<unknown> }) {
  const [expression, setExpression] = useState('0 9 * * 1-5');
  const [timezone, setTimezone] = useState(browserZone);
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');
  const submit = async (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const body: ScheduleBody = { name: text('name'), cron_expression: expression.trim(), timezone, task_query: text('task_query') };
    if (text('description')) body.description = text('description');
    if (text('budget')) body.max_budget_per_run_usd = Number(text('budget'));
    setError('');
    try {
      const created = await api<ScheduleCreated>('POST', '/api/v1/schedules', body);
      setMessage(`Created; first run ${created.next_run_at ? formatInZone(new Date(created.next_run_at), timezone) : 'not planned'}.`);
      formElement.reset();
      await onCreated();
    } catch (failure) {
      setError((failure as Error).message);
    }
  };
  return (
    <form class="card stack" onSubmit={submit} aria-labelledby="new-schedule-title">
      <h2 id="new-schedule-title">New schedule</h2>
      {error && <p role="alert" class="error">{error}</p>}
      <label>Name<input name="name" maxLength={255} required autocomplete="off" /></label>
      <label>Query to run<textarea name="task_query" rows={3} required /></label>
      <label>Cron expression
        <input name="cron_expression" value={expression} onInput={(e) => setExpression((e.currentTarget as HTMLInputElement).value)}
          required autocomplete="off" spellcheck={false} aria-describedby="cron-help cron-preview" />
      </label>
      <p class="hint" id="cron-help">Five fields: minute hour day-of-month month day-of-week, e.g. <code>0 9 * * 1-5</code> for 09:00 on weekdays.</p>
      <label>Time zone
        <input name="timezone" value={timezone} list="time-zones" onInput={(e) => setTimezone((e.currentTarget as HTMLInputElement).value.trim())} required autocomplete="off" />
      </label>
      <datalist id="time-zones">{ZONES.map((zone) => <option key={zone} value={zone} />)}</datalist>
      <CronPreviewList expression={expression} timezone={timezone} />
      <label>Description (optional)<input name="description" autocomplete="off" /></label>
      <label>Budget per run, USD (optional)<input name="budget" type="number" min={0} step="any" /></label>
      <button type="submit">Create schedule</button>
      <p role="status">{message}</p>
    </form>
  );
}

function ScheduleItem({ schedule, onChanged }: { schedule: Schedule; onChanged: () => Promise<unknown> }) {
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState('');
  const base = `/api/v1/schedules/${encodeURIComponent(schedule.id)}`;
  const act = async (method: 'POST' | 'DELETE', path: string, body?: unknown) => {
    try {
      await api(method, path, body);
      setError('');
      await onChanged();
    } catch (failure) {
      setError((failure as Error).message);
    }
  };
  const paused = schedule.status === 'PAUSED';
  return (
    <article class="schedule" data-schedule-id={schedule.id} aria-labelledby={`schedule-${schedule.id}`}>
      <div class="row spread wrap">
        <h3 id={`schedule-${schedule.id}`}>{schedule.name}</h3>
        <span class={`badge ${paused ? 'paused' : 'running'}`} data-testid="schedule-status">{paused ? 'paused' : 'active'}</span>
      </div>
      <p><code>{schedule.cron_expression}</code> in {schedule.timezone} · next run {schedule.next_run_at ? formatInZone(new Date(schedule.next_run_at), schedule.timezone) : '—'}</p>
      <p class="hint">{schedule.task_query}</p>
      <p class="hint">{schedule.total_runs} runs: {schedule.successful_runs} completed, {schedule.failed_runs} failed · up to {formatCost(schedule.max_budget_per_run_usd)} a run</p>
      {error && <p role="alert" class="error">{error}</p>}
      <div class="row wrap">
        {paused
          ? <button type="button" onClick={() => act('POST', `${base}/resume`, {})} aria-label={`Resume ${schedule.name}`}>Resume</button>
          : <button type="button" onClick={() => act('POST', `${base}/pause`, {})} aria-label={`Pause ${schedule.name}`}>Pause</button>}
        {confirming
          ? <button type="button" class="danger" onClick={() => act('DELETE', base)}>Really delete</button>
          : <button type="button" class="danger" onClick={() => setConfirming(true)} aria-label={`Delete ${schedule.name}`}>Delete</button>}
      </div>
      <details class="runs">
        <summary>Runs</summary>
        <Runs base={base} />
      </details>
    </article>
  );
}

/** Mounted only when the details open: the runs are asked for then. */
function Runs({ base }: { base: string }) {
  const [runs, setRuns] = useState<ScheduleRuns | null>(null);
  const [error, setError] = useState('');
  useEffect(() => { api<ScheduleRuns>('GET', `${base}/runs?page_size=20`).then(setRuns, (failure: Error) => setError(failure.message)); }, [base]);
  if (error) return <p role="alert" class="error">{error}</p>;
  if (!runs) return <p role="status">Loading runs…</p>;
  if (runs.runs.length === 0) return <p>No runs yet.</p>;
  return (
    <div class="table-wrap">
      <table>
        <thead><tr><th scope="col">For</th><th scope="col">Status</th><th scope="col">Tokens</th><th scope="col">Cost</th></tr></thead>
        <tbody>
          {runs.runs.map((run) => (
            <tr key={`${run.scheduled_for}-${run.workflow_id}`}>
              <td>{run.workflow_id
                ? <a href={`${BASE}/tasks/${run.workflow_id}`} onClick={(e) => onLinkClick(e, `/tasks/${run.workflow_id}`)}><time dateTime={run.scheduled_for}>{new Date(run.scheduled_for).toLocaleString()}</time></a>
                : <time dateTime={run.scheduled_for}>{new Date(run.scheduled_for).toLocaleString()}</time>}</td>
              <td>{shortEnum(run.status)}{run.error_message ? `: ${run.error_message}` : ''}</td>
              <td>{run.total_tokens}</td>
              <td>{formatCost(run.total_cost_usd)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
