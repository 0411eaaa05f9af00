import { idempotencyHeaders, type CallOptions, type Core, type SubmitOptions } from './core.ts';
import { errorFromFailedResponse } from './errors.ts';
import type { QueryOf, RequestBody } from './types.ts';

/** Health, readiness and Prometheus metrics. */
export class Probes {
  static readonly routes = { health: 'GET /health', readiness: 'GET /readiness', metrics: 'GET /metrics' } as const;
  private readonly core: Core;
  constructor(core: Core) { this.core = core; }

  /** Liveness; a 503 answer is returned (not thrown) since it carries the state. */
  async health(options?: CallOptions) {
    const { data, error } = await this.core.api.GET('/health', { ...options });
    return data ?? error;
  }

  /** Readiness; a 503 answer (not ready) is returned, not thrown. */
  async readiness(options?: CallOptions) {
    const { data, error } = await this.core.api.GET('/readiness', { ...options });
    return data ?? error;
  }

  /** The Prometheus text exposition. */
  metrics(options?: CallOptions): Promise<string> {
    return this.core.call(this.core.api.GET('/metrics', { parseAs: 'text', ...options })) as Promise<string>;
  }
}

/** Accounts, tokens and API keys. */
export class Auth {
  static readonly routes = {
    register: 'POST /api/v1/auth/register', login: 'POST /api/v1/auth/login', refresh: 'POST /api/v1/auth/refresh',
    me: 'GET /api/v1/auth/me',
  } as const;
  readonly keys: ApiKeys;
  private readonly core: Core;
  constructor(core: Core) {
    this.core = core;
    this.keys = new ApiKeys(core);
  }

  register(body: RequestBody<'/api/v1/auth/register', 'post'>, options?: CallOptions) {
    return this.core.call(this.core.api.POST('/api/v1/auth/register', { body, ...options }));
  }

  login(body: RequestBody<'/api/v1/auth/login', 'post'>, options?: CallOptions) {
    return this.core.call(this.core.api.POST('/api/v1/auth/login', { body, ...options }));
  }

  refresh(refreshToken: string, options?: CallOptions) {
    return this.core.call(this.core.api.POST('/api/v1/auth/refresh', { body: { refresh_token: refreshToken }, ...options }));
  }

  me(options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/auth/me', { ...options }));
  }
}

export class ApiKeys {
  static readonly routes = {
    create: 'POST /api/v1/auth/api-keys', list: 'GET /api/v1/auth/api-keys', rotate: 'POST /api/v1/auth/api-keys/refresh',
    revoke: 'DELETE /api/v1/auth/api-keys/{id}',
  } as const;
  private readonly core: Core;
  constructor(core: Core) { this.core = core; }

  /** Creates a key; its secret is in the answer only this once. */
  create(body: RequestBody<'/api/v1/auth/api-keys', 'post'>, options?: CallOptions) {
    return this.core.call(this.core.api.POST('/api/v1/auth/api-keys', { body, ...options }));
  }

  list(options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/auth/api-keys', { ...options }));
  }

  /** Replaces a key's secret; the new one is in the answer. */
  rotate(id: string, options?: CallOptions) {
    return this.core.call(this.core.api.POST('/api/v1/auth/api-keys/refresh', { body: { id }, ...options }));
  }

  revoke(id: string, options?: CallOptions) {
    return this.core.call(this.core.api.DELETE('/api/v1/auth/api-keys/{id}', { params: { path: { id } }, ...options }));
  }
}

/** Streams other than a task's SSE stream (which is `tasks.stream`). */
export class Streams {
  static readonly routes = { websocket: 'GET /api/v1/stream/ws' } as const;
  private readonly core: Core;
  constructor(core: Core) { this.core = core; }

  /**
   * Opens the task's WebSocket stream (JSON events, ending with one of type STREAM_END). Authenticates with the
   * client's headers, which needs a WebSocket that takes headers (Node's built-in one does). `tasks.stream` is the
   * one that resumes on its own.
   */
  websocket(workflowId: string, query: { types?: string; last_event_id?: string } = {}): WebSocket {
    const url = new URL('/api/v1/stream/ws', this.core.baseUrl);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('workflow_id', workflowId);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, value);
    const WebSocketWithHeaders = WebSocket as unknown as new (url: string, init: { headers: Record<string, string> }) => WebSocket;
    return new WebSocketWithHeaders(url.toString(), { headers: this.core.headers });
  }
}

/** Sessions: conversations that tasks share, with their history, files and budget. */
export class Sessions {
  static readonly routes = {
    list: 'GET /api/v1/sessions', get: 'GET /api/v1/sessions/{sessionId}', rename: 'PATCH /api/v1/sessions/{sessionId}',
    delete: 'DELETE /api/v1/sessions/{sessionId}', history: 'GET /api/v1/sessions/{sessionId}/history',
    events: 'GET /api/v1/sessions/{sessionId}/events', setBudget: 'PUT /api/v1/sessions/{sessionId}/budget',
    files: 'GET /api/v1/sessions/{sessionId}/files', file: 'GET /api/v1/sessions/{sessionId}/files/{*}',
  } as const;
  private readonly core: Core;
  constructor(core: Core) { this.core = core; }

  list(query: QueryOf<'/api/v1/sessions', 'get'> = {}, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/sessions', { params: { query: query as Required<typeof query> }, ...options }));
  }

  get(sessionId: string, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/sessions/{sessionId}', { params: { path: { sessionId } }, ...options }));
  }

  rename(sessionId: string, title: string, options?: CallOptions) {
    return this.core.call(this.core.api.PATCH('/api/v1/sessions/{sessionId}', { params: { path: { sessionId } }, body: { title }, ...options }));
  }

  async delete(sessionId: string, options?: CallOptions): Promise<void> {
    await this.core.call(this.core.api.DELETE('/api/v1/sessions/{sessionId}', { params: { path: { sessionId } }, ...options }));
  }

  history(sessionId: string, query: QueryOf<'/api/v1/sessions/{sessionId}/history', 'get'> = {}, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/sessions/{sessionId}/history', { params: { path: { sessionId }, query: query as Required<typeof query> }, ...options }));
  }

  events(sessionId: string, query: QueryOf<'/api/v1/sessions/{sessionId}/events', 'get'> = {}, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/sessions/{sessionId}/events', { params: { path: { sessionId }, query: query as Required<typeof query> }, ...options }));
  }

  setBudget(sessionId: string, tokenBudget: number, options?: CallOptions) {
    return this.core.call(this.core.api.PUT('/api/v1/sessions/{sessionId}/budget', { params: { path: { sessionId } }, body: { token_budget: tokenBudget }, ...options }));
  }

  files(sessionId: string, query: QueryOf<'/api/v1/sessions/{sessionId}/files', 'get'> = {}, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/sessions/{sessionId}/files', { params: { path: { sessionId }, query: query as Required<typeof query> }, ...options }));
  }

  /** One file of the session's workspace (`path` may hold slashes); its bytes. */
  async file(sessionId: string, path: string, options?: CallOptions): Promise<Uint8Array> {
    const { response } = await this.core.api.GET('/api/v1/sessions/{sessionId}/files/{*}', {
      params: { path: { sessionId, '*': path } }, parseAs: 'stream', ...options,
      // Each segment is encoded on its own: the slashes are the route's, not part of a name.
      pathSerializer: (template, params) => template
        .replace('{sessionId}', encodeURIComponent(String(params.sessionId)))
        .replace('{*}', String(params['*']).split('/').map(encodeURIComponent).join('/')),
    });
    if (!response.ok) throw await errorFromFailedResponse(response);
    return new Uint8Array(await response.arrayBuffer());
  }
}

/** Tool-call approvals a task waits on. */
export class Approvals {
  static readonly routes = { list: 'GET /api/v1/approvals', decide: 'POST /api/v1/approvals/decision' } as const;
  private readonly core: Core;
  constructor(core: Core) { this.core = core; }

  list(query: QueryOf<'/api/v1/approvals', 'get'> = {}, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/approvals', { params: { query: query as Required<typeof query> }, ...options }));
  }

  decide(body: RequestBody<'/api/v1/approvals/decision', 'post'>, options?: SubmitOptions) {
    return this.core.call(this.core.api.POST('/api/v1/approvals/decision', { body, headers: idempotencyHeaders(options), signal: options?.signal }));
  }

  approve(workflowId: string, approvalId: string, feedback?: string, options?: SubmitOptions) {
    return this.decide({ workflow_id: workflowId, approval_id: approvalId, approved: true, ...(feedback ? { feedback } : {}) }, options);
  }

  deny(workflowId: string, approvalId: string, feedback?: string, options?: SubmitOptions) {
    return this.decide({ workflow_id: workflowId, approval_id: approvalId, approved: false, ...(feedback ? { feedback } : {}) }, options);
  }
}

/** The research-plan review of a task (human in the loop). */
export class Reviews {
  static readonly routes = { get: 'GET /api/v1/tasks/{id}/review', act: 'POST /api/v1/tasks/{id}/review' } as const;
  private readonly core: Core;
  constructor(core: Core) { this.core = core; }

  /** The review state; `version` is the ETag to send back as `ifMatch`. */
  async get(taskId: string, options?: CallOptions) {
    const { data, headers } = await this.core.callWithHeaders(this.core.api.GET('/api/v1/tasks/{id}/review', { params: { path: { id: taskId } }, ...options }));
    return { ...data, version: headers.get('etag') ?? undefined };
  }

  act(taskId: string, body: RequestBody<'/api/v1/tasks/{id}/review', 'post'>, options: SubmitOptions & { ifMatch?: string } = {}) {
    const headers = { ...idempotencyHeaders(options), ...(options.ifMatch ? { 'if-match': options.ifMatch } : {}) };
    return this.core.call(this.core.api.POST('/api/v1/tasks/{id}/review', { params: { path: { id: taskId } }, body, headers, signal: options.signal }));
  }

  feedback(taskId: string, message: string, options?: SubmitOptions & { ifMatch?: string }) {
    return this.act(taskId, { action: 'feedback', message }, options);
  }

  approve(taskId: string, options?: SubmitOptions & { ifMatch?: string }) {
    return this.act(taskId, { action: 'approve' }, options);
  }
}

/** Messages to a running swarm. */
export class Swarm {
  static readonly routes = { message: 'POST /api/v1/swarm/{workflowId}/message' } as const;
  private readonly core: Core;
  constructor(core: Core) { this.core = core; }

  message(workflowId: string, message: string, options?: SubmitOptions) {
    return this.core.call(this.core.api.POST('/api/v1/swarm/{workflowId}/message', { params: { path: { workflowId } }, body: { message }, headers: idempotencyHeaders(options), signal: options?.signal }));
  }
}

/** Scheduled tasks (cron). */
export class Schedules {
  static readonly routes = {
    create: 'POST /api/v1/schedules', list: 'GET /api/v1/schedules', get: 'GET /api/v1/schedules/{id}',
    update: 'PUT /api/v1/schedules/{id}', delete: 'DELETE /api/v1/schedules/{id}', runs: 'GET /api/v1/schedules/{id}/runs',
    pause: 'POST /api/v1/schedules/{id}/pause', resume: 'POST /api/v1/schedules/{id}/resume',
  } as const;
  private readonly core: Core;
  constructor(core: Core) { this.core = core; }

  create(body: RequestBody<'/api/v1/schedules', 'post'>, options?: SubmitOptions) {
    return this.core.call(this.core.api.POST('/api/v1/schedules', { body, headers: idempotencyHeaders(options), signal: options?.signal }));
  }

  list(query: QueryOf<'/api/v1/schedules', 'get'> = {}, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/schedules', { params: { query: query as Required<typeof query> }, ...options }));
  }

  get(id: string, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/schedules/{id}', { params: { path: { id } }, ...options }));
  }

  update(id: string, body: RequestBody<'/api/v1/schedules/{id}', 'put'>, options?: CallOptions) {
    return this.core.call(this.core.api.PUT('/api/v1/schedules/{id}', { params: { path: { id } }, body, ...options }));
  }

  delete(id: string, options?: CallOptions) {
    return this.core.call(this.core.api.DELETE('/api/v1/schedules/{id}', { params: { path: { id } }, ...options }));
  }

  runs(id: string, query: QueryOf<'/api/v1/schedules/{id}/runs', 'get'> = {}, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/schedules/{id}/runs', { params: { path: { id }, query: query as Required<typeof query> }, ...options }));
  }

  pause(id: string, reason?: string, options?: SubmitOptions) {
    return this.core.call(this.core.api.POST('/api/v1/schedules/{id}/pause', { params: { path: { id } }, body: reason === undefined ? {} : { reason }, headers: idempotencyHeaders(options), signal: options?.signal }));
  }

  resume(id: string, reason?: string, options?: SubmitOptions) {
    return this.core.call(this.core.api.POST('/api/v1/schedules/{id}/resume', { params: { path: { id } }, body: reason === undefined ? {} : { reason }, headers: idempotencyHeaders(options), signal: options?.signal }));
  }
}

/** The tool catalogue, and running a tool directly. */
export class Tools {
  static readonly routes = { list: 'GET /api/v1/tools', get: 'GET /api/v1/tools/{name}', execute: 'POST /api/v1/tools/{name}/execute' } as const;
  private readonly core: Core;
  constructor(core: Core) { this.core = core; }

  list(query: QueryOf<'/api/v1/tools', 'get'> = {}, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/tools', { params: { query }, ...options }));
  }

  get(name: string, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/tools/{name}', { params: { path: { name } }, ...options }));
  }

  execute(name: string, body: RequestBody<'/api/v1/tools/{name}/execute', 'post'>, options?: SubmitOptions) {
    return this.core.call(this.core.api.POST('/api/v1/tools/{name}/execute', { params: { path: { name } }, body, headers: idempotencyHeaders(options), signal: options?.signal }));
  }
}

/** The skill catalogue. */
export class Skills {
  static readonly routes = { list: 'GET /api/v1/skills', get: 'GET /api/v1/skills/{name}', versions: 'GET /api/v1/skills/{name}/versions' } as const;
  private readonly core: Core;
  constructor(core: Core) { this.core = core; }

  list(query: QueryOf<'/api/v1/skills', 'get'> = {}, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/skills', { params: { query }, ...options }));
  }

  get(name: string, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/skills/{name}', { params: { path: { name } }, ...options }));
  }

  versions(name: string, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/skills/{name}/versions', { params: { path: { name } }, ...options }));
  }
}

/** Single-purpose agents, run directly. */
export class Agents {
  static readonly routes = {
    list: 'GET /api/v1/agents', avatarPresets: 'GET /api/v1/agents/avatars/presets', sync: 'GET /api/v1/agents/sync',
    get: 'GET /api/v1/agents/{id}', execute: 'POST /api/v1/agents/{id}',
  } as const;
  private readonly core: Core;
  constructor(core: Core) { this.core = core; }

  list(options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/agents', { ...options }));
  }

  avatarPresets(options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/agents/avatars/presets', { ...options }));
  }

  sync(options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/agents/sync', { ...options }));
  }

  get(id: string, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/agents/{id}', { params: { path: { id } }, ...options }));
  }

  /** Runs the agent as a task (202); follow it with `tasks.stream(task_id)`. */
  execute(id: string, body: RequestBody<'/api/v1/agents/{id}', 'post'>, options?: SubmitOptions) {
    return this.core.call(this.core.api.POST('/api/v1/agents/{id}', { params: { path: { id } }, body, headers: idempotencyHeaders(options), signal: options?.signal }));
  }
}

/** Webhook subscriptions of the tenant (owners and admins): signed, durable deliveries of task and approval events. */
export class Webhooks {
  static readonly routes = {
    create: 'POST /api/v1/webhooks', list: 'GET /api/v1/webhooks', get: 'GET /api/v1/webhooks/{id}', update: 'PATCH /api/v1/webhooks/{id}',
    delete: 'DELETE /api/v1/webhooks/{id}', rotateSecret: 'POST /api/v1/webhooks/{id}/rotate-secret',
    deliveries: 'GET /api/v1/webhooks/{id}/deliveries', replay: 'POST /api/v1/webhooks/{id}/deliveries/{delivery_id}/replay',
  } as const;
  private readonly core: Core;
  constructor(core: Core) { this.core = core; }

  /** Subscribes a URL to events; the answer's `secret` is shown only here. */
  create(body: RequestBody<'/api/v1/webhooks', 'post'>, options?: SubmitOptions) {
    return this.core.call(this.core.api.POST('/api/v1/webhooks', { body, headers: idempotencyHeaders(options), signal: options?.signal }));
  }

  list(options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/webhooks', { ...options }));
  }

  get(id: string, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/webhooks/{id}', { params: { path: { id } }, ...options }));
  }

  update(id: string, body: RequestBody<'/api/v1/webhooks/{id}', 'patch'>, options?: CallOptions) {
    return this.core.call(this.core.api.PATCH('/api/v1/webhooks/{id}', { params: { path: { id } }, body, ...options }));
  }

  async delete(id: string, options?: CallOptions): Promise<void> {
    await this.core.call(this.core.api.DELETE('/api/v1/webhooks/{id}', { params: { path: { id } }, ...options }));
  }

  /** A new signing secret; the old one keeps signing for the server's grace period. */
  rotateSecret(id: string, options?: SubmitOptions) {
    return this.core.call(this.core.api.POST('/api/v1/webhooks/{id}/rotate-secret', { params: { path: { id } }, headers: idempotencyHeaders(options), signal: options?.signal }));
  }

  deliveries(id: string, query: QueryOf<'/api/v1/webhooks/{id}/deliveries', 'get'> = {}, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/api/v1/webhooks/{id}/deliveries', { params: { path: { id }, query: query as Required<typeof query> }, ...options }));
  }

  /** Sends a failed delivery again (same body and `webhook-id`). */
  replay(id: string, deliveryId: string, options?: SubmitOptions) {
    return this.core.call(this.core.api.POST('/api/v1/webhooks/{id}/deliveries/{delivery_id}/replay', { params: { path: { id, delivery_id: deliveryId } }, headers: idempotencyHeaders(options), signal: options?.signal }));
  }
}

/** The OpenAI-compatible layer (`/v1`): models, chat and text completions, and the Responses API. */
export class OpenAI {
  static readonly routes = {
    models: 'GET /v1/models', model: 'GET /v1/models/{model}', chatCompletions: 'POST /v1/chat/completions', textCompletions: 'POST /v1/completions',
    createResponse: 'POST /v1/responses', getResponse: 'GET /v1/responses/{responseId}', deleteResponse: 'DELETE /v1/responses/{responseId}',
    cancelResponse: 'POST /v1/responses/{responseId}/cancel', responseInputItems: 'GET /v1/responses/{responseId}/input_items',
  } as const;
  private readonly core: Core;
  constructor(core: Core) { this.core = core; }

  models(options?: CallOptions) {
    return this.core.call(this.core.api.GET('/v1/models', { ...options }));
  }

  model(model: string, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/v1/models/{model}', { params: { path: { model } }, ...options }));
  }

  // `as never` on the chat bodies: openapi-fetch narrows the generated message type (its `refusal` is null only) so
  // that the request type it accepts is not the one it generated for the same route.

  /** A whole chat completion (`stream` must be unset or false; see `chatCompletionChunks`). */
  chatCompletions(body: RequestBody<'/v1/chat/completions', 'post'>, options?: SubmitOptions) {
    return this.core.call(this.core.api.POST('/v1/chat/completions', { body: { ...body, stream: false } as never, headers: idempotencyHeaders(options), signal: options?.signal }));
  }

  /** A whole legacy text completion (`text_completion`; `stream` must be unset or false; see `textCompletionChunks`). */
  textCompletions(body: RequestBody<'/v1/completions', 'post'>, options?: SubmitOptions) {
    return this.core.call(this.core.api.POST('/v1/completions', { body: { ...body, stream: false }, headers: idempotencyHeaders(options), signal: options?.signal }));
  }

  /** A response of the Responses API, whole (`stream` must be unset or false); `background: true` answers at once. */
  createResponse(body: RequestBody<'/v1/responses', 'post'>, options?: SubmitOptions) {
    return this.core.call(this.core.api.POST('/v1/responses', { body: { ...body, stream: false }, headers: idempotencyHeaders(options), signal: options?.signal }));
  }

  getResponse(responseId: string, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/v1/responses/{responseId}', { params: { path: { responseId } }, ...options }));
  }

  deleteResponse(responseId: string, options?: CallOptions) {
    return this.core.call(this.core.api.DELETE('/v1/responses/{responseId}', { params: { path: { responseId } }, ...options }));
  }

  /** Cancels a background response. */
  cancelResponse(responseId: string, options?: SubmitOptions) {
    return this.core.call(this.core.api.POST('/v1/responses/{responseId}/cancel', { params: { path: { responseId } }, headers: idempotencyHeaders(options), signal: options?.signal }));
  }

  responseInputItems(responseId: string, query: QueryOf<'/v1/responses/{responseId}/input_items', 'get'> = {}, options?: CallOptions) {
    return this.core.call(this.core.api.GET('/v1/responses/{responseId}/input_items', { params: { path: { responseId }, query: query as Required<typeof query> }, ...options }));
  }

  /** A streamed chat completion: its `chat.completion.chunk` objects (this format cannot resume after a drop). */
  async *chatCompletionChunks(body: RequestBody<'/v1/chat/completions', 'post'>, options?: CallOptions): AsyncGenerator<Record<string, unknown>, void, undefined> {
    const { response } = await this.core.api.POST('/v1/chat/completions', { body: { ...body, stream: true } as never, parseAs: 'stream', fetch: this.core.sendOnce, ...options });
    yield* completionChunks(response);
  }

  /** A streamed legacy text completion: its `text_completion` chunks (this format cannot resume after a drop). */
  async *textCompletionChunks(body: RequestBody<'/v1/completions', 'post'>, options?: CallOptions): AsyncGenerator<Record<string, unknown>, void, undefined> {
    const { response } = await this.core.api.POST('/v1/completions', { body: { ...body, stream: true }, parseAs: 'stream', fetch: this.core.sendOnce, ...options });
    yield* completionChunks(response);
  }
}

/** The JSON chunks of a streamed completion, up to `[DONE]`; a refused request throws its error. */
async function* completionChunks(response: Response): AsyncGenerator<Record<string, unknown>, void, undefined> {
  if (!response.ok) throw await errorFromFailedResponse(response);
  const { EventSourceParserStream } = await import('eventsource-parser/stream');
  const frames = response.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  for await (const frame of frames) {
    if (frame.data === '[DONE]') return;
    if (frame.event && frame.event !== 'message') continue;
    yield JSON.parse(frame.data) as Record<string, unknown>;
  }
}
