import pLimit from 'p-limit';
import type { Page } from 'playwright-core';
import { parseAllowList } from '../network/allow-list.ts';
import { checkDestination } from '../network/check-destination.ts';
import { hostResolverOf } from '../network/resolve-host.ts';
import { untilAborted } from '../network/until-aborted.ts';
import type { ToolContext } from '../registry.ts';
import { routeThroughGuard } from './route-through-guard.ts';
import { sharedBrowser } from './shared-browser.ts';

/**
 * Requests of one page fetched at once: Chromium's own limit of connections to one host, so a page of one site
 * loads no slower, while a page of many large subresources holds at most this many bodies in the gateway.
 */
const CONCURRENT_REQUESTS = 6;

/**
 * Opens `url` in a page of a fresh browser context, runs `work` on it, and closes the context: no cookie,
 * storage or cache passes from one call to the next (calls of different tasks and tenants share the browser).
 * Every request of the page goes through the network guard (route-through-guard.ts), and whatever escapes
 * routing meets the lockdown proxy of shared-browser.ts. The call ends at BROWSER_TIMEOUT_MS or when the tool's
 * signal fires, whatever `work` is doing.
 */
export async function withGuardedPage<T>(url: string, context: ToolContext, work: (page: Page) => Promise<T>): Promise<T> {
  const { network } = context.settings;
  const { timeoutMs } = context.settings.browser;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([context.signal, timeout]);
  const failures = new Map<string, string>();
  const explained = (error: Error): Error => {
    if (context.signal.aborted) return context.signal.reason;
    if (timeout.aborted) return new Error(`the browser call timed out after ${timeoutMs} ms (BROWSER_TIMEOUT_MS)`);
    return failureOr(error, failures);
  };
  // The guard's own refusal (a loopback address, a file: URL…) before any browser is started.
  await untilAborted(checkDestination(parseUrl(url), parseAllowList(network.allow), hostResolverOf(network.dnsServers)), signal)
    .catch((error: Error) => { throw explained(error); });
  const browserContext = await (await sharedBrowser(context.settings.browser.chromiumPath))
    .newContext({ serviceWorkers: 'block', acceptDownloads: false, javaScriptEnabled: true });
  const closeOnAbort = () => { browserContext.close().catch(() => {}); };
  signal.addEventListener('abort', closeOnAbort, { once: true });
  const fetchSlot = pLimit(CONCURRENT_REQUESTS);
  try {
    browserContext.setDefaultTimeout(timeoutMs);
    await browserContext.route('**/*', (route) => fetchSlot(() => routeThroughGuard(route, network, signal, failures)));
    const page = await browserContext.newPage();
    await page.goto(url, { waitUntil: 'load' }).catch((error: Error) => { throw failureOr(error, failures); });
    const result = await work(page);
    // A click that led to a refused page leaves Chromium's error page, not an exception.
    if (page.url().startsWith('chrome-error:')) throw new Error([...failures.values()].at(-1) ?? 'the page failed to load');
    return result;
  } catch (error) {
    throw explained(error as Error);
  } finally {
    signal.removeEventListener('abort', closeOnAbort);
    await browserContext.close().catch(() => {});
  }
}

/** A navigation the guard could not complete fails in the browser as ERR_BLOCKED_BY_CLIENT: say why instead. */
function failureOr(error: Error, failures: Map<string, string>): Error {
  if (failures.size === 0 || !/ERR_BLOCKED_BY_CLIENT/.test(error.message)) return error;
  return new Error([...failures.values()].at(-1));
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

/** The browser tools' limit on a URL they return: as long as a tool accepts. */
export const MAX_URL_LENGTH = 2048;

/**
 * Where a page ended up, its title and its visible text. Texts are cut inside the page, to MAX_TEXT_LENGTH: a
 * script can make them as long as it likes, and only what is kept crosses into the gateway.
 */
export async function describePage(page: Page): Promise<{ final_url: string; title: string; text: string; truncated: boolean }> {
  const text = await page.evaluate((maxLength) => (document.body?.innerText ?? '').trim().slice(0, maxLength + 1), MAX_TEXT_LENGTH).catch(() => '');
  return { final_url: page.url(), title: await titleOf(page), text: text.slice(0, MAX_TEXT_LENGTH), truncated: text.length > MAX_TEXT_LENGTH };
}

export const titleOf = (page: Page): Promise<string> => page.evaluate((maxLength) => document.title.slice(0, maxLength), MAX_TEXT_LENGTH);
