import type { JSONSchema7 } from '@ai-sdk/provider';
import { workspaceOf } from '../files/workspace-scope.ts';
import { writeWorkspaceFile, type WrittenFile } from '../files/workspace-store.ts';
import type { ToolDefinition } from '../registry.ts';
import { describePage, MAX_TEXT_LENGTH, MAX_URL_LENGTH, titleOf, withGuardedPage } from './guarded-page.ts';

const MAX_LINKS = 100;

const url = { type: 'string', minLength: 1, maxLength: 2048, description: 'The page to open (http or https)' } as const;
const selector = { type: 'string', minLength: 1, maxLength: 1000, description: 'A CSS selector (Playwright syntax), e.g. "a#next" or "text=Sign in"' } as const;

function objectOf(properties: Record<string, JSONSchema7>, required: string[]): JSONSchema7 {
  return { type: 'object', properties, required, additionalProperties: false };
}

/**
 * The browser tools (issue 15, scope 8). Each call opens its url in a fresh context of a shared headless
 * Chromium, so nothing (cookies, logins, the page) carries over from one call to the next: an interaction is
 * one call. They only read pages, so none is dangerous: a click or a typed text reaches only a site the
 * network guard allows, in a context that holds no one's credentials. A click or a submitted form may still change
 * that site, so those two run at most once (ToolEffects); a screenshot records its call with its file.
 */
const browserTool = (tool: Omit<ToolDefinition, 'category' | 'costPerUseUsd' | 'dangerous' | 'effects'> & Partial<Pick<ToolDefinition, 'effects'>>): ToolDefinition =>
  ({ effects: 'none', ...tool, category: 'browser', costPerUseUsd: 0, dangerous: false });

export const browserNavigateTool = browserTool({
  name: 'browser_navigate',
  description: `Opens a page in a headless browser (scripts run) and returns its final url, title and visible text (at most ${MAX_TEXT_LENGTH} characters).`,
  parameters: objectOf({ url }, ['url']),
  execute: (input, context) => withGuardedPage(String(input.url), context, async (page) => ({ url: input.url, ...await describePage(page) })),
});

export const browserExtractTool = browserTool({
  name: 'browser_extract',
  description: `Opens a page in a headless browser and returns the visible text of the element a selector names (else of the main content) and its links (at most ${MAX_LINKS}).`,
  parameters: objectOf({ url, selector: { ...selector, description: 'The element to read; default: main, article, or the body' } }, ['url']),
  execute: (input, context) => withGuardedPage(String(input.url), context, async (page) => {
    const wanted = typeof input.selector === 'string' ? input.selector : 'main, article, [role=main], body';
    const element = page.locator(wanted).first();
    if (await element.count() === 0) throw new Error(`no element of ${page.url()} matches ${JSON.stringify(wanted)}`);
    // Cut inside the page: a script can make the text, titles and links as long as it likes.
    const { text, links } = await element.evaluate((root, [maxLength, maxLinks, maxUrlLength]) => ({
      text: (root as HTMLElement).innerText.trim().slice(0, maxLength + 1),
      links: [...root.querySelectorAll('a[href]')].slice(0, maxLinks)
        .map((link) => ({ text: (link as HTMLElement).innerText.trim().slice(0, maxLength), url: (link as HTMLAnchorElement).href.slice(0, maxUrlLength) })),
    }), [MAX_TEXT_LENGTH, MAX_LINKS, MAX_URL_LENGTH]);
    return { url: input.url, final_url: page.url(), title: await titleOf(page), text: text.slice(0, MAX_TEXT_LENGTH), truncated: text.length > MAX_TEXT_LENGTH, links };
  }),
});

export const browserClickTool = browserTool({
  name: 'browser_click',
  effects: 'external',
  description: 'Opens a page in a headless browser, clicks the element a selector names, waits for what it loads, and returns the resulting final url, title and visible text.',
  parameters: objectOf({ url, selector }, ['url', 'selector']),
  execute: (input, context) => withGuardedPage(String(input.url), context, async (page) => {
    await page.locator(String(input.selector)).first().click();
    await page.waitForLoadState('load');
    return { url: input.url, ...await describePage(page) };
  }),
});

export const browserTypeTool = browserTool({
  name: 'browser_type',
  effects: 'external',
  description: 'Opens a page in a headless browser, types text into the field a selector names (replacing its content), optionally presses Enter to submit, and returns the resulting final url, title and visible text.',
  parameters: objectOf({
    url, selector, text: { type: 'string', maxLength: 10_000, description: 'The text to type' },
    submit: { type: 'boolean', description: 'Press Enter afterwards (default false)' },
  }, ['url', 'selector', 'text']),
  execute: (input, context) => withGuardedPage(String(input.url), context, async (page) => {
    const field = page.locator(String(input.selector)).first();
    await field.fill(String(input.text));
    if (input.submit === true) {
      await field.press('Enter');
      await page.waitForLoadState('load');
    }
    return { url: input.url, ...await describePage(page) };
  }),
});

export const browserScreenshotTool = browserTool({
  name: 'browser_screenshot',
  effects: 'database',
  description: 'Opens a page in a headless browser and stores a PNG screenshot of it (the viewport, or the whole page with `full_page`) in the session workspace under screenshots/; returns its path, width, height and size.',
  parameters: objectOf({ url, full_page: { type: 'boolean', description: 'The whole scrollable page instead of the viewport (default false)' } }, ['url']),
  async execute(input, context) {
    if (context.sessionId === null) {
      throw new Error('browser_screenshot stores its PNG in a session\'s workspace and this call has no session: call it from a task, or give a session_id');
    }
    const scope = workspaceOf(context);
    const png = await withGuardedPage(String(input.url), context, (page) => page.screenshot({ type: 'png', fullPage: input.full_page === true }));
    const path = `screenshots/${new Date().toISOString().replaceAll(':', '-')}.png`;
    // A PNG's IHDR chunk holds the width and height, big-endian, at bytes 16 and 20.
    const outputOf = ({ file }: WrittenFile) => ({ path: file.path, width: png.readUInt32BE(16), height: png.readUInt32BE(20), bytes: file.size });
    const written = await writeWorkspaceFile(context.db, scope, context.settings.workspace, path, () => png,
      (transaction, result) => context.recordCall?.(transaction, outputOf(result)));
    return outputOf(written);
  },
});

export const BROWSER_TOOLS: readonly ToolDefinition[] = [browserNavigateTool, browserExtractTool, browserClickTool, browserTypeTool, browserScreenshotTool];
