import { useEffect, useState } from 'preact/hooks';
import { api, type SessionList } from '../api/client';
import { formatAge, formatCost } from '../format';

export function SessionsScreen() {
  const [list, setList] = useState<SessionList | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    api<SessionList>('GET', '/api/v1/sessions?limit=50').then(setList, (failure) => setError((failure as Error).message));
  }, []);
  const sessions = (list as { sessions?: Array<Record<string, unknown>> } | null)?.sessions ?? [];
  return (
    <>
      <h1>Sessions</h1>
      {error && <p role="alert" class="error">{error}</p>}
      {list && sessions.length === 0 && <p>No sessions yet.</p>}
      {sessions.length > 0 && (
        <div class="card table-wrap">
          <table>
            <thead><tr><th scope="col">Title</th><th scope="col">Tasks</th><th scope="col">Tokens</th><th scope="col">Cost</th><th scope="col">Last activity</th></tr></thead>
            <tbody>
              {sessions.map((session) => (
                <tr key={String(session.session_id)}>
                  <td>{String(session.title || session.latest_task_query || session.session_id)}</td>
                  <td>{String(session.task_count ?? 0)}</td>
                  <td>{String(session.tokens_used ?? session.total_tokens_used ?? 0)}</td>
                  <td>{formatCost(session.total_cost_usd as number | undefined)}</td>
                  <td>{session.last_activity_at ? formatAge(String(session.last_activity_at)) : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
