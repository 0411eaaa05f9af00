import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { findChromium } from '../../src/tools/browser/find-chromium.ts';
import type { Account } from './accounts.ts';

/** Helpers for driving the web console in a real Chromium (test/integration/console.test.ts). */

export const chromiumPath = await findChromium(process.env.CHROMIUM_PATH).catch(() => undefined);
export const noBrowser = chromiumPath ? undefined : 'no Chromium to drive (set CHROMIUM_PATH or install chromium; CI installs it best-effort)';
/** Screenshots are test artefacts: written under the OS temp dir, never committed. */
export const SHOT_DIR = path.join(os.tmpdir(), 'agentgate-console-screenshots');
export const VIEWPORTS = { laptop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** A page whose console errors (CSP violations among them) and uncaught exceptions are collected. */
export async function openPage(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    // A 401 before signing in and a 404 for a task not ours are answers the page expects and shows.
    if (message.type() === 'error' && !/^Failed to load resource: the server responded with a status of (401|404)/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return { page, problems };
}

export async function signIn(page: Page, baseUrl: string, account: Account): Promise<void> {
  await page.goto(`${baseUrl}/console/`);
  await page.getByLabel('Email').waitFor({ timeout: 15_000 }).catch(async (error: Error) => {
    throw new Error(`no sign-in form; the page shows: ${(await page.locator('body').innerText()).slice(0, 500)}`, { cause: error });
  });
  await page.getByLabel('Email').fill(account.email);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
}

/** axe-core on the screen as shown: no serious or critical violation. */
export async function checkAccessibility(page: Page, screen: string): Promise<void> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (an injected <script> it would).
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const result = await (globalThis as any).axe.run(document);
    return result.violations.map((violation: any) => ({ id: violation.id, impact: violation.impact, nodes: violation.nodes.length, help: violation.help }));
  }) as Array<{ id: string; impact: string; nodes: number; help: string }>;
  const serious = violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
  assert.deepEqual(serious, [], `${screen}: ${JSON.stringify(serious)}`);
}

export async function screenshots(page: Page, screen: string): Promise<void> {
  for (const [name, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await page.screenshot({ path: path.join(SHOT_DIR, `${screen}-${name}.png`), fullPage: true });
  }
  await page.setViewportSize(VIEWPORTS.laptop);
}
