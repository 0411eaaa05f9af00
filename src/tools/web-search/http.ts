import type { WebSearchProviderName } from '../../config.ts';
import { readCapped, type CappedBody } from '../network/read-capped.ts';
import { SearchFailure } from './provider.ts';

/**
 * Every request to a search vendor leaves through here, and only here. Vendor hosts are public APIs; to put
 * them behind the network guard, this function calls `guardedFetch` (src/tools/network/) instead of `fetch`.
 */
const sendRequest = (url: URL, init: RequestInit): Promise<Response> => fetch(url, init);

export interface ProviderRequest {
  provider: WebSearchProviderName;
  url: URL;
  init: RequestInit;
  signal: AbortSignal;
  timeoutMs: number;
  maxAnswerBytes: number;
  /** Named in an auth failure, so the operator knows which setting to fix. */
  credentialName: string;
  /** A vendor that refuses a credential with a status other than 401/403 (Brave: 422 SUBSCRIPTION_TOKEN_INVALID). */
  isAuthFailure?: (status: number, body: unknown) => boolean;
}

/** Sends a vendor request and returns its JSON body; every way it can go wrong becomes a SearchFailure. */
export async function requestProviderJson(request: ProviderRequest): Promise<unknown> {
  const { response, text } = await send(request);
  if (!response.ok) throw failureOf(request, response, text);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new SearchFailure(request.provider, 'malformed', `${request.provider} answered with something other than JSON`, { cause: error });
  }
}

/** The request and the reading of its answer, both within the time limit; the answer is read only up to its size limit. */
async function send({ provider, url, init, signal, timeoutMs, maxAnswerBytes }: ProviderRequest): Promise<{ response: Response; text: string }> {
  const deadline = AbortSignal.timeout(timeoutMs);
  let answer: { response: Response; body: CappedBody };
  try {
    const response = await sendRequest(url, { ...init, signal: AbortSignal.any([signal, deadline]) });
    answer = { response, body: await readCapped(response.body, maxAnswerBytes) };
  } catch (error) {
    if (signal.aborted) throw error;
    if (deadline.aborted) throw new SearchFailure(provider, 'upstream', `${provider} did not answer within ${timeoutMs / 1000} s`, { cause: error });
    throw new SearchFailure(provider, 'upstream', `${provider} could not be reached: ${reasonOf(error)}`, { cause: error });
  }
  if (answer.body.truncated) throw new SearchFailure(provider, 'malformed', `${provider} answered more than ${maxAnswerBytes} bytes (TOOLS_FETCH_MAX_BYTES)`);
  return { response: answer.response, text: new TextDecoder().decode(answer.body.bytes) };
}

function failureOf({ provider, credentialName, isAuthFailure }: ProviderRequest, response: Response, text: string): SearchFailure {
  const body = parsedOrUndefined(text);
  const detail = vendorMessage(body);
  const said = detail ? `: ${detail}` : '';
  if (response.status === 401 || response.status === 403 || isAuthFailure?.(response.status, body)) {
    return new SearchFailure(provider, 'auth', `${provider} refused the request (HTTP ${response.status})${said}; check ${credentialName}`);
  }
  if (response.status === 429) {
    const retryAfterSeconds = retryAfterOf(response.headers);
    const wait = retryAfterSeconds === undefined ? '' : `; retry after ${retryAfterSeconds} s`;
    return new SearchFailure(provider, 'rate-limited', `${provider} rate limit reached (HTTP 429)${said}${wait}`, { retryAfterSeconds });
  }
  return new SearchFailure(provider, 'upstream', `${provider} failed (HTTP ${response.status})${said}`);
}

/** Retry-After in seconds or as an HTTP date; else Brave's X-RateLimit-Reset, whose first value is the nearest window. */
export function retryAfterOf(headers: Headers): number | undefined {
  const retryAfter = headers.get('retry-after')?.trim();
  if (retryAfter) {
    if (/^\d+$/.test(retryAfter)) return Number(retryAfter);
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, Math.ceil((date - Date.now()) / 1000));
  }
  const reset = headers.get('x-ratelimit-reset')?.split(',')[0]?.trim();
  return reset && /^\d+$/.test(reset) ? Number(reset) : undefined;
}

const MESSAGE_CHARS = 200;

function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The vendor's own words from an error body: Tavily `{detail:{error}}`, Brave `{error:{detail}}`, Exa `{error}`. */
function vendorMessage(parsed: any): string | undefined {
  const candidates = [parsed?.detail?.error, parsed?.error?.detail, parsed?.error?.message, parsed?.error, parsed?.detail, parsed?.message];
  const message = candidates.find((candidate) => typeof candidate === 'string' && candidate.trim() !== '') as string | undefined;
  return message?.trim().slice(0, MESSAGE_CHARS).replace(/[.\s]+$/, '');
}

function reasonOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
