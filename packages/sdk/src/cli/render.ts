import { createLogUpdate } from 'log-update';
import type { AgentgateClient } from '../client.ts';
import { TaskView, eventText, type AgentState, type TaskEvent } from '../events.ts';
import type { TaskStatus } from '../types.ts';
import { colorsFor, shortStatus } from './output.ts';

export interface RenderOptions {
  out: NodeJS.WriteStream;
  err: NodeJS.WriteStream;
  /** NDJSON: one line per event, then one with the task's final status. */
  json: boolean;
  /** --no-color given. */
  color: boolean;
  signal?: AbortSignal;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * Follows a task to its end, showing it as it goes: on a terminal a live tree of agents with spinners and the
 * answer's last lines (on stderr), then the answer (on stdout); piped, one plain line per step on stderr and the
 * answer's text on stdout as it streams. Returns the task's final status.
 */
export async function followAndRender(client: AgentgateClient, taskId: string, options: RenderOptions): Promise<{ task: TaskStatus; view: TaskView }> {
  const view = new TaskView();
  const sink = options.json ? jsonSink(options.out) : options.err.isTTY ? liveSink(options, view) : plainSink(options, view);
  try {
    for await (const event of client.tasks.stream(taskId, { signal: options.signal, onReconnect: () => sink.reconnecting() })) {
      view.apply(event);
      sink.event(event);
    }
  } catch (error) {
    sink.abandon();
    throw error;
  } finally {
    sink.stop();
  }
  const task = await client.tasks.get(taskId, { signal: options.signal });
  sink.finish(task);
  return { task, view };
}

interface Sink {
  event(event: TaskEvent): void;
  reconnecting(): void;
  /** The stream ended (or failed). */
  stop(): void;
  /** The stream failed or was interrupted: leave the terminal as it was (cursor shown). */
  abandon(): void;
  finish(task: TaskStatus): void;
}

function jsonSink(out: NodeJS.WriteStream): Sink {
  return {
    event: (event) => out.write(`${JSON.stringify(event)}\n`),
    reconnecting: () => {},
    stop: () => {},
    abandon: () => {},
    finish: (task) => out.write(`${JSON.stringify({ type: 'TASK_STATUS', task })}\n`),
  };
}

/** Piped output: no cursor movement, no colour; progress on stderr, the answer's text on stdout. */
function plainSink(options: RenderOptions, view: TaskView): Sink {
  const paint = colorsFor(options.err, options.color);
  const say = (text: string) => options.err.write(`${text}\n`);
  let printed = '';
  let plannedShown = false;
  return {
    event(event) {
      if (event.type === 'PROGRESS' && view.plan && !plannedShown) {
        plannedShown = true;
        say(`plan: ${view.plan.subtasks.length} subtask(s): ${view.plan.subtasks.map((subtask) => subtask.id).join(', ')}`);
      }
      const agent = event.agent_id ? view.agents.get(event.agent_id) : undefined;
      if (event.type === 'AGENT_STARTED' && agent) say(`${paint('cyan', '•')} agent ${agent.id} started`);
      if (event.type === 'ERROR_OCCURRED' && agent) say(`${paint('red', '✗')} agent ${agent.id} failed: ${event.message ?? ''}`);
      if (event.type === 'AGENT_COMPLETED' && agent) say(`${agent.status === 'failed' ? paint('red', '✗') : paint('green', '✓')} agent ${agent.id} ${agent.status === 'failed' ? 'failed' : 'finished'}${tokens(agent)}`);
      if (event.type === 'LLM_PARTIAL' && event.payload?.final_answer === true) {
        const text = eventText(event);
        options.out.write(text);
        printed += text;
      }
    },
    reconnecting: () => say('(connection lost; resuming the stream)'),
    stop: () => {},
    abandon: () => { if (printed !== '') options.out.write('\n'); },
    finish(task) {
      const answer = task.result || view.answer;
      if (answer.startsWith(printed)) options.out.write(answer.slice(printed.length));
      else options.out.write(`\n${answer}`);
      if (answer !== '') options.out.write('\n');
      say(`task ${task.task_id} ${shortStatus(task.status)}${task.error ? `: ${task.error}` : ''}`);
    },
  };
}

/** A terminal: the live tree redrawn in place on stderr with spinners; the answer printed whole at the end. */
function liveSink(options: RenderOptions, view: TaskView): Sink {
  const paint = colorsFor(options.err, options.color);
  const live = createLogUpdate(options.err, { showCursor: false });
  let frame = 0;
  let note = '';
  const draw = () => live(treeLines(view, paint, SPINNER[frame % SPINNER.length], note, options.err.rows ?? 24).join('\n'));
  const timer = setInterval(() => {
    frame += 1;
    draw();
  }, 100);
  return {
    event() {
      note = '';
      draw();
    },
    reconnecting() {
      note = 'connection lost; resuming…';
      draw();
    },
    stop() {
      clearInterval(timer);
    },
    abandon() {
      live.done();
    },
    finish(task) {
      live(treeLines(view, paint, '', '', Infinity, shortStatus(task.status)).join('\n'));
      live.done();
      const answer = task.result || view.answer;
      // A blank line after the tree on the same terminal; a file or pipe gets the answer alone.
      if (answer) options.out.write(`${options.out.isTTY ? '\n' : ''}${answer}\n`);
      if (task.error) options.err.write(`${paint('red', 'error:')} ${task.error}\n`);
    },
  };
}

function treeLines(view: TaskView, paint: ReturnType<typeof colorsFor>, spin: string, note: string, rows: number, finalStatus?: string): string[] {
  const agents = [...view.agents.values()];
  const names = new Map(view.plan?.subtasks.map((subtask) => [subtask.id, subtask.name ?? '']) ?? []);
  const status = finalStatus ?? (view.status === 'paused' ? 'paused' : 'running');
  const head = `${finalStatus ? mark(finalStatus === 'completed' ? 'completed' : 'failed', paint) : paint('cyan', spin)} task ${status}${view.progress && !finalStatus ? ` — ${view.progress}` : ''}${note ? paint('yellow', ` (${note})`) : ''}`;
  const lines = [head];
  agents.forEach((agent, index) => {
    const branch = index === agents.length - 1 ? '└─' : '├─';
    const icon = agent.status === 'working' ? paint('cyan', spin || '…') : mark(agent.status, paint);
    const label = names.get(agent.id);
    const detail = agent.status === 'working' ? lastWords(agent.text) || agent.activity : `${agent.status === 'failed' ? 'failed' : 'finished'}${tokens(agent)}`;
    lines.push(`${branch} ${icon} ${paint('bold', agent.id)}${label ? paint('dim', ` ${truncate(label, 40)}`) : ''}  ${paint('dim', truncate(detail, 60))}`);
  });
  if (!finalStatus && view.answer) {
    const room = Math.max(1, Math.min(8, rows - lines.length - 2));
    lines.push('', ...view.answer.split('\n').slice(-room).map((line) => truncate(line, 200)));
  }
  return lines;
}

/** The end of what an agent streamed so far, on one line. */
const lastWords = (text: string) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 60 ? `…${flat.slice(-59)}` : flat;
};
const mark = (status: 'completed' | 'failed' | string, paint: ReturnType<typeof colorsFor>) => (status === 'completed' ? paint('green', '✓') : paint('red', '✗'));
const truncate = (text: string, width: number) => (text.length > width ? `${text.slice(0, width - 1)}…` : text);
const tokens = (agent: AgentState) => (agent.outputTokens !== undefined ? ` (${(agent.inputTokens ?? 0) + agent.outputTokens} tokens)` : '');
