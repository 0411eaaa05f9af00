import type { Page, Route } from 'playwright-core';
import { parseAllowList, type AllowList } from '../network/allow-list.ts';
import { checkDestination, resolveWithSystem } from '../network/check-destination.ts';
import type { ToolContext } from '../registry.ts';
import { sharedBrowser } from './shared-browser.ts';

/**
 * Opens `url` in a page of a fresh browser context, runs `work` on it, and closes the context: no cookie,
 * storage or cache passes from one call to the next (calls of different tasks and tenants share the browser).
 * The call ends at BROWSER_TIMEOUT_MS or when the tool's signal fires, whatever `work` is doing.
 */
export async function withGuardedPage<T>(url: string, context: ToolContext, work: (page: Page) => Promise<T>): Promise<T> {
  const allowList = parseAllowList(context.config.network.allow);
  // The guard's own refusal (a loopback address, a file: URL…) before any browser is started.
  await checkDestination(parseUrl(url), allowList, resolveWithSystem);
  const { timeoutMs } = context.config.browser;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([context.signal, timeout]);
  signal.throwIfAborted();
  const browserContext = await (await sharedBrowser(context.config.browser.chromiumPath))
    .newContext({ serviceWorkers: 'block', acceptDownloads: false, javaScriptEnabled: true });
  const closeOnAbort = () => { browserContext.close().catch(() => {}); };
  signal.addEventListener('abort', closeOnAbort, { once: true });
  const refusals = new Map<string, string>();
  try {
    browserContext.setDefaultTimeout(timeoutMs);
    await browserContext.route('**/*', (route) => guardRoute(route, allowList, context.config.network.fetchMaxBytes, refusals));
    const page = await browserContext.newPage();
    await page.goto(url, { waitUntil: 'load' }).catch((error: Error) => { throw refusalOr(error, refusals); });
    const result = await work(page);
    // A click that led to a refused page leaves Chromium's error page, not an exception.
    if (page.url().startsWith('chrome-error:')) throw new Error([...refusals.values()].at(-1) ?? 'the page failed to load');
    return result;
  } catch (error) {
    if (context.signal.aborted) throw context.signal.reason;
    if (timeout.aborted) throw new Error(`the browser call timed out after ${timeoutMs} ms (BROWSER_TIMEOUT_MS)`);
    throw refusalOr(error as Error, refusals);
  } finally {
    signal.removeEventListener('abort', closeOnAbort);
    await browserContext.close().catch(() => {});
  }
}

const MAX_REDIRECTS = 5;

/**
 * Every request of the page (documents, frames, subresources, and each hop of a redirect) passes the network
 * guard before it leaves. Playwright calls a route only for the first URL of a redirect chain, and a redirect
 * fulfilled to Chromium is followed by its own network stack, unrouted (which the lockdown proxy of
 * shared-browser.ts then fails). So the request is fetched here, its redirects followed here hop by hop, each
 * checked, and the last answer is fulfilled to the page under the URL it asked for.
 */
async function guardRoute(route: Route, allowList: AllowList, maxBytes: number, refusals: Map<string, string>): Promise<void> {
  const requested = route.request().url();
  let target = requested;
  try {
    for (let hop = 0; ; hop++) {
      await checkDestination(new URL(target), allowList, resolveWithSystem).catch((error: Error) => {
        throw new Refusal(target === requested ? error.message : `${error.message}; reached by a redirect to ${target}`);
      });
      const response = await route.fetch({ url: target, maxRedirects: 0 });
      const location = response.headers().location;
      if (response.status() >= 300 && response.status() < 400 && location) {
        if (hop === MAX_REDIRECTS) throw new Refusal(`stopped after ${MAX_REDIRECTS} redirects (next: ${location})`);
        target = new URL(location, target).toString();
        continue;
      }
      const body = await response.body();
      if (body.length > maxBytes) throw new Refusal(`${target} answered more than ${maxBytes} bytes (TOOLS_FETCH_MAX_BYTES)`);
      return await route.fulfill({ response, body });
    }
  } catch (error) {
    if (error instanceof Refusal) refusals.set(requested, error.message);
    // Else the context closed meanwhile, or the server failed: the page sees a failed request either way.
    await route.abort(error instanceof Refusal ? 'blockedbyclient' : 'failed').catch(() => {});
  }
}

class Refusal extends Error {}

/** A navigation the guard refused fails in the browser as ERR_BLOCKED_BY_CLIENT: say why instead. */
function refusalOr(error: Error, refusals: Map<string, string>): Error {
  if (refusals.size === 0 || !/ERR_BLOCKED_BY_CLIENT/.test(error.message)) return error;
  return new Error([...refusals.values()].at(-1));
}

function parseUrl(url: string): URL {
  try {
    return new URL(url);
  } catch {
    throw new Error(`not a valid URL: ${url}`);
  }
}

/** The browser tools' limit on text they return, in characters. */
export const MAX_TEXT_LENGTH = 10_000;

/** Where a page ended up, its title and its visible text (capped). */
export async function describePage(page: Page): Promise<{ final_url: string; title: string; text: string; truncated: boolean }> {
  const text = (await page.locator('body').innerText().catch(() => '')).trim();
  return { final_url: page.url(), title: await page.title(), text: text.slice(0, MAX_TEXT_LENGTH), truncated: text.length > MAX_TEXT_LENGTH };
}
