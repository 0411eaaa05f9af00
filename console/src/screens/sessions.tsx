import { useEffect, useState } from 'preact/hooks';
import { api, type SessionList } from '../api/client';
import { formatAge, formatCost } from '../format';
import { BASE, onLinkClick } from '../router';

type Session = SessionList['sessions'][number];

export function SessionsScreen() {
  const [list, setList] = useState<SessionList | null>(null);
  const [error, setError] = useState('');
  const load = () => api<SessionList>('GET', '/api/v1/sessions?limit=50').then(setList, (failure) => setError((failure as Error).message));
  useEffect(() => { void load(); }, []);
  const sessions = list?.sessions ?? [];
  return (
    <>
      <h1>Sessions</h1>
      {error && <p role="alert" class="error">{error}</p>}
      {list && sessions.length === 0 && <p>No sessions yet.</p>}
      {sessions.length > 0 && (
        <div class="card table-wrap">
          <table>
            <thead><tr><th scope="col">Title</th><th scope="col">Tasks</th><th scope="col">Tokens used of budget</th><th scope="col">Cost</th><th scope="col">Last activity</th><th scope="col">Actions</th></tr></thead>
            <tbody>{sessions.map((session) => <SessionRow key={session.session_id} session={session} onChanged={load} />)}</tbody>
          </table>
        </div>
      )}
    </>
  );
}

function SessionRow({ session, onChanged }: { session: Session; onChanged: () => Promise<unknown> }) {
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [message, setMessage] = useState('');
  const title = session.title || session.latest_task_query || session.session_id;
  const page = `/sessions/${encodeURIComponent(session.session_id)}`;
  const act = async (method: 'PATCH' | 'DELETE', body?: unknown) => {
    try {
      await api(method, `/api/v1/sessions/${encodeURIComponent(session.session_id)}`, body);
      setEditing(false);
      setConfirming(false);
      await onChanged();
    } catch (failure) {
      setMessage((failure as Error).message);
    }
  };
  const rename = (event: Event) => {
    event.preventDefault();
    void act('PATCH', { title: String(new FormData(event.currentTarget as HTMLFormElement).get('title') ?? '').trim() });
  };
  return (
    <tr data-session-id={session.session_id}>
      <td>
        {editing
          ? <form class="row" onSubmit={rename}><label class="inline">New title<input name="title" defaultValue={title} maxLength={60} required /></label><button type="submit">Save</button></form>
          : <a href={`${BASE}${page}`} onClick={(e) => onLinkClick(e, page)}>{title}</a>}
        {message && <p role="alert" class="error">{message}</p>}
      </td>
      <td>{session.task_count}</td>
      <td>{session.tokens_used} of {session.token_budget}</td>
      <td>{formatCost(session.total_cost_usd)}</td>
      <td>{session.last_activity_at ? formatAge(session.last_activity_at) : '—'}</td>
      <td class="row">
        {!editing && <button type="button" onClick={() => setEditing(true)} aria-label={`Rename ${title}`}>Rename</button>}
        {confirming
          ? <button type="button" class="danger" onClick={() => act('DELETE')}>Really delete</button>
          : <button type="button" class="danger" onClick={() => setConfirming(true)} aria-label={`Delete ${title}`}>Delete</button>}
      </td>
    </tr>
  );
}
