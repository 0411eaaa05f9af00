import type { RequestBody, ResponseBody as Answer } from './schema';
import { credentialHeaders, loadCredential, saveCredential, type Credential } from './credentials';

export type { Answer, RequestBody };

export type TaskList = Answer<'/api/v1/tasks', 'get'>;
export type TaskSummary = TaskList['tasks'][number];
export type TaskStatus = Answer<'/api/v1/tasks/{id}', 'get'>;
export type SubmitBody = RequestBody<'/api/v1/tasks', 'post'>;
export type Me = Answer<'/api/v1/auth/me', 'get'>;
export type ApprovalList = Answer<'/api/v1/approvals', 'get'>;
export type SessionList = Answer<'/api/v1/sessions', 'get'>;

export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** Told when the credential stops working, so the app can show the sign-in screen. */
let onSignedOut: () => void = () => {};
export function whenSignedOut(listener: () => void): void {
  onSignedOut = listener;
}

export async function api<T>(method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<T> {
  const response = await sendSignedIn(method, path, body, extraHeaders);
  const text = await response.text();
  const parsed = text ? safeJson(text) : undefined;
  if (!response.ok) throw new ApiError(response.status, errorMessage(parsed) ?? `HTTP ${response.status}`);
  return parsed as T;
}

/** Sends with the credential; a 401 refreshes an access token once and sends again, and a second 401 signs out. */
async function sendSignedIn(method: string, path: string, body: unknown, extraHeaders: Record<string, string>): Promise<Response> {
  const sentWith = loadCredential();
  let response = await sendPatiently(method, path, body, extraHeaders);
  if (response.status === 401 && await refreshAccessToken(sentWith)) response = await sendPatiently(method, path, body, extraHeaders);
  if (response.status === 401 && loadCredential()) {
    saveCredential(null);
    onSignedOut();
  }
  return response;
}

/**
 * The console's reads count against the person's rate limit like any client's (spec 8: 60 a minute by default):
 * a read refused with 429 waits the Retry-After it names (up to 10 s) and is sent again, twice at most, so a burst
 * of polling screens slows down rather than showing an error. Writes are not repeated.
 */
async function sendPatiently(method: string, path: string, body: unknown, extraHeaders: Record<string, string>): Promise<Response> {
  let response = await send(method, path, body, extraHeaders);
  for (let retry = 0; retry < 2 && response.status === 429 && method === 'GET'; retry++) {
    const waitSeconds = Number(response.headers.get('retry-after') ?? 1);
    if (!(waitSeconds <= 10)) break;
    await new Promise((resolve) => setTimeout(resolve, Math.max(waitSeconds, 0.2) * 1000));
    response = await send(method, path, body, extraHeaders);
  }
  return response;
}

function send(method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<Response> {
  const headers: Record<string, string> = { ...extraHeaders, ...credentialHeaders(loadCredential()) };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  return fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

let refreshing: Promise<boolean> | undefined;

/**
 * One refresh after a 401 on an access token (`sentWith`, the credential the refused request carried); a pasted key
 * cannot be refreshed. The gateway treats a refresh token presented twice as stolen and revokes its whole family, so
 * requests that fail together (the sign-in check and the first list page leave side by side) share one refresh, and
 * a request whose 401 arrives after that refresh is done only goes again with the new token.
 */
export function refreshAccessToken(sentWith: Credential | null): Promise<boolean> {
  const current = loadCredential();
  if (current?.kind === 'token' && sentWith?.kind === 'token' && current.accessToken !== sentWith.accessToken) return Promise.resolve(true);
  refreshing ??= refreshOnce().finally(() => { refreshing = undefined; });
  return refreshing;
}

async function refreshOnce(): Promise<boolean> {
  const credential = loadCredential();
  if (credential?.kind !== 'token') return false;
  const response = await fetch('/api/v1/auth/refresh', {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ refresh_token: credential.refreshToken }),
  });
  if (!response.ok) return false;
  const pair = await response.json() as { access_token: string; refresh_token: string };
  saveCredential({ kind: 'token', accessToken: pair.access_token, refreshToken: pair.refresh_token });
  return true;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function errorMessage(body: unknown): string | undefined {
  if (body && typeof body === 'object') {
    const record = body as Record<string, unknown>;
    const message = record.message ?? record.error;
    if (typeof message === 'string') return message;
    if (message && typeof message === 'object' && typeof (message as { message?: unknown }).message === 'string') return (message as { message: string }).message;
  }
  return typeof body === 'string' ? body : undefined;
}
export type SessionDetail = Answer<'/api/v1/sessions/{sessionId}', 'get'>;
export type SessionTurns = Answer<'/api/v1/sessions/{sessionId}/events', 'get'>;
export type SessionFiles = Answer<'/api/v1/sessions/{sessionId}/files', 'get'>;
export type SessionBudget = Answer<'/api/v1/sessions/{sessionId}/budget', 'put'>;
export type ScheduleList = Answer<'/api/v1/schedules', 'get'>;
export type Schedule = Answer<'/api/v1/schedules/{id}', 'get'>;
export type ScheduleBody = RequestBody<'/api/v1/schedules', 'post'>;
export type ScheduleCreated = Answer<'/api/v1/schedules', 'post', 201>;
export type ScheduleRuns = Answer<'/api/v1/schedules/{id}/runs', 'get'>;
export type ToolList = Answer<'/api/v1/tools', 'get'>;
export type ToolResult = Answer<'/api/v1/tools/{name}/execute', 'post'>;
export type ToolCall = RequestBody<'/api/v1/tools/{name}/execute', 'post'>;
export type KeyList = Answer<'/api/v1/auth/api-keys', 'get'>;
export type NewKey = Answer<'/api/v1/auth/api-keys', 'post', 201>;
export type KeyBody = RequestBody<'/api/v1/auth/api-keys', 'post'>;

/** A file download with the caller's credential (a plain link could not send it), handed to the browser as a blob. */
export async function download(path: string, filename: string): Promise<void> {
  const response = await sendSignedIn('GET', path, undefined, {});
  if (!response.ok) {
    const text = await response.text();
    throw new ApiError(response.status, errorMessage(safeJson(text)) ?? `HTTP ${response.status}`);
  }
  const url = URL.createObjectURL(await response.blob());
  const link = Object.assign(document.createElement('a'), { href: url, download: filename });
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
