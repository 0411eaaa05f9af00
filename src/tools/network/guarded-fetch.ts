import type { LookupFunction } from 'node:net';
import { Agent, fetch } from 'undici';
import type { Config } from '../../config.ts';
import { parseAllowList } from './allow-list.ts';
import { checkDestination } from './check-destination.ts';
import { readCapped } from './read-capped.ts';
import { hostResolverOf, type ResolvedAddress } from './resolve-host.ts';
import { untilAborted } from './until-aborted.ts';

/** What every networked tool passes on from its context's config. */
export type NetworkSettings = Readonly<Config['network']>;

export interface GuardedFetchOptions {
  network: NetworkSettings;
  /** The tool's signal: a cancelled task stops its fetches. */
  signal?: AbortSignal;
  /** GET unless said. */
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export interface GuardedResponse {
  /** Where the last redirect led (the requested URL when there was none). */
  finalUrl: string;
  status: number;
  headers: Headers;
  body: Buffer;
  /** The body was longer than TOOLS_FETCH_MAX_BYTES and was cut there. */
  bodyTruncated: boolean;
}

export const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** The headers that follow a redirect to another origin; credentials (an API key, a cookie) stay behind. */
const CROSS_ORIGIN_HEADERS = new Set(['user-agent', 'accept', 'accept-language', 'content-type']);

/**
 * A request that only reaches what the network guard allows: each hop's host is resolved (TOOLS_DNS_SERVERS,
 * else the system) and checked here, the connection goes to the checked address (a second DNS answer cannot
 * differ), and redirects are followed here, at most MAX_REDIRECTS, each re-checked. The whole exchange is capped
 * in time, and the body is read only up to the size cap. Every tool that reaches a URL it was given (the web
 * tools, robots.txt, each request of the browser's pages) goes through here.
 */
export async function guardedFetch(url: string, options: GuardedFetchOptions): Promise<GuardedResponse> {
  const { network } = options;
  const allowList = parseAllowList(network.allow);
  const resolveHost = hostResolverOf(network.dnsServers);
  const timeout = AbortSignal.timeout(network.fetchTimeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let current = parseHttpUrl(url);
  let request: HopRequest = { method: options.method ?? 'GET', headers: options.headers, body: options.body };
  try {
    for (let hop = 0; ; hop++) {
      const checked = checkDestination(current, allowList, resolveHost);
      const addresses = await untilAborted(hop === 0 ? checked : checked.catch(explainRedirect(current)), signal);
      const answer = await fetchPinned(current, addresses, request, network.fetchMaxBytes, signal);
      if (!('redirectTo' in answer)) return answer;
      if (hop === MAX_REDIRECTS) throw new Error(`stopped after ${MAX_REDIRECTS} redirects (next: ${answer.redirectTo})`);
      request = redirectedRequest(request, answer.status, current, answer.redirectTo);
      current = answer.redirectTo;
    }
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    if (timeout.aborted) throw new Error(`timed out after ${network.fetchTimeoutMs} ms (TOOLS_FETCH_TIMEOUT_MS)`);
    throw describeFailure(error);
  }
}

const explainRedirect = (target: URL) => (error: Error): never => {
  throw new Error(`${error.message}; reached by a redirect to ${target}`);
};

function parseHttpUrl(url: string): URL {
  try {
    return new URL(url);
  } catch {
    throw new Error(`not a valid URL: ${url}`);
  }
}

type HopRequest = Pick<GuardedFetchOptions, 'method' | 'headers' | 'body'>;

/**
 * As fetch does: a 303, and a 301 or 302 answering a POST, are followed with a GET without the body; a
 * redirect to another origin carries no credentials.
 */
function redirectedRequest(request: HopRequest, status: number, from: URL, to: URL): HopRequest {
  const becomesGet = status === 303 ? request.method !== 'HEAD' : (status === 301 || status === 302) && request.method === 'POST';
  const headers = from.origin === to.origin
    ? request.headers
    : Object.fromEntries(Object.entries(request.headers ?? {}).filter(([name]) => CROSS_ORIGIN_HEADERS.has(name.toLowerCase())));
  return becomesGet ? { method: 'GET', headers, body: undefined } : { ...request, headers };
}

/** One request on a connection of its own to the checked addresses; a redirect's body is left unread. */
async function fetchPinned(
  url: URL, addresses: ResolvedAddress[], request: HopRequest, maxBytes: number, signal: AbortSignal,
): Promise<GuardedResponse | { redirectTo: URL; status: number }> {
  const agent = new Agent({ connect: { lookup: pinnedLookup(addresses) } });
  try {
    const response = await fetch(url, { ...request, dispatcher: agent, redirect: 'manual', signal });
    const location = response.headers.get('location');
    if (REDIRECT_STATUSES.has(response.status) && location !== null) {
      await response.body?.cancel();
      return { redirectTo: new URL(location, url), status: response.status };
    }
    const { bytes, truncated } = await readCapped(response.body, maxBytes);
    return { finalUrl: url.toString(), status: response.status, headers: new Headers([...response.headers]), body: bytes, bodyTruncated: truncated };
  } finally {
    agent.destroy().catch(() => {});
  }
}

/** Answers every lookup of the connection with the addresses already checked, never asking DNS again. */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, lookupOptions, callback) => {
    if (lookupOptions.all) callback(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  };
}

/** undici says "fetch failed" and keeps the reason (ECONNREFUSED, a TLS error…) in its cause. */
function describeFailure(error: unknown): Error {
  if (!(error instanceof Error)) return new Error(String(error));
  const cause = error.cause as (Error & { code?: string }) | undefined;
  if (error.message === 'fetch failed' && cause) return new Error(`fetch failed: ${cause.code ?? cause.message}`);
  return error;
}
