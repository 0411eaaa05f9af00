import { APICallError } from '@ai-sdk/provider';

/**
 * What a failed provider call means for the next step:
 * - `transient`: 429, overloaded (529), 5xx, timeouts, dropped connections: back off (honouring Retry-After) and
 *   retry the same deployment, which counts towards its cooldown;
 * - `deployment`: this deployment cannot serve (401/403/404, an account out of credit): no retry, the next candidate is tried;
 * - `context_length`: the prompt is longer than the model takes: the history is trimmed once, else the call fails;
 * - `request`: the request itself is refused (400, 422, content policy): neither retried nor sent elsewhere.
 */
export type FailureKind = 'transient' | 'deployment' | 'context_length' | 'request';

export type ClassifiedFailure = {
  kind: FailureKind;
  /** A short reason for errors and events: `rate limited (HTTP 429)`, `overloaded (HTTP 529)`, … */
  reason: string;
  /** How long the provider asked us to wait (Retry-After, retry-after-ms, x-ratelimit-reset-*), when it said. */
  retryAfterMs?: number;
};

const CONTEXT_LENGTH = /context[ _-]?length|context window|maximum context|prompt is too long|too many tokens|maximum.*tokens.*exceeded|input is too long/i;
const CONTENT_POLICY = /content[ _-]?policy|content_filter|safety system|flagged/i;

export function classifyProviderError(error: unknown): ClassifiedFailure {
  if (APICallError.isInstance(error)) return classifyApiCallError(error);
  if (error instanceof ProviderStreamError) return classifyStreamError(error);
  const message = error instanceof Error ? error.message : String(error);
  if (CONTEXT_LENGTH.test(message)) return { kind: 'context_length', reason: 'context length exceeded' };
  // A reset socket, a stream cut short or a timeout is worth another try; any other failure of the client (the mock's
  // scripted one, a provider package refusing its input) would fail again alike, so the next candidate is tried.
  if (error instanceof TypeError || /timeout/i.test(error instanceof Error ? error.name : '') || NETWORK.test(message)) {
    return { kind: 'transient', reason: describeDrop(error) };
  }
  return { kind: 'deployment', reason: 'failed' };
}

const NETWORK = /terminated|stream ended early|ECONNRESET|ECONNREFUSED|EPIPE|socket|network|fetch failed|other side closed|timed? ?out/i;

function classifyApiCallError(error: APICallError): ClassifiedFailure {
  const status = error.statusCode;
  const text = `${error.message} ${error.responseBody ?? ''}`;
  const retryAfterMs = readRetryAfter(error.responseHeaders) ?? readRetryInfo(error.responseBody);
  const withWait = retryAfterMs === undefined ? {} : { retryAfterMs };
  // A 2xx whose body broke off: the stream was cut after the provider accepted the call.
  if (status === undefined || status < 300) return { kind: 'transient', reason: describeDrop(error), ...withWait };
  // OpenAI answers an account out of credit with a 429 too; waiting does not refill it.
  if (status === 429 && /insufficient_quota/.test(text)) return { kind: 'deployment', reason: 'quota exhausted (HTTP 429, insufficient_quota)' };
  if (status === 429) return { kind: 'transient', reason: 'rate limited (HTTP 429)', ...withWait };
  if (status === 529) return { kind: 'transient', reason: 'overloaded (HTTP 529)', ...withWait };
  if (status === 408 || status === 409 || status >= 500) return { kind: 'transient', reason: `provider error (HTTP ${status})`, ...withWait };
  if (CONTEXT_LENGTH.test(text)) return { kind: 'context_length', reason: `context length exceeded (HTTP ${status})` };
  if (status === 401 || status === 403) return { kind: 'deployment', reason: `not authorised (HTTP ${status})` };
  if (status === 404) return { kind: 'deployment', reason: 'model or endpoint not found (HTTP 404)' };
  if (CONTENT_POLICY.test(text)) return { kind: 'request', reason: `refused by content policy (HTTP ${status})` };
  return { kind: 'request', reason: `bad request (HTTP ${status})` };
}

/**
 * An error the provider sent inside a stream it had opened with HTTP 200: Anthropic's `event: error` (`overloaded_error`
 * under load), an OpenAI-style `{"error": …}` chunk. The AI SDK hands these over as plain objects; p-retry and our
 * classification need an Error that keeps the provider's type and code.
 */
export class ProviderStreamError extends Error {
  readonly errorType: string;
  readonly code: string;
  readonly statusCode?: number;

  constructor(sent: { type?: unknown; code?: unknown; message?: unknown; statusCode?: unknown }) {
    super(typeof sent.message === 'string' && sent.message !== '' ? sent.message : 'the provider sent an error in the stream');
    this.name = 'ProviderStreamError';
    this.errorType = typeof sent.type === 'string' ? sent.type : '';
    this.code = typeof sent.code === 'string' ? sent.code : '';
    if (typeof sent.statusCode === 'number') this.statusCode = sent.statusCode;
  }
}

/** What a stream's `error` part carries, as something to throw: an Error as it is, a provider's error object wrapped. */
export function streamErrorOf(sent: unknown): Error {
  if (sent instanceof Error) return sent;
  if (typeof sent === 'object' && sent !== null) return new ProviderStreamError(sent);
  return new ProviderStreamError({ message: String(sent) });
}

function classifyStreamError(error: ProviderStreamError): ClassifiedFailure {
  const named = [error.errorType, error.code].filter(Boolean).join(', ');
  const label = (what: string) => `${what} (error event in the stream${named === '' ? '' : `: ${named}`})`;
  const sent = `${error.errorType} ${error.code}`;
  if (/overloaded/i.test(sent) || error.statusCode === 529) return { kind: 'transient', reason: label('overloaded') };
  if (/rate_limit/i.test(sent) || error.statusCode === 429) return { kind: 'transient', reason: label('rate limited') };
  if (CONTEXT_LENGTH.test(`${sent} ${error.message}`)) return { kind: 'context_length', reason: label('context length exceeded') };
  if (/authentication|permission|not_found|insufficient_quota|billing/i.test(sent)) return { kind: 'deployment', reason: label('not served') };
  if (CONTENT_POLICY.test(`${sent} ${error.message}`)) return { kind: 'request', reason: label('refused by content policy') };
  if (/invalid_request|request_too_large/i.test(sent)) return { kind: 'request', reason: label('bad request') };
  // api_error, server_error or a type we do not know: the provider failed after it had accepted the call.
  return { kind: 'transient', reason: label('provider error') };
}

function describeDrop(error: unknown): string {
  const name = error instanceof Error ? error.name : '';
  return /timeout/i.test(name) ? 'timed out' : 'connection dropped';
}

/** The longest wait any of the provider's headers asks for, in milliseconds. */
export function readRetryAfter(headers: Record<string, string> | undefined): number | undefined {
  if (headers === undefined) return undefined;
  const waits: number[] = [];
  const ms = Number.parseFloat(headers['retry-after-ms'] ?? '');
  if (Number.isFinite(ms) && ms >= 0) waits.push(ms);
  const retryAfter = headers['retry-after'];
  if (retryAfter !== undefined) {
    const seconds = Number.parseFloat(retryAfter);
    if (Number.isFinite(seconds)) waits.push(seconds * 1000);
    else if (!Number.isNaN(Date.parse(retryAfter))) waits.push(Math.max(0, Date.parse(retryAfter) - Date.now()));
  }
  for (const name of ['x-ratelimit-reset-requests', 'x-ratelimit-reset-tokens']) {
    const reset = parseResetDuration(headers[name]);
    if (reset !== undefined) waits.push(reset);
  }
  return waits.length === 0 ? undefined : Math.max(...waits);
}

/**
 * Google's wait, which it sends in the body instead of a header: a `google.rpc.RetryInfo` detail of the error, its
 * `retryDelay` a duration such as `37s`.
 */
function readRetryInfo(body: string | undefined): number | undefined {
  if (body === undefined || !body.includes('RetryInfo')) return undefined;
  try {
    const details: unknown = JSON.parse(body)?.error?.details;
    if (!Array.isArray(details)) return undefined;
    const info = details.find((detail) => String(detail?.['@type']).endsWith('google.rpc.RetryInfo'));
    return typeof info?.retryDelay === 'string' ? parseResetDuration(info.retryDelay) : undefined;
  } catch {
    return undefined;
  }
}

/** OpenAI's reset headers and Google's retry delays: durations such as `1s`, `6m0s`, `250ms`, `37.5s`. */
function parseResetDuration(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  if (parts.length === 0) return undefined;
  const unitMs = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
  return parts.reduce((total, [, amount, unit]) => total + Number(amount) * unitMs[unit as keyof typeof unitMs], 0);
}

/** A model call that failed: names the provider, the model and why. */
export class ProviderCallError extends Error {
  readonly kind: FailureKind;
  /**
   * Set when every candidate failed for a passing reason before any text went out, so the same call may succeed
   * later: how long until the first of them leaves its cooldown (0 when none is cooling down).
   */
  readonly retryInMs?: number;

  constructor(message: string, kind: FailureKind, options?: ErrorOptions & { retryInMs?: number }) {
    super(message, options);
    this.name = 'ProviderCallError';
    this.kind = kind;
    if (options?.retryInMs !== undefined) this.retryInMs = options.retryInMs;
  }
}
