import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type SubmitBody, type TaskList } from '../api/client';
import { getOnce, takeArrived } from '../api/prefetch';
import { formatAge, formatCost, shortEnum } from '../format';
import { BASE, navigate, onLinkClick } from '../router';

const STATUSES = ['', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT'];
const POLL_MS = 2000;
/** The list's first request, which the app starts beside the sign-in check. */
export const FIRST_TASK_PAGE = '/api/v1/tasks?limit=50';

export function TaskListScreen() {
  return (
    <>
      <h1>Tasks</h1>
      <div class="columns">
        <SubmitForm />
        <TaskTable />
      </div>
    </>
  );
}

/** Polls the list: new tasks and status changes show without a reload. */
function TaskTable() {
  const [status, setStatus] = useState('');
  // The first page, when it arrived before this mounted (main.tsx asks for it early), is drawn at once.
  const [list, setList] = useState<TaskList | null>(() => takeArrived<TaskList>(FIRST_TASK_PAGE) ?? null);
  const [error, setError] = useState('');
  /** Drawn from the early answer: the first poll waits its turn instead of asking again at once. */
  const drawnEarly = useRef(list !== null);

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      try {
        const query = new URLSearchParams({ limit: '50' });
        if (status) query.set('status', status);
        const answer = await getOnce<TaskList>(`/api/v1/tasks?${query}`);
        if (!stopped) { setList(answer); setError(''); }
      } catch (failure) {
        if (!stopped) setError((failure as Error).message);
      }
      if (!stopped) timer = setTimeout(load, document.hidden ? POLL_MS * 5 : POLL_MS);
    };
    if (drawnEarly.current) timer = setTimeout(load, POLL_MS);
    else void load();
    drawnEarly.current = false;
    return () => { stopped = true; clearTimeout(timer); };
  }, [status]);

  return (
    <section class="card grow" aria-labelledby="task-list-title">
      <div class="row spread">
        <h2 id="task-list-title">Recent tasks</h2>
        <label class="inline">Status
          <select value={status} onChange={(e) => setStatus((e.currentTarget as HTMLSelectElement).value)}>
            {STATUSES.map((value) => <option value={value}>{value ? value.toLowerCase() : 'any'}</option>)}
          </select>
        </label>
      </div>
      {error && <p role="alert" class="error">{error}</p>}
      {!list && !error && <p role="status">Loading tasks…</p>}
      {list && list.tasks.length === 0 && <p>No tasks yet.</p>}
      {list && list.tasks.length > 0 && (
        <div class="table-wrap">
          <table data-testid="task-table">
            <thead><tr><th scope="col">Query</th><th scope="col">Status</th><th scope="col">Mode</th><th scope="col">Cost</th><th scope="col">Age</th></tr></thead>
            <tbody>
              {list.tasks.map((task) => (
                <tr key={task.task_id} data-task-id={task.task_id}>
                  <td class="query"><a href={`${BASE}/tasks/${task.task_id}`} onClick={(e) => onLinkClick(e, `/tasks/${task.task_id}`)}>{task.query || '(no query)'}</a></td>
                  <td><span class={`badge ${shortEnum(task.status)}`}>{shortEnum(task.status)}</span></td>
                  <td>{shortEnum(task.mode)}</td>
                  <td>{formatCost(task.total_token_usage?.cost_usd)}</td>
                  <td><time dateTime={task.created_at}>{formatAge(task.created_at)}</time></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function SubmitForm() {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const body: SubmitBody = { query: text('query') };
    if (text('mode')) body.mode = text('mode') as SubmitBody['mode'];
    if (text('research_strategy')) body.research_strategy = text('research_strategy') as SubmitBody['research_strategy'];
    if (text('session_id')) body.session_id = text('session_id');
    const context: NonNullable<SubmitBody['context']> = {};
    if (text('role')) context.role = text('role');
    if (text('template')) context.template = text('template');
    if (text('token_budget')) context.token_budget = Number(text('token_budget'));
    if (Object.keys(context).length > 0) body.context = context;
    setBusy(true);
    setError('');
    try {
      const created = await api<{ task_id: string }>('POST', '/api/v1/tasks', body);
      navigate(`/tasks/${created.task_id}`);
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="card stack" onSubmit={submit} aria-labelledby="submit-title">
      <h2 id="submit-title">New task</h2>
      {error && <p role="alert" class="error">{error}</p>}
      <label>Query<textarea name="query" rows={4} required /></label>
      <label>Mode
        <select name="mode">
          <option value="">automatic</option>
          <option value="simple">simple</option>
          <option value="standard">standard</option>
          <option value="complex">complex</option>
          <option value="supervisor">supervisor</option>
        </select>
      </label>
      <label>Research strategy
        <select name="research_strategy">
          <option value="">none</option>
          <option value="quick">quick</option>
          <option value="standard">standard</option>
          <option value="deep">deep</option>
          <option value="academic">academic</option>
        </select>
      </label>
      <label>Role (optional)<input name="role" autocomplete="off" /></label>
      <label>Template (optional)<input name="template" autocomplete="off" /></label>
      <label>Token budget (optional)<input name="token_budget" type="number" min={1} /></label>
      <label>Session (optional)<input name="session_id" autocomplete="off" /></label>
      <button type="submit" disabled={busy}>Submit</button>
    </form>
  );
}
