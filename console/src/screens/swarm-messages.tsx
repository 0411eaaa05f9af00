import { useState } from 'preact/hooks';
import { api } from '../api/client';
import type { TaskEvent } from '../api/event-stream';
import { SWARM_LEAD } from '../plan/swarm-graph';

/**
 * A message to a running swarm's lead (POST /api/v1/swarm/{id}/message), read at its next decision, and the
 * conversation so far: what the owner sent (MESSAGE_RECEIVED) and the lead's interim replies.
 */
export function SwarmMessages({ taskId, events, running }: { taskId: string; events: TaskEvent[]; running: boolean }) {
  const [draft, setDraft] = useState('');
  const [status, setStatus] = useState('');
  const [sending, setSending] = useState(false);
  const conversation = events.filter((event) => (event.type === 'MESSAGE_RECEIVED' && event.agent_id === 'user')
    || (event.type === 'LLM_OUTPUT' && event.agent_id === SWARM_LEAD && event.payload?.interim === true));
  const send = async (event: Event) => {
    event.preventDefault();
    setSending(true);
    try {
      await api('POST', `/api/v1/swarm/${encodeURIComponent(taskId)}/message`, { message: draft });
      setDraft('');
      setStatus('Sent: the lead reads it at its next decision.');
    } catch (failure) {
      setStatus((failure as Error).message);
    }
    setSending(false);
  };
  if (!running && conversation.length === 0) return null;
  return (
    <section class="card" aria-labelledby="swarm-messages-title" data-testid="swarm-messages">
      <h2 id="swarm-messages-title">Messages to the lead</h2>
      {conversation.length > 0 && (
        <ol class="conversation">
          {conversation.map((item) => (
            <li key={item.seq} class={`turn ${item.agent_id === 'user' ? 'user' : 'assistant'}`}>
              <strong>{item.agent_id === 'user' ? 'You' : 'Lead'}</strong> <p>{item.message}</p>
            </li>
          ))}
        </ol>
      )}
      {running && (
        <form class="stack" onSubmit={send}>
          <label>Message for the lead<textarea name="message" rows={2} value={draft} onInput={(event) => setDraft((event.currentTarget as HTMLTextAreaElement).value)} /></label>
          <div class="row"><button type="submit" disabled={sending || draft.trim() === ''}>Send to the lead</button></div>
        </form>
      )}
      <p role="status" class="muted">{status}</p>
    </section>
  );
}
