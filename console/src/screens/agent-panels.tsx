import { useEffect, useMemo, useRef } from 'preact/hooks';
import type { TaskEvent } from '../api/event-stream';
import { eventsByAgent } from '../plan/graph';

/** Events kept per agent on screen; the counts stay exact. */
const EVENTS_SHOWN_PER_AGENT = 200;
/** Characters of a tool's input or output shown before "…" (the event already holds at most a few thousand). */
const JSON_SHOWN_CHARS = 4000;

interface ToolCall { key: string; tool: string; args: unknown; outcome?: { output?: unknown; error?: unknown; refused?: unknown } }

/**
 * One panel per agent: what its model calls used, its tool calls (input and what came back) and its events.
 * A panel's body is drawn only while open, so thousands of events cost nothing until someone looks.
 */
export function AgentPanels({ events, selected, onSelect }: { events: TaskEvent[]; selected: string | null; onSelect(agent: string | null): void }) {
  const byAgent = useMemo(() => [...eventsByAgent(events).entries()], [events]);
  const only = byAgent.length === 1 ? byAgent[0][0] : null;
  return (
    <section class="card" aria-labelledby="agents-title">
      <h2 id="agents-title">Agents</h2>
      {byAgent.length === 0 && <p class="muted">No events yet.</p>}
      {byAgent.length > 1 && <p class="hint">Choose an agent in the plan, or open one here, to see its tool calls and events.</p>}
      {byAgent.map(([agent, agentEvents]) => (
        <AgentPanel key={agent} agent={agent} events={agentEvents} open={agent === selected || agent === only}
          onToggle={(open) => onSelect(open ? agent : selected === agent ? null : selected)} />
      ))}
    </section>
  );
}

function AgentPanel({ agent, events, open, onToggle }: { agent: string; events: TaskEvent[]; open: boolean; onToggle(open: boolean): void }) {
  const element = useRef<HTMLDetailsElement>(null);
  useEffect(() => {
    if (open && element.current && !isInView(element.current)) element.current.scrollIntoView({ block: 'start' });
  }, [open]);
  return (
    <details ref={element} open={open} class="agent" data-agent={agent}
      onToggle={(event) => { const now = (event.currentTarget as HTMLDetailsElement).open; if (now !== open) onToggle(now); }}>
      <summary><strong>{agent}</strong> <span class="muted">{events.length} events · last: {events[events.length - 1].type}</span></summary>
      {open && <AgentDetail events={events} />}
    </details>
  );
}

function AgentDetail({ events }: { events: TaskEvent[] }) {
  const calls = useMemo(() => toolCallsOf(events), [events]);
  const usage = events.filter((event) => event.type === 'AGENT_COMPLETED' && event.payload?.model);
  return (
    <div class="agent-detail">
      {usage.length > 0 && (
        <p class="muted">Model calls: {usage.map((event) => `${String(event.payload!.model)} (${Number(event.payload!.input_tokens ?? 0)} in, ${Number(event.payload!.output_tokens ?? 0)} out)`).join('; ')}</p>
      )}
      {calls.length > 0 && (
        <>
          <h3>Tool calls</h3>
          <ol class="events tool-calls">
            {calls.map((call) => (
              <li key={call.key} data-tool-call={call.tool}>
                <strong>{call.tool}</strong> <span class="muted">{call.outcome === undefined ? 'running…' : call.outcome.error !== undefined ? 'failed' : 'returned'}</span>
                <details><summary>input</summary><pre tabIndex={0}>{json(call.args)}</pre></details>
                {call.outcome !== undefined && (
                  <details><summary>{call.outcome.error !== undefined ? 'error' : 'observation'}</summary><pre tabIndex={0}>{json(call.outcome.error ?? call.outcome.output)}</pre></details>
                )}
              </li>
            ))}
          </ol>
        </>
      )}
      <h3>Events</h3>
      <ol class="events">
        {events.slice(-EVENTS_SHOWN_PER_AGENT).map((event) => (
          <li key={event.seq}><code>{event.type}</code> {event.message}</li>
        ))}
      </ol>
    </div>
  );
}

/** Each TOOL_INVOKED with the TOOL_OBSERVATION of the same call id. */
function toolCallsOf(events: TaskEvent[]): ToolCall[] {
  const calls = new Map<string, ToolCall>();
  for (const event of events) {
    if (event.type !== 'TOOL_INVOKED' && event.type !== 'TOOL_OBSERVATION') continue;
    const payload = event.payload ?? {};
    const key = String(payload.call_id ?? event.seq);
    if (event.type === 'TOOL_INVOKED') calls.set(key, { key, tool: String(payload.tool ?? '?'), args: payload.args });
    else {
      const call = calls.get(key) ?? { key, tool: String(payload.tool ?? '?'), args: undefined };
      call.outcome = payload;
      calls.set(key, call);
    }
  }
  return [...calls.values()];
}

function json(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2) ?? 'null';
  return text.length <= JSON_SHOWN_CHARS ? text : `${text.slice(0, JSON_SHOWN_CHARS)}…`;
}

function isInView(element: Element): boolean {
  const box = element.getBoundingClientRect();
  return box.top >= 0 && box.top < window.innerHeight;
}
