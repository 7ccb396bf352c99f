// createChatHandler in real headless Chromium (Debian's /usr/bin/chromium via playwright-core):
// a page served from this repository imports js/browser.mjs and runs a representative subset of
// the Node scenarios with the browser's own Request, Response, ReadableStream and
// AbortController. The page hands back plain data; the assertions are the same functions the
// Node tests use (tests/support/chat-checks.mjs), so both runtimes meet one expectation.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

import { serveStatic } from './static-server.mjs';
import { checkAbortMidStream, checkHappyPath, checkSlowReader, checkTooLarge } from '../support/chat-checks.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const PAGE = '<!doctype html><meta charset="utf-8"><title>createChatHandler in Chromium</title><link rel="icon" href="data:,">';

let server;
let browser;
let page;
const pageErrors = [];

before(async () => {
  server = await serveStatic(root, { '/chat-handler.html': PAGE });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--no-first-run'],
  });
  page = await browser.newPage();
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
  await page.goto(`${server.url}/chat-handler.html`);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** Runs `scenario` (an export of chat-harness.mjs) in the page against js/browser.mjs. */
function inPage(scenario, options) {
  return page.evaluate(
    async ({ scenario, options }) => {
      const pkg = await import('/js/browser.mjs');
      const harness = await import('/tests/support/chat-harness.mjs');
      // Proof that the page uses its own Web objects, not something injected.
      const native = [Request, Response, ReadableStream, AbortController].every((f) => /\[native code\]/.test(String(f)));
      if (!native) throw new Error('the page has non-native Web globals');
      return harness[scenario](pkg, options);
    },
    { scenario, options },
  );
}

test('the page runs the wasm with native Web objects', async () => {
  const env = await page.evaluate(async () => {
    const pkg = await import('/js/browser.mjs');
    return { ua: navigator.userAgent, handler: typeof pkg.createChatHandler, any: typeof AbortSignal.any };
  });
  assert.match(env.ua, /HeadlessChrome|Chrome/);
  assert.equal(env.handler, 'function');
});

test('happy path: a streamed turn with the right headers, lines and saves', async () => {
  checkHappyPath(await inPage('scenarioHappyPath'));
});

test('413 by counted bytes of a streamed body (the browser drops a hand-set Content-Length)', async () => {
  const result = await inPage('scenarioTooLarge');
  assert.equal(result.lengthKept, false, 'Chromium treats Content-Length as a forbidden request header');
  checkTooLarge(result);
});

test('abort mid-stream: REQUEST_CANCELLED for the reader, messages saved, lease freed at once', async () => {
  checkAbortMidStream(await inPage('scenarioAbortMidStream'));
});

test('a reader 10× slower than the model: coalesced, increasing, complete at the end', async () => {
  checkSlowReader(await inPage('scenarioSlowReader'));
});

test('no page errors', () => {
  assert.deepEqual(pageErrors, []);
});
