import type { Route } from 'playwright-core';
import { guardedFetch, type NetworkSettings } from '../network/guarded-fetch.ts';

/** Request headers about Chromium's own connection and encodings, not the request: the guarded fetch sets its own. */
const CONNECTION_REQUEST_HEADERS = new Set([
  'host', 'connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'upgrade', 'te', 'trailer', 'transfer-encoding', 'content-length', 'accept-encoding',
]);
/** Response headers that no longer describe the body handed to the page: the guarded fetch decoded it and read it whole. */
const CONNECTION_RESPONSE_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-encoding', 'content-length']);

/**
 * Fetches a page's request (a document, a frame, a subresource) through guardedFetch, the one guarded network
 * path of every tool: each hop's host checked, the connection pinned to the checked address, redirects followed
 * hop by hop, the body read only up to TOOLS_FETCH_MAX_BYTES. Redirects cannot be left to Chromium: Playwright
 * routes only the first URL of a chain, and Chromium would follow a fulfilled redirect with its own network stack
 * (which the lockdown proxy of shared-browser.ts then fails). So the last answer is fulfilled to the page under
 * the URL it asked for. A request that cannot be completed is aborted as blocked by the client, and why is kept in
 * `failures` under its URL.
 */
export async function routeThroughGuard(route: Route, network: NetworkSettings, signal: AbortSignal, failures: Map<string, string>): Promise<void> {
  const request = route.request();
  try {
    const response = await guardedFetch(request.url(), {
      network, signal, method: request.method(), headers: forwardedHeaders(await request.allHeaders()), body: request.postDataBuffer() ?? undefined,
    });
    // Half a script or half an image would mislead the page; the call says why instead.
    if (response.bodyTruncated) throw new Error(`${response.finalUrl} answered more than ${network.fetchMaxBytes} bytes (TOOLS_FETCH_MAX_BYTES)`);
    await route.fulfill({ status: response.status, headers: fulfilledHeaders(response.headers), body: response.body });
  } catch (error) {
    failures.set(request.url(), (error as Error).message);
    await route.abort('blockedbyclient').catch(() => {});
  }
}

function forwardedHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !CONNECTION_REQUEST_HEADERS.has(name.toLowerCase())));
}

function fulfilledHeaders(headers: Headers): Record<string, string> {
  const fulfilled = Object.fromEntries([...headers].filter(([name]) => !CONNECTION_RESPONSE_HEADERS.has(name)));
  const cookies = headers.getSetCookie();
  // Playwright splits a set-cookie value at line breaks into one header per cookie.
  if (cookies.length > 0) fulfilled['set-cookie'] = cookies.join('\n');
  return fulfilled;
}
