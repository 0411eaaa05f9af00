/** One task event as the native stream and the history endpoint carry it (spec 6.1). */
export interface TaskEvent {
  workflow_id: string;
  /** The event type: `WORKFLOW_STARTED`, `AGENT_COMPLETED`, `LLM_PARTIAL`… (never the SSE name). */
  type: string;
  agent_id: string | null;
  message: string | null;
  /** Null (or absent) when the event has none. */
  payload?: Record<string, unknown> | null;
  timestamp: string;
  /** Position in the task's event sequence, from 1, without gaps (within a type filter, increasing). */
  seq: number;
  /** The SSE id, `<ms>-<n>`. */
  stream_id: string;
  /** LLM_PARTIAL: the text added. */
  delta?: string;
  /** LLM_OUTPUT: the whole text. */
  response?: string;
}

/**
 * The text an event carries: a delta's added text (a stream frame names it `delta`; the history's stored event
 * carries it as `message`), else the event's message.
 */
export const eventText = (event: TaskEvent): string => event.delta ?? event.message ?? '';

export interface PlannedSubtask { id: string; name?: string; [key: string]: unknown }

export interface TaskPlan {
  subtasks: PlannedSubtask[];
  /** Dependencies between subtasks as the planner stated them. */
  dependencies: unknown[];
  strategy?: string;
  complexityScore?: number;
}

export type AgentStatus = 'working' | 'completed' | 'failed';

export interface AgentState {
  id: string;
  status: AgentStatus;
  /** The latest thing the agent said it does (a progress message, a tool it calls). */
  activity: string;
  /** Text the agent streamed so far. */
  text: string;
  startedAt?: string;
  completedAt?: string;
  inputTokens?: number;
  outputTokens?: number;
  toolCalls: number;
}

const TERMINAL_EVENT_TYPES = new Set(['WORKFLOW_COMPLETED', 'WORKFLOW_CANCELLED', 'STREAM_END']);
/** Agents that are the engine's own bookkeeping rather than workers (shown as the task's progress instead). */
const ENGINE_AGENTS = new Set(['orchestrator', 'decompose', 'final_output', 'synthesis', 'swarm-supervisor']);

/**
 * Folds events into what a person wants to see: the plan, each agent's state and the answer so far. Feed it
 * events in order (`apply`), live or from history; the answer prefers the final output once it arrives.
 */
export class TaskView {
  plan: TaskPlan | undefined;
  readonly agents = new Map<string, AgentState>();
  /** The last progress message of the task as a whole. */
  progress = '';
  status: 'running' | 'paused' | 'completed' | 'failed' | 'cancelled' = 'running';
  error: string | undefined;
  private finalOutput: string | undefined;
  private streamedAnswer = '';

  apply(event: TaskEvent): this {
    const payload = event.payload ?? {};
    const agentId = event.agent_id ?? undefined;
    switch (event.type) {
      case 'PROGRESS':
        if (Array.isArray(payload.plan)) this.plan = planFrom(payload);
        if (agentId === undefined || ENGINE_AGENTS.has(agentId)) this.progress = event.message ?? this.progress;
        else this.touch(agentId, event).activity = event.message ?? '';
        break;
      case 'AGENT_STARTED':
      case 'AGENT_THINKING':
        if (agentId) this.touch(agentId, event).activity = event.message ?? '';
        break;
      case 'TOOL_INVOKED':
        if (agentId) {
          const agent = this.touch(agentId, event);
          agent.toolCalls += 1;
          agent.activity = event.message ?? 'calling a tool';
        }
        break;
      case 'AGENT_COMPLETED':
        if (agentId) this.finish(agentId, event, payload.error || payload.success === false ? 'failed' : 'completed');
        break;
      case 'LLM_PARTIAL': {
        const text = eventText(event);
        if (agentId && !ENGINE_AGENTS.has(agentId)) this.touch(agentId, event).text += text;
        if (payload.final_answer === true) this.streamedAnswer += text;
        break;
      }
      case 'LLM_OUTPUT':
        if (agentId === 'final_output' || payload.final_answer === true) this.finalOutput = event.response ?? event.message ?? '';
        break;
      case 'WORKFLOW_PAUSED':
        this.status = 'paused';
        break;
      case 'WORKFLOW_RESUMED':
        this.status = 'running';
        break;
      case 'WORKFLOW_CANCELLED':
        this.status = 'cancelled';
        break;
      case 'ERROR_OCCURRED':
        this.error = event.message ?? 'error';
        if (agentId && this.agents.has(agentId)) this.finish(agentId, event, 'failed');
        // The task's own failure (FAILED or TIMEOUT) names its status; an agent's failure does not end the task.
        if (typeof payload.status === 'string') this.status = 'failed';
        break;
      case 'WORKFLOW_COMPLETED':
        this.status = payload.status === 'FAILED' || payload.success === false ? 'failed' : 'completed';
        break;
    }
    return this;
  }

  /**
   * The answer: the final output once it arrived, else the text streamed as the final answer so far (else, when a
   * single agent streamed text, that text: agents working in parallel are not mixed into one answer).
   */
  get answer(): string {
    if (this.finalOutput !== undefined) return this.finalOutput;
    if (this.streamedAnswer !== '') return this.streamedAnswer;
    const speakers = [...this.agents.values()].filter((agent) => agent.text !== '');
    return speakers.length === 1 ? speakers[0].text : '';
  }

  private touch(id: string, event: TaskEvent): AgentState {
    let agent = this.agents.get(id);
    if (!agent) {
      agent = { id, status: 'working', activity: '', text: '', startedAt: event.timestamp, toolCalls: 0 };
      this.agents.set(id, agent);
    }
    return agent;
  }

  private finish(id: string, event: TaskEvent, status: AgentStatus): void {
    const agent = this.touch(id, event);
    const payload = event.payload ?? {};
    agent.status = status;
    agent.completedAt = event.timestamp;
    agent.activity = event.message ?? '';
    if (typeof payload.input_tokens === 'number') agent.inputTokens = payload.input_tokens;
    if (typeof payload.output_tokens === 'number') agent.outputTokens = payload.output_tokens;
  }
}

function planFrom(payload: Record<string, unknown>): TaskPlan {
  return {
    subtasks: payload.plan as PlannedSubtask[],
    dependencies: Array.isArray(payload.deps) ? payload.deps : [],
    strategy: typeof payload.execution_strategy === 'string' ? payload.execution_strategy : undefined,
    complexityScore: typeof payload.complexity_score === 'number' ? payload.complexity_score : undefined,
  };
}

/** Folds a whole list of events. */
export function viewOf(events: Iterable<TaskEvent>): TaskView {
  const view = new TaskView();
  for (const event of events) view.apply(event);
  return view;
}

/** The answer text the events carry (the final output, else the streamed final-answer deltas). */
export const answerText = (events: Iterable<TaskEvent>): string => viewOf(events).answer;
/** The plan the events carry, if the task was planned. */
export const taskPlan = (events: Iterable<TaskEvent>): TaskPlan | undefined => viewOf(events).plan;
/** Each agent's state after these events. */
export const agentStates = (events: Iterable<TaskEvent>): Map<string, AgentState> => viewOf(events).agents;

export const isTerminalEvent = (event: TaskEvent): boolean => TERMINAL_EVENT_TYPES.has(event.type);
