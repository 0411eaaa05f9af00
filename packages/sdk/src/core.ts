import createClient, { type Client } from 'openapi-fetch';
import { connectionError, errorFromResponse, type AgentgateError } from './errors.ts';
import type { paths } from './generated/openapi.ts';
import { retryingFetch, type RetryOptions } from './transport.ts';

export interface ClientOptions {
  /** The gateway's base URL, e.g. `http://127.0.0.1:8080` (default: AGENTGATE_URL, else http://127.0.0.1:8080). */
  baseUrl?: string;
  /** An API key (`sk_live_…`), sent as `X-API-Key` (default: AGENTGATE_API_KEY). */
  apiKey?: string;
  /** A JWT access token from `auth.login`, sent as `Authorization: Bearer`. */
  accessToken?: string;
  /** Selects the tenant in a multi-tenant deployment (`X-Tenant-ID`). */
  tenantId?: string;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** Retries for calls that are safe to repeat; `false` turns them off. */
  retry?: RetryOptions | false;
  /** The fetch to use (default: the global fetch). */
  fetch?: typeof fetch;
}

/** Options every call takes. */
export interface CallOptions {
  /** Aborts the call (and a stream's reconnections). */
  signal?: AbortSignal;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
}

/** Options of calls that create something: the Idempotency-Key, generated when not given, makes retries safe. */
export interface SubmitOptions extends CallOptions {
  idempotencyKey?: string;
  /** W3C trace context to continue (`traceparent`). */
  traceparent?: string;
}

type ApiResult<T> = { data?: T; error?: unknown; response: Response };

const environment = (name: string): string | undefined =>
  (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env[name] || undefined;

/** What every resource shares: the typed openapi-fetch client, its retrying and non-retrying fetches, the base URL. */
export class Core {
  readonly baseUrl: string;
  readonly api: Client<paths>;
  /** For calls that must not be repeated by the transport (a stream's own reconnection loop does that). */
  readonly sendOnce: (request: Request) => Promise<Response>;
  readonly headers: Record<string, string>;

  constructor(options: ClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? environment('AGENTGATE_URL') ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
    const apiKey = options.apiKey ?? environment('AGENTGATE_API_KEY');
    this.headers = {
      ...(apiKey ? { 'x-api-key': apiKey } : {}),
      ...(options.accessToken ? { authorization: `Bearer ${options.accessToken}` } : {}),
      ...(options.tenantId ? { 'x-tenant-id': options.tenantId } : {}),
      ...options.headers,
    };
    const send = options.fetch ?? globalThis.fetch;
    const guarded = (inner: (request: Request) => Promise<Response>) => async (request: Request) => {
      try {
        return await inner(request);
      } catch (error) {
        if (request.signal.aborted) throw request.signal.reason;
        throw connectionError(error, this.baseUrl);
      }
    };
    this.sendOnce = guarded((request) => send(request));
    this.api = createClient<paths>({ baseUrl: this.baseUrl, headers: this.headers, fetch: guarded(retryingFetch(send, options.retry ?? {})) });
  }

  /** The body of a successful answer, or the typed error of a failed one. */
  async call<T>(pending: Promise<ApiResult<T>>): Promise<T> {
    const { data, error, response } = await pending;
    if (!response.ok) throw errorFromResponse(response, error);
    return data as T;
  }

  /** Like `call`, with the answer's headers (ids, ETag, idempotency replay). */
  async callWithHeaders<T>(pending: Promise<ApiResult<T>>): Promise<{ data: T; headers: Headers; status: number }> {
    const { data, error, response } = await pending;
    if (!response.ok) throw errorFromResponse(response, error);
    return { data: data as T, headers: response.headers, status: response.status };
  }
}

export function idempotencyHeaders(options: SubmitOptions | undefined): Record<string, string> {
  return {
    'idempotency-key': options?.idempotencyKey ?? crypto.randomUUID(),
    ...(options?.traceparent ? { traceparent: options.traceparent } : {}),
    ...options?.headers,
  };
}

export type { AgentgateError };
