import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../../../src/config.ts';
import { browserNavigateTool } from '../../../../src/tools/browser/browser-tools.ts';
import { findChromium } from '../../../../src/tools/browser/find-chromium.ts';
import type { ToolContext } from '../../../../src/tools/registry.ts';

const INSTALL_HINT = /install Chromium \(on Debian or Ubuntu: apt-get install chromium\) or set CHROMIUM_PATH to its executable$/;

test('a CHROMIUM_PATH that is no executable is reported with how to install Chromium, without looking on PATH', async () => {
  await assert.rejects(findChromium('/nonexistent/chromium'), (error: Error) => {
    assert.match(error.message, /^Chromium is not available: CHROMIUM_PATH=\/nonexistent\/chromium is not an executable file; /);
    assert.match(error.message, INSTALL_HINT);
    return true;
  });
});

test('no Chromium on PATH is reported with the names looked for and how to install it', async () => {
  await assert.rejects(findChromium(undefined, '/nonexistent-a:/nonexistent-b'), (error: Error) => {
    assert.match(error.message, /^Chromium is not installed: none of chromium, chromium-browser, google-chrome, google-chrome-stable is on PATH; /);
    assert.match(error.message, INSTALL_HINT);
    return true;
  });
});

test('a browser tool called without Chromium fails with that message', async () => {
  const config = loadConfig({ DATABASE_URL: 'postgres://localhost/unused', CHROMIUM_PATH: '/nonexistent/chromium', TOOLS_NETWORK_ALLOW: '127.0.0.1' });
  const context = { taskId: null, sessionId: null, tenantId: 't', userId: 'u', signal: new AbortController().signal, db: undefined, settings: config } as unknown as ToolContext;
  await assert.rejects(browserNavigateTool.execute({ url: 'http://127.0.0.1:9/' }, context), INSTALL_HINT);
});

test('a file:, data: or chrome: URL is refused by the network guard before any browser starts', async () => {
  const config = loadConfig({ DATABASE_URL: 'postgres://localhost/unused', CHROMIUM_PATH: '/nonexistent/chromium' });
  const context = { taskId: null, sessionId: null, tenantId: 't', userId: 'u', signal: new AbortController().signal, db: undefined, settings: config } as unknown as ToolContext;
  for (const [url, scheme] of [['file:///etc/passwd', 'file:'], ['data:text/html,<p>x</p>', 'data:'], ['chrome://settings', 'chrome:']]) {
    await assert.rejects(browserNavigateTool.execute({ url }, context), { message: `refused: only http and https URLs can be fetched (got ${scheme})` });
  }
});
