import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError, type Answer, type TaskStatus } from '../api/client';
import { followTask, type TaskEvent } from '../api/event-stream';
import { formatCost, shortEnum, TERMINAL_STATUSES } from '../format';
import { renderMarkdown, type Citation } from '../markdown';
import { BASE, onLinkClick } from '../router';
import { AgentPanels } from './agent-panels';
import { PlanReview } from './plan-review';
import { PlanView } from './plan-view';
import { StreamedAnswer } from './streamed-answer';
import { SwarmMessages } from './swarm-messages';

type ControlState = Answer<'/api/v1/tasks/{id}/control-state', 'get'>;
type Timeline = Answer<'/api/v1/tasks/{id}/timeline', 'get'>;
type StreamState = 'connecting' | 'live' | 'reconnecting' | 'ended' | 'not found';
interface ModelUsage { model: string; provider?: string; executions?: number; tokens?: number; cost_usd?: number }

export function TaskPage({ taskId }: { taskId: string }) {
  const [task, setTask] = useState<TaskStatus | null>(null);
  const [control, setControl] = useState<ControlState | null>(null);
  const [missing, setMissing] = useState(false);
  const [error, setError] = useState('');
  const [events, setEvents] = useState<TaskEvent[]>([]);
  const [streamState, setStreamState] = useState<StreamState>('connecting');
  const [selectedAgent, setSelectedAgent] = useState<string | null>(null);
  const seen = useRef(new Set<number>());

  const refresh = async () => {
    try {
      const [status, state] = await Promise.all([
        api<TaskStatus>('GET', `/api/v1/tasks/${encodeURIComponent(taskId)}`),
        api<ControlState>('GET', `/api/v1/tasks/${encodeURIComponent(taskId)}/control-state`),
      ]);
      setTask(status);
      setControl(state);
      setError('');
    } catch (failure) {
      // Another tenant's task, a malformed id and a deleted task all read the same: not found.
      if (failure instanceof ApiError && (failure.status === 404 || failure.status === 400 || failure.status === 403)) setMissing(true);
      // Anything else (the server restarting, the network gone) is shown and tried again on the next poll.
      else setError((failure as Error).message);
    }
  };

  useEffect(() => { void refresh(); }, [taskId]);

  const terminal = task ? TERMINAL_STATUSES.has(shortEnum(task.status)) : false;
  useEffect(() => {
    if ((terminal && !error) || missing) return;
    const timer = setInterval(() => void refresh(), 3000);
    return () => clearInterval(timer);
  }, [terminal, missing, taskId, error !== '']);

  useEffect(() => {
    if (missing) return;
    // Events arrive by the hundred per second while an answer streams: they are drawn at most once a frame.
    let pending: TaskEvent[] = [];
    let frame = 0;
    const flush = () => {
      frame = 0;
      const batch = pending;
      pending = [];
      setEvents((previous) => previous.concat(batch));
    };
    const stop = followTask(taskId, {
      onEvent(event) {
        // A replay after a reconnect can overlap what was already shown: each seq is kept once.
        if (seen.current.has(event.seq)) return;
        seen.current.add(event.seq);
        pending.push(event);
        frame ||= requestAnimationFrame(flush);
        if (event.type.startsWith('WORKFLOW_')) void refresh();
      },
      onEnd() { void refresh(); },
      onState: setStreamState,
    });
    return () => { stop(); cancelAnimationFrame(frame); };
  }, [taskId, missing]);

  const facts = useMemo(() => task && { context: task.context ?? {}, status: shortEnum(task.status) }, [task?.status, task?.context]);

  if (missing) return <><h1>Task not found</h1><p>No task with this id is visible to you. <a href={`${BASE}/`} onClick={(e) => onLinkClick(e, '/')}>Back to tasks</a></p></>;
  if (!task || !facts) return error ? <p role="alert" class="error">{error}</p> : <p role="status">Loading task…</p>;

  return (
    <>
      <h1 class="task-title">{task.query || 'Task'}</h1>
      <div class="row wrap">
        <span class={`badge ${shortEnum(task.status)}`} data-testid="task-status">{shortEnum(task.status)}</span>
        {control?.is_paused && shortEnum(task.status) !== 'paused' && <span class="badge paused" data-testid="pause-state">pausing</span>}
        <span class="muted">stream: <span data-testid="stream-state">{streamState}</span></span>
        <span class="muted" data-testid="event-count" data-last-seq={events.length ? events[events.length - 1].seq : 0}>{events.length} events</span>
      </div>
      {error && <p role="alert" class="error">Lost touch with the gateway ({error}); retrying…</p>}
      <Controls taskId={taskId} terminal={terminal} paused={control?.is_paused ?? false} onChanged={refresh} />
      <div class="columns">
        <section class="card grow" aria-labelledby="answer-title">
          <h2 id="answer-title">Answer</h2>
          <AnswerView task={task} events={events} />
        </section>
        <UsageView task={task} />
      </div>
      {facts.context.force_research === true && <PlanReview taskId={taskId} events={events} />}
      {facts.context.force_swarm === true && <SwarmMessages taskId={taskId} events={events} running={!terminal} />}
      <PlanView events={events} task={facts} selected={selectedAgent} onSelect={setSelectedAgent} />
      <AgentPanels events={events} selected={selectedAgent} onSelect={setSelectedAgent} />
      <TimelineView taskId={taskId} status={task.status} />
    </>
  );
}

function Controls({ taskId, terminal, paused, onChanged }: { taskId: string; terminal: boolean; paused: boolean; onChanged: () => Promise<void> }) {
  const [message, setMessage] = useState('');
  const act = async (action: 'pause' | 'resume' | 'cancel') => {
    try {
      await api('POST', `/api/v1/tasks/${encodeURIComponent(taskId)}/${action}`, {});
      setMessage(`${action} requested`);
    } catch (failure) {
      setMessage((failure as Error).message);
    }
    await onChanged();
  };
  const setBudget = async (event: Event) => {
    event.preventDefault();
    const value = Number(new FormData(event.currentTarget as HTMLFormElement).get('token_budget'));
    try {
      await api('PUT', `/api/v1/tasks/${encodeURIComponent(taskId)}/budget`, { token_budget: value });
      setMessage('budget changed');
    } catch (failure) {
      setMessage((failure as Error).message);
    }
    await onChanged();
  };
  if (terminal) return null;
  return (
    <div class="row wrap controls">
      <button type="button" onClick={() => act('pause')} disabled={paused}>Pause</button>
      <button type="button" onClick={() => act('resume')} disabled={!paused}>Resume</button>
      <button type="button" class="danger" onClick={() => act('cancel')}>Cancel</button>
      <form class="row" onSubmit={setBudget}>
        <label class="inline">Token budget<input name="token_budget" type="number" min={1} required class="short" /></label>
        <button type="submit">Set</button>
      </form>
      <span role="status" class="muted">{message}</span>
    </div>
  );
}

function AnswerView({ task, events }: { task: TaskStatus; events: TaskEvent[] }) {
  // The research workflow's `[n]` markers point to metadata.citations[n - 1] (spec 2.6), stored with the result.
  const citations = ((task.metadata ?? {}) as { citations?: Citation[] }).citations ?? [];
  // Once stored, the result is the answer, rendered whole; while running, the streamed text is.
  const html = useMemo(() => task.result ? renderMarkdown(task.result, citations) : '', [task.result, citations.length]);
  if (!task.result) return <StreamedAnswer events={events} citations={citations} />;
  return <div class="markdown" data-testid="answer" dangerouslySetInnerHTML={{ __html: html }} />;
}

function UsageView({ task }: { task: TaskStatus }) {
  const metadata = (task.metadata ?? {}) as { model_breakdown?: ModelUsage[] };
  const usage = (task as { unified_response?: { usage?: { total_tokens?: number; cost_usd?: number } } }).unified_response?.usage;
  const models = metadata.model_breakdown ?? [];
  return (
    <section class="card side" aria-labelledby="usage-title">
      <h2 id="usage-title">Usage</h2>
      <p>Tokens: {usage?.total_tokens ?? '—'} · Cost: {formatCost(usage?.cost_usd)}</p>
      {models.length > 0 && (
        <div class="table-wrap"><table>
          <thead><tr><th scope="col">Model</th><th scope="col">Calls</th><th scope="col">Tokens</th><th scope="col">Cost</th></tr></thead>
          <tbody>{models.map((model) => <tr key={model.model}><td>{model.model}</td><td>{model.executions}</td><td>{model.tokens}</td><td>{formatCost(model.cost_usd)}</td></tr>)}</tbody>
        </table></div>
      )}
    </section>
  );
}

/** The durable steps by phase, as the engine recorded them; fetched again when the status changes. */
function TimelineView({ taskId, status }: { taskId: string; status: string }) {
  const [timeline, setTimeline] = useState<Timeline | null>(null);
  useEffect(() => {
    api<Timeline>('GET', `/api/v1/tasks/${encodeURIComponent(taskId)}/timeline`).then(setTimeline, () => setTimeline(null));
  }, [taskId, status]);
  const phases = (timeline as { phases?: Array<{ name: string; duration_ms?: number | null; steps?: number[] }> } | null)?.phases ?? [];
  if (phases.length === 0) return null;
  return (
    <section class="card" aria-labelledby="timeline-title">
      <h2 id="timeline-title">Timeline <span class="muted">(recovery attempts: {String((timeline as { recovery_attempts?: number }).recovery_attempts ?? 0)})</span></h2>
      <div class="table-wrap">
        <table>
          <thead><tr><th scope="col">Phase</th><th scope="col">Steps</th><th scope="col">Duration</th></tr></thead>
          <tbody>{phases.map((phase, index) => <tr key={index}><td>{phase.name}</td><td>{phase.steps?.length ?? 0}</td><td>{phase.duration_ms ?? '—'} ms</td></tr>)}</tbody>
        </table>
      </div>
    </section>
  );
}
