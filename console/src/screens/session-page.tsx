import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, download, type SessionBudget, type SessionDetail, type SessionFiles, type SessionTurns } from '../api/client';
import { formatAge, formatCost } from '../format';
import { renderMarkdown } from '../markdown';
import { BASE, navigate, onLinkClick } from '../router';

type Turn = SessionTurns['turns'][number];

/** One session: its title (rename, delete), token budget, turns with their answers, and workspace files. */
export function SessionPage({ sessionId }: { sessionId: string }) {
  const base = `/api/v1/sessions/${encodeURIComponent(sessionId)}`;
  const [session, setSession] = useState<SessionDetail | null>(null);
  const [missing, setMissing] = useState(false);
  const [error, setError] = useState('');
  const load = () => api<SessionDetail>('GET', base).then(setSession, (failure: Error) => {
    if (failure instanceof ApiError && failure.status === 404) setMissing(true);
    else setError(failure.message);
  });
  useEffect(() => { void load(); }, [sessionId]);

  if (missing) return <><h1>Session not found</h1><p>There is no session with this id that you can see.</p></>;
  if (!session) return error ? <p role="alert" class="error">{error}</p> : <p role="status">Loading session…</p>;
  return (
    <>
      <p><a href={`${BASE}/sessions`} onClick={(e) => onLinkClick(e, '/sessions')}>← All sessions</a></p>
      <h1 class="task-title">{session.title || 'Untitled session'}</h1>
      <div class="columns">
        <div class="side">
          <TitleAndDelete session={session} base={base} onChanged={load} />
          <BudgetCard session={session} base={base} onChanged={load} />
        </div>
        <div class="grow">
          <FilesCard base={base} />
          <TurnsCard base={base} />
        </div>
      </div>
    </>
  );
}

function TitleAndDelete({ session, base, onChanged }: { session: SessionDetail; base: string; onChanged: () => Promise<unknown> }) {
  const [message, setMessage] = useState('');
  const [confirming, setConfirming] = useState(false);
  const rename = async (event: Event) => {
    event.preventDefault();
    const title = String(new FormData(event.currentTarget as HTMLFormElement).get('title') ?? '').trim();
    try {
      await api('PATCH', base, { title });
      setMessage('Renamed.');
      await onChanged();
    } catch (failure) {
      setMessage((failure as Error).message);
    }
  };
  const remove = async () => {
    try {
      await api('DELETE', base);
      navigate('/sessions');
    } catch (failure) {
      setMessage((failure as Error).message);
    }
  };
  return (
    <section class="card stack" aria-labelledby="session-title-heading">
      <h2 id="session-title-heading">Title</h2>
      <form class="stack" onSubmit={rename}>
        <label>Session title<input name="title" defaultValue={session.title} maxLength={60} required /></label>
        <button type="submit">Rename</button>
      </form>
      <p role="status">{message}</p>
      <p class="hint">{session.task_count} tasks · {formatCost(session.total_cost_usd)} · last active {formatAge(session.last_activity_at)}</p>
      {confirming
        ? <div class="row wrap"><button type="button" class="danger" onClick={remove}>Really delete this session</button><button type="button" onClick={() => setConfirming(false)}>Keep it</button></div>
        : <button type="button" class="danger" onClick={() => setConfirming(true)}>Delete session</button>}
    </section>
  );
}

function BudgetCard({ session, base, onChanged }: { session: SessionDetail; base: string; onChanged: () => Promise<unknown> }) {
  const [message, setMessage] = useState('');
  const save = async (event: Event) => {
    event.preventDefault();
    const tokenBudget = Number(new FormData(event.currentTarget as HTMLFormElement).get('token_budget'));
    try {
      const answer = await api<SessionBudget>('PUT', `${base}/budget`, { token_budget: tokenBudget });
      setMessage(`Budget set to ${answer.token_budget} tokens.`);
      await onChanged();
    } catch (failure) {
      setMessage((failure as Error).message);
    }
  };
  return (
    <section class="card stack" aria-labelledby="budget-heading">
      <h2 id="budget-heading">Token budget</h2>
      <p data-testid="session-budget">{session.tokens_used} of {session.token_budget} tokens used{session.is_near_budget_limit ? ' (near the limit)' : ''}</p>
      <form class="stack" onSubmit={save}>
        <label>New budget (tokens)<input name="token_budget" type="number" min={1} step={1} defaultValue={String(session.token_budget)} required /></label>
        <button type="submit">Set budget</button>
      </form>
      <p role="status">{message}</p>
    </section>
  );
}

function FilesCard({ base }: { base: string }) {
  const [files, setFiles] = useState<SessionFiles | null>(null);
  const [error, setError] = useState('');
  useEffect(() => { api<SessionFiles>('GET', `${base}/files?limit=200`).then(setFiles, (failure: Error) => setError(failure.message)); }, [base]);
  const fetchFile = (path: string) => {
    const encoded = path.split('/').map(encodeURIComponent).join('/');
    download(`${base}/files/${encoded}`, path.split('/').pop() ?? path).catch((failure: Error) => setError(failure.message));
  };
  return (
    <section class="card" aria-labelledby="files-heading">
      <h2 id="files-heading">Workspace files</h2>
      {error && <p role="alert" class="error">{error}</p>}
      {files && files.files.length === 0 && <p>The workspace is empty.</p>}
      {files && files.files.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead><tr><th scope="col">Path</th><th scope="col">Size</th><th scope="col">Changed</th><th scope="col">Download</th></tr></thead>
            <tbody>
              {files.files.map((file) => (
                <tr key={file.path} data-file-path={file.path}>
                  <td class="query">{file.path}</td>
                  <td>{file.size} B</td>
                  <td>{formatAge(file.updated_at)}</td>
                  <td><button type="button" onClick={() => fetchFile(file.path)} aria-label={`Download ${file.path}`}>Download</button></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function TurnsCard({ base }: { base: string }) {
  const [turns, setTurns] = useState<SessionTurns | null>(null);
  const [error, setError] = useState('');
  useEffect(() => { api<SessionTurns>('GET', `${base}/events?limit=50`).then(setTurns, (failure: Error) => setError(failure.message)); }, [base]);
  return (
    <section class="card" aria-labelledby="turns-heading">
      <h2 id="turns-heading">Turns{turns ? ` (${turns.count})` : ''}</h2>
      {error && <p role="alert" class="error">{error}</p>}
      {turns && turns.turns.length === 0 && <p>No turns yet.</p>}
      <ol class="turns">{turns?.turns.map((turn) => <TurnItem key={turn.task_id} turn={turn} />)}</ol>
    </section>
  );
}

function TurnItem({ turn }: { turn: Turn }) {
  const page = `/tasks/${turn.task_id}`;
  return (
    <li data-turn-task={turn.task_id}>
      <p><strong>You:</strong> <a href={`${BASE}${page}`} onClick={(e) => onLinkClick(e, page)}>{turn.user_query}</a></p>
      <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(turn.final_output || '') }} />
      <p class="hint">{turn.metadata.tokens_used} tokens · {Math.round(turn.metadata.execution_time_ms / 100) / 10} s · {turn.metadata.agents_involved.length} agents · <time dateTime={turn.timestamp}>{formatAge(turn.timestamp)}</time></p>
    </li>
  );
}
