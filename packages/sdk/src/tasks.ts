import { idempotencyHeaders, type CallOptions, type Core, type SubmitOptions } from './core.ts';
import { TaskFailedError } from './errors.ts';
import { viewOf, type TaskEvent, type TaskView } from './events.ts';
import { followTask, type StreamOptions, type StreamTransport } from './stream.ts';
import { TERMINAL_STATUSES, type QueryOf, type RequestBody, type TaskStatus, type TaskSubmission } from './types.ts';

export interface WaitOptions extends StreamOptions {
  /** Throw TaskFailedError when the task ends failed, cancelled or timed out (default false). */
  throwOnFailure?: boolean;
}

export interface WaitResult {
  task: TaskStatus;
  /** Every event of the task, in order. */
  events: TaskEvent[];
  /** The plan, agents and answer the events describe. */
  view: TaskView;
}

/** Tasks: submit, read, control, and follow their events. */
export class Tasks {
  static readonly routes = {
    submit: 'POST /api/v1/tasks',
    list: 'GET /api/v1/tasks',
    submitForStream: 'POST /api/v1/tasks/stream',
    get: 'GET /api/v1/tasks/{id}',
    events: 'GET /api/v1/tasks/{id}/events',
    timeline: 'GET /api/v1/tasks/{id}/timeline',
    pause: 'POST /api/v1/tasks/{id}/pause',
    resume: 'POST /api/v1/tasks/{id}/resume',
    cancel: 'POST /api/v1/tasks/{id}/cancel',
    controlState: 'GET /api/v1/tasks/{id}/control-state',
    setBudget: 'PUT /api/v1/tasks/{id}/budget',
    stream: 'GET /api/v1/stream/sse',
  } as const;

  private readonly core: Core;
  constructor(core: Core) { this.core = core; }

  /** Submits a task. Sends an Idempotency-Key (generated unless given), so a retried submission creates one task. */
  async submit(body: TaskSubmission, options?: SubmitOptions) {
    const { data, headers } = await this.core.callWithHeaders(this.core.api.POST('/api/v1/tasks', { body, headers: idempotencyHeaders(options), signal: options?.signal }));
    return { ...data, session_id: headers.get('x-session-id') ?? undefined, replayed: headers.get('x-idempotency-cached') === 'true' };
  }

  list(query: QueryOf<'/api/v1/tasks', 'get'> = {}, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/tasks', { params: { query: query as Required<typeof query> }, ...options }));
  }

  /** Submits a task and returns where its stream is (`POST /tasks/stream`); follow it with `stream(task_id)`. */
  submitForStream(body: RequestBody<'/api/v1/tasks/stream', 'post'>, options?: SubmitOptions) {
    return this.core.call(this.core.api.POST('/api/v1/tasks/stream', { body, headers: idempotencyHeaders(options), signal: options?.signal }));
  }

  get(id: string, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/tasks/{id}', { params: { path: { id } }, ...options }));
  }

  /** One page of the stored event history (`after_seq` pages on; `include_partial` adds streamed text). */
  events(id: string, query: QueryOf<'/api/v1/tasks/{id}/events', 'get'> = {}, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/tasks/{id}/events', { params: { path: { id }, query: query as Required<typeof query> }, ...options }));
  }

  /** Every stored event, all pages, in order. */
  async allEvents(id: string, query: Omit<QueryOf<'/api/v1/tasks/{id}/events', 'get'>, 'after_seq' | 'offset'> = {}, options?: CallOptions): Promise<TaskEvent[]> {
    const events: TaskEvent[] = [];
    let afterSeq = 0;
    for (;;) {
      const page = await this.events(id, { limit: 200, ...query, after_seq: afterSeq }, options) as { events: TaskEvent[]; next_after_seq: number | null };
      events.push(...page.events);
      if (page.next_after_seq === null || page.events.length === 0) return events;
      afterSeq = page.next_after_seq;
    }
  }

  timeline(id: string, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/tasks/{id}/timeline', { params: { path: { id } }, ...options }));
  }

  pause(id: string, reason?: string, options?: SubmitOptions) {
    return this.core.call(this.core.api.POST('/api/v1/tasks/{id}/pause', { params: { path: { id } }, body: reason === undefined ? {} : { reason }, headers: idempotencyHeaders(options), signal: options?.signal }));
  }

  resume(id: string, reason?: string, options?: SubmitOptions) {
    return this.core.call(this.core.api.POST('/api/v1/tasks/{id}/resume', { params: { path: { id } }, body: reason === undefined ? {} : { reason }, headers: idempotencyHeaders(options), signal: options?.signal }));
  }

  cancel(id: string, reason?: string, options?: SubmitOptions) {
    return this.core.call(this.core.api.POST('/api/v1/tasks/{id}/cancel', { params: { path: { id } }, body: reason === undefined ? {} : { reason }, headers: idempotencyHeaders(options), signal: options?.signal }));
  }

  controlState(id: string, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/tasks/{id}/control-state', { params: { path: { id } }, ...options }));
  }

  setBudget(id: string, tokenBudget: number, options?: CallOptions) {
    return this.core.call(this.core.api.PUT('/api/v1/tasks/{id}/budget', { params: { path: { id } }, body: { token_budget: tokenBudget }, ...options }));
  }

  /**
   * The task's events as they happen, each once and in order, until the task's stream ends; reconnects on its own
   * after a dropped connection or a server restart, resuming after the last event received.
   *   for await (const event of client.tasks.stream(id)) …
   */
  stream(id: string, options: StreamOptions = {}): AsyncGenerator<TaskEvent, void, undefined> {
    return followTask(this.streamTransport(), id, options);
  }

  /** Follows the task to its end and returns its final status, its events and what they describe. */
  async wait(id: string, options: WaitOptions = {}): Promise<WaitResult> {
    const events: TaskEvent[] = [];
    for await (const event of this.stream(id, options)) events.push(event);
    const task = await this.get(id, { signal: options.signal });
    if (options.throwOnFailure && task.status !== 'TASK_STATUS_COMPLETED') {
      throw new TaskFailedError(`task ${id} ended ${task.status}${task.error ? `: ${task.error}` : ''}`, { status: 0, code: task.status, body: task });
    }
    return { task, events, view: viewOf(events) };
  }

  /** Submits and waits: the answer text is `result.view.answer` (or `result.task.result`). */
  async run(body: TaskSubmission, options: WaitOptions & SubmitOptions = {}): Promise<WaitResult> {
    const { task_id } = await this.submit(body, options);
    return this.wait(task_id, options);
  }

  private streamTransport(): StreamTransport {
    return {
      open: async (taskId, after, types, signal) => {
        const { response } = await this.core.api.GET('/api/v1/stream/sse', {
          params: { query: { workflow_id: taskId, ...(types?.length ? { types: types.join(',') } : {}) } },
          headers: after === 0 ? {} : { 'last-event-id': String(after) },
          parseAs: 'stream', fetch: this.core.sendOnce, signal,
        });
        return response;
      },
      isTerminal: async (taskId, signal) => TERMINAL_STATUSES.has((await this.get(taskId, { signal })).status),
    };
  }
}
