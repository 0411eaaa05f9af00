import type { Browser } from 'playwright-core';
import { findChromium } from './find-chromium.ts';

/**
 * Chromium's own network stack is pointed at a proxy where nothing listens, loopback included (Chromium
 * bypasses proxies for loopback unless told `<-loopback>`). Every request the tools let through is fetched by
 * the route handler (guarded-page.ts) and fulfilled, so it never reaches this proxy; whatever escapes routing
 * (WebSockets, a request Playwright cannot intercept) fails here instead of reaching the network unchecked.
 * WebRTC may not use UDP around the proxy either.
 */
const NETWORK_LOCKDOWN_ARGS = [
  '--proxy-server=http://127.0.0.1:9',
  '--proxy-bypass-list=<-loopback>',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
];

let launching: Promise<Browser> | undefined;

/** One browser per process, launched at the first browser call; every call gets a fresh context of its own. */
export function sharedBrowser(chromiumPath: string | undefined): Promise<Browser> {
  launching ??= launchBrowser(chromiumPath).then((browser) => {
    browser.on('disconnected', () => { launching = undefined; });
    return browser;
  }, (error: unknown) => {
    // A failed launch (Chromium missing) is not remembered: installing it later needs no restart.
    launching = undefined;
    throw error;
  });
  return launching;
}

async function launchBrowser(chromiumPath: string | undefined): Promise<Browser> {
  const executablePath = await findChromium(chromiumPath);
  // Chromium's sandbox refuses to start as root (it needs an unprivileged user to drop to), as in containers
  // and CI; there the sandbox is turned off. Any other user keeps it.
  const args = process.getuid?.() === 0 ? [...NETWORK_LOCKDOWN_ARGS, '--no-sandbox'] : NETWORK_LOCKDOWN_ARGS;
  // Playwright takes most of a second to load: loaded at the first browser call, not at the server's start.
  const { chromium } = await import('playwright-core');
  // The server's shutdown closes the browser (closeBrowser): Playwright's own signal handlers would race it.
  return chromium.launch({ executablePath, headless: true, args, handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false });
}

/** Closes the shared browser, if one was launched; called on shutdown. */
export async function closeBrowser(): Promise<void> {
  const pending = launching;
  launching = undefined;
  const browser = await pending?.catch(() => undefined);
  await browser?.close();
}
