import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { findChromium } from '../../src/tools/browser/find-chromium.ts';
import { registerAccount, withKey, type Account } from '../helpers/accounts.ts';
import { useGateway, waitFor, waitForTask } from '../helpers/gateway.ts';

const env = { GATEWAY_SKIP_AUTH: '0', JWT_SECRET: 'test-secret-of-at-least-thirty-two-characters!' };
const chromiumPath = await findChromium(process.env.CHROMIUM_PATH).catch(() => undefined);
const noBrowser = chromiumPath ? undefined : 'no Chromium to drive (set CHROMIUM_PATH or install chromium; CI installs it best-effort)';
/** Screenshots are test artefacts: written under the OS temp dir, never committed. */
const SHOT_DIR = path.join(os.tmpdir(), 'agentgate-console-screenshots');
const VIEWPORTS = { laptop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** One server for the file (the last test kills and restarts it). */
const gateway = useGateway({ env });

describe('web console: served by the gateway', () => {

  it('serves the page at /console with a strict CSP and no inline script, and any /console/* path falls back to it', async () => {
    const redirect = await fetch(`${gateway().url}/console`, { redirect: 'manual' });
    assert.equal(redirect.status, 302);
    assert.equal(redirect.headers.get('location'), '/console/');
    for (const route of ['/console/', '/console/tasks/0b5f6c9e-1111-4222-8333-944445555666', '/console/approvals']) {
      const page = await fetch(`${gateway().url}${route}`);
      assert.equal(page.status, 200, route);
      const csp = page.headers.get('content-security-policy') ?? '';
      assert.match(csp, /script-src 'self'(;|$)/, 'scripts from this origin only');
      assert.match(csp, /frame-ancestors 'none'/);
      assert.equal(page.headers.get('cache-control'), 'no-cache', 'the page is checked each load, so a new build shows at once');
      const html = await page.text();
      const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
      assert.ok(scripts.length > 0, 'the page loads its bundle');
      for (const [, attributes, body] of scripts) {
        assert.match(attributes, /src="\/console\/assets\//, 'every script is a file under /console/assets');
        assert.equal(body.trim(), '', 'no inline script');
      }
    }
  });

  it('serves hashed assets cached for good, and answers 404 for assets that do not exist or try to leave the folder', async () => {
    const html = await (await fetch(`${gateway().url}/console/`)).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((match) => match[1]);
    assert.ok(assets.some((asset) => asset.endsWith('.js')) && assets.some((asset) => asset.endsWith('.css')), assets.join());
    for (const asset of assets) {
      const answer = await fetch(`${gateway().url}${asset}`);
      assert.equal(answer.status, 200, asset);
      assert.match(answer.headers.get('cache-control') ?? '', /max-age=31536000.*immutable/);
      const compressed = await fetch(`${gateway().url}${asset}`, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(compressed.headers.get('content-encoding'), 'gzip', `${asset} goes out compressed`);
      assert.equal(await compressed.text(), await answer.text(), 'the same content once decoded');
    }
    for (const missing of ['/console/assets/missing-abc123.js', '/console/assets/..%2f..%2fpackage.json']) {
      assert.equal((await fetch(`${gateway().url}${missing}`)).status, 404, missing);
    }
  });
});

describe('web console: in a real browser', { skip: noBrowser }, () => {
  let browser: Browser;
  let alice: Account;
  let bob: Account;

  before(async () => {
    if (noBrowser) return;
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox'] });
    alice = await registerAccount(gateway(), 'alice');
    bob = await registerAccount(gateway(), 'bob');
    await mkdir(SHOT_DIR, { recursive: true });
  });
  after(async () => { await browser?.close(); });

  /** A page whose console errors (CSP violations among them) and uncaught exceptions are collected. */
  async function openPage(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      // A 401 before signing in and a 404 for a task not ours are answers the page expects and shows.
      if (message.type() === 'error' && !/^Failed to load resource: the server responded with a status of (401|404)/.test(message.text())) problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    return { page, problems };
  }

  async function signIn(page: Page, account: Account): Promise<void> {
    await page.goto(`${gateway().url}/console/`);
    await page.getByLabel('Email').fill(account.email);
    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
  }

  /** axe-core on the screen as shown: no serious or critical violation. */
  async function checkAccessibility(page: Page, screen: string): Promise<void> {
    // Evaluated through the DevTools protocol, which the page's CSP does not govern (an injected <script> it would).
    await page.evaluate(axeSource);
    const violations = await page.evaluate(async () => {
      const result = await (globalThis as any).axe.run(document);
      return result.violations.map((violation: any) => ({ id: violation.id, impact: violation.impact, nodes: violation.nodes.length, help: violation.help }));
    }) as Array<{ id: string; impact: string; nodes: number; help: string }>;
    const serious = violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
    assert.deepEqual(serious, [], `${screen}: ${JSON.stringify(serious)}`);
  }

  async function screenshots(page: Page, screen: string): Promise<void> {
    for (const [name, size] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(size);
      await page.screenshot({ path: path.join(SHOT_DIR, `${screen}-${name}.png`), fullPage: true });
    }
    await page.setViewportSize(VIEWPORTS.laptop);
  }

  it('signs in with email and password, submits a standard task from the form and shows it completing with the stored answer', async () => {
    const context = await browser.newContext({ viewport: VIEWPORTS.laptop });
    const { page, problems } = await openPage(context);
    await page.goto(`${gateway().url}/console/`);
    await page.getByRole('heading', { name: 'Sign in to agentgate' }).waitFor();
    await checkAccessibility(page, 'sign-in');
    await screenshots(page, 'sign-in');

    await signIn(page, alice);
    const stored = await page.evaluate(() => Object.keys(sessionStorage).length + localStorage.length * 100);
    assert.equal(stored, 1, 'the credential is in sessionStorage, nothing in localStorage');

    await page.getByLabel('Query').fill('what do the console tests check');
    await page.getByLabel('Mode').selectOption('standard');
    await page.getByLabel('Token budget (optional)').fill('50000');
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.waitForURL(/\/console\/tasks\/[0-9a-f-]{36}$/);
    const taskId = page.url().split('/').pop()!;
    await page.getByTestId('task-status').filter({ hasText: 'completed' }).waitFor({ timeout: 20_000 });
    const done = await waitForTask(gateway(), taskId, 20_000, withKey(alice));
    assert.equal(done.query, 'what do the console tests check');
    assert.equal(done.context.budget_max, 50_000, 'the form\'s token budget went with the task');
    await page.getByRole('heading', { name: /^Timeline/ }).waitFor();
    assert.equal((await page.getByTestId('answer').innerText()).trim(), done.result.trim(), 'the answer shown is the stored result');
    const planNodes = page.locator('[data-plan-node]');
    await planNodes.first().waitFor();
    assert.deepEqual(await planNodes.evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-status'))),
      Array(await planNodes.count()).fill('done'), 'every subtask of the plan shows done');
    await page.locator('details.agent').first().waitFor();
    assert.ok(await page.locator('details.agent').count() >= 1, 'each agent\'s events are listed');
    await checkAccessibility(page, 'task');
    await screenshots(page, 'task');

    await page.getByRole('link', { name: 'Tasks', exact: true }).click();
    const row = page.locator(`tr[data-task-id="${taskId}"]`);
    await row.waitFor();
    assert.match(await row.innerText(), /completed[\s\S]*standard[\s\S]*\$/);
    await checkAccessibility(page, 'tasks');
    await screenshots(page, 'tasks');

    await page.getByRole('link', { name: 'Approvals' }).click();
    await page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
    await page.getByText('Nothing is waiting for a decision.').waitFor();
    await checkAccessibility(page, 'approvals');
    await screenshots(page, 'approvals');

    await page.getByRole('link', { name: 'Sessions' }).click();
    await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
    await page.locator('table').waitFor();
    await checkAccessibility(page, 'sessions');
    await screenshots(page, 'sessions');
    const sessionRow = page.locator(`tr[data-session-id="${done.session_id}"]`);
    await sessionRow.getByRole('button', { name: /^Rename/ }).click();
    await sessionRow.getByLabel('New title').fill('renamed in the console');
    await sessionRow.getByRole('button', { name: 'Save' }).click();
    await sessionRow.filter({ hasText: 'renamed in the console' }).waitFor();
    const renamed = await gateway().request('GET', `/api/v1/sessions/${done.session_id}`, undefined, withKey(alice));
    assert.equal(renamed.body.context?.title ?? renamed.body.title, 'renamed in the console', renamed.text);
    await sessionRow.getByRole('button', { name: /^Delete/ }).click();
    await sessionRow.getByRole('button', { name: 'Really delete' }).click();
    await sessionRow.waitFor({ state: 'detached' });
    assert.equal((await gateway().request('GET', `/api/v1/sessions/${done.session_id}`, undefined, withKey(alice))).status, 404);

    assert.deepEqual(problems, [], 'no console errors, no CSP violations');
    await context.close();
  });

  it('shows a task submitted elsewhere in the list without a reload, and a pasted API key signs in', async () => {
    const context = await browser.newContext({ viewport: VIEWPORTS.laptop });
    const { page, problems } = await openPage(context);
    await page.goto(`${gateway().url}/console/`);
    await page.getByLabel('API key').fill(alice.apiKey);
    await page.getByRole('button', { name: 'Use this key' }).click();
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
    await page.getByTestId('task-table').waitFor();
    const submitted = await gateway().request('POST', '/api/v1/tasks', { query: 'submitted from curl while the list is open' }, withKey(alice));
    assert.equal(submitted.status, 200, submitted.text);
    await page.locator(`tr[data-task-id="${submitted.body.task_id}"]`).waitFor({ timeout: 10_000 });
    await page.getByLabel('Status').selectOption('FAILED');
    await page.locator(`tr[data-task-id="${submitted.body.task_id}"]`).waitFor({ state: 'detached' });
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('pauses and resumes a task from its page and cancels another; a list open in another tab shows both without a reload', async () => {
    const slow = { query: 'a slow answer', mode: 'simple', context: { mock_delay_ms: 6_000, mock_answer_words: 30 } };
    const first = (await gateway().request('POST', '/api/v1/tasks', { ...slow, query: 'pause me' }, withKey(alice))).body.task_id;
    const second = (await gateway().request('POST', '/api/v1/tasks', { ...slow, query: 'cancel me' }, withKey(alice))).body.task_id;
    const context = await browser.newContext({ viewport: VIEWPORTS.laptop });
    const list = await openPage(context);
    await signIn(list.page, alice);
    await list.page.locator(`tr[data-task-id="${second}"]`).filter({ hasText: 'running' }).waitFor();

    const { page, problems } = await openPage(context);
    await signIn(page, alice);
    await page.goto(`${gateway().url}/console/tasks/${first}`);
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByTestId('task-status').filter({ hasText: 'paused' }).waitFor();
    assert.equal((await gateway().request('GET', `/api/v1/tasks/${first}/control-state`, undefined, withKey(alice))).body.is_paused, true);
    await checkAccessibility(page, 'task-paused');
    await screenshots(page, 'task-paused');
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByTestId('task-status').filter({ hasText: /running|completed/ }).waitFor();
    assert.equal((await gateway().request('GET', `/api/v1/tasks/${first}/control-state`, undefined, withKey(alice))).body.is_paused, false);

    await page.goto(`${gateway().url}/console/tasks/${second}`);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByTestId('task-status').filter({ hasText: 'cancelled' }).waitFor();
    await list.page.locator(`tr[data-task-id="${second}"]`).filter({ hasText: 'cancelled' }).waitFor();
    await list.page.locator(`tr[data-task-id="${first}"]`).filter({ hasText: 'completed' }).waitFor({ timeout: 30_000 });
    assert.deepEqual([...problems, ...list.problems], []);
    await context.close();
  });

  it('an approval a task asks for shows in the inbox, and approving it there with feedback lets the task complete', async () => {
    const context = await browser.newContext({ viewport: VIEWPORTS.laptop });
    const { page, problems } = await openPage(context);
    await signIn(page, alice);
    await page.getByRole('link', { name: 'Approvals' }).click();
    await page.getByText('Nothing is waiting for a decision.').waitFor();
    const taskId = (await gateway().request('POST', '/api/v1/tasks', { query: 'delete the old backups', mode: 'simple', context: { require_approval: true, mock_delay_ms: 100 } }, withKey(alice))).body.task_id;
    const approvalId = await waitFor('the approval to be asked for', async () =>
      (await gateway().sql.query('select id from approvals where task_id = $1', [taskId])).rows[0]?.id as string | undefined);
    // The inbox polls every 1.5 s: the card shows without a reload.
    const card = page.locator(`form[data-approval-id="${approvalId}"]`);
    await card.waitFor();
    await checkAccessibility(page, 'approvals-pending');
    await screenshots(page, 'approvals-pending');
    await card.getByLabel('Feedback (optional)').fill('fine, the backups are older than a year');
    await card.getByRole('button', { name: 'Approve' }).click();
    await card.waitFor({ state: 'detached' });
    const done = await waitForTask(gateway(), taskId, 20_000, withKey(alice));
    assert.equal(done.status, 'TASK_STATUS_COMPLETED');
    const decided = await gateway().request('GET', '/api/v1/approvals?status=approved', undefined, withKey(alice));
    const approval = decided.body.approvals.find((item: { approval_id: string }) => item.approval_id === approvalId);
    assert.equal(approval?.feedback, 'fine, the backups are older than a year');
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('another tenant\'s task id typed into the URL shows "not found", nothing of the task', async () => {
    const secret = await gateway().request('POST', '/api/v1/tasks', { query: 'bob private plans' }, withKey(bob));
    const context = await browser.newContext({ viewport: VIEWPORTS.laptop });
    const { page } = await openPage(context);
    await signIn(page, alice);
    await page.goto(`${gateway().url}/console/tasks/${secret.body.task_id}`);
    await page.getByRole('heading', { name: 'Task not found' }).waitFor();
    const text = await page.locator('main').innerText();
    assert.ok(!text.includes('bob private plans'), text);
    await checkAccessibility(page, 'not-found');
    await screenshots(page, 'not-found');
    await context.close();
  });

  // Last: it kills the shared server.
  it('after the server is killed mid-stream and restarted, the task page resumes and shows every event once', async () => {
    const taskId = (await gateway().request('POST', '/api/v1/tasks', { query: 'keep streaming through a crash', mode: 'simple', context: { mock_delay_ms: 4_000, mock_answer_words: 80 } }, withKey(alice))).body.task_id;
    const context = await browser.newContext({ viewport: VIEWPORTS.laptop });
    const { page } = await openPage(context);
    await signIn(page, alice);
    await page.goto(`${gateway().url}/console/tasks/${taskId}`);
    await page.getByTestId('stream-state').filter({ hasText: 'live' }).waitFor();
    await waitFor('some of the answer to stream', async () => (await page.getByTestId('event-count').getAttribute('data-last-seq').then(Number)) > 10 || undefined);
    await gateway().kill('SIGKILL');
    const { rows: [cut] } = await gateway().sql.query('select status from tasks where id = $1', [taskId]);
    assert.notEqual(cut.status, 'COMPLETED', 'the crash landed mid-task');
    await page.getByTestId('stream-state').filter({ hasText: 'reconnecting' }).waitFor();
    await gateway().restart();
    await page.getByTestId('task-status').filter({ hasText: 'completed' }).waitFor({ timeout: 45_000 });
    await page.getByTestId('stream-state').filter({ hasText: 'ended' }).waitFor();
    // STREAM_END is sent as the SSE `done` frame, which closes the stream rather than showing as an event.
    const stored = (await gateway().sql.query(`select count(*)::int as count, max(seq)::int as last from task_events where task_id = $1 and type <> 'STREAM_END'`, [taskId])).rows[0];
    assert.ok(stored.count > 20, `${stored.count} events`);
    const shown = page.getByTestId('event-count');
    assert.equal(await shown.getAttribute('data-last-seq'), String(stored.last), 'the page reached the last event');
    assert.equal(await shown.innerText(), `${stored.count} events`, 'every stored event shown once: none missed, none twice');
    const done = await waitForTask(gateway(), taskId, 20_000, withKey(alice));
    assert.equal((await page.getByTestId('answer').innerText()).trim(), done.result.trim());
    await context.close();
  });
});
