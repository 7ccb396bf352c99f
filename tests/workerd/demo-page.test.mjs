// The demo page in headless Chromium against the demo Worker in workerd: send a turn and watch
// it stream, call a tool, reload and find the history again (session id in localStorage), stop
// an answer mid-stream. Saves a screenshot (to $TURNKEEP_DEMO_SCREENSHOT, e.g. docs/demo.png,
// or a temporary file).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { chromium } from 'playwright-core';

import { removeDir, startWorker, tempDir } from './harness.mjs';

const screenshotPath = process.env.TURNKEEP_DEMO_SCREENSHOT || join(tmpdir(), `turnkeep-demo-${process.pid}.png`);
let worker;
let state;
let browser;

before(async () => {
  state = tempDir('turnkeep-page-');
  worker = await startWorker({ persistDir: state });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--no-first-run'],
  });
});
after(async () => {
  await browser?.close();
  await worker?.stop();
  if (state) removeDir(state);
});

const bubbles = (page) => page.$$eval('#messages .msg', (rows) => rows.map((r) => r.textContent.trim()));

async function send(page, text) {
  await page.fill('#input', text);
  await page.press('#input', 'Enter');
}

test('send, stream, tool call, reload, stop: the demo page in headless Chromium', async () => {
  const context = await browser.newContext({ viewport: { width: 1000, height: 760 }, colorScheme: 'light' });
  const page = await context.newPage();
  const pageErrors = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(`${worker.url}/`);
  await page.waitForSelector('#empty:not([hidden])');

  // A streamed answer: the assistant bubble is seen while streaming, then complete.
  await send(page, '/words 40');
  await page.waitForSelector('#messages .msg.assistant.streaming');
  await page.waitForFunction(() => document.querySelector('#messages .msg.assistant:last-child')?.textContent.endsWith('w40'));
  await page.waitForSelector('#send:not([disabled])');
  assert.equal(await page.textContent('#status'), 'complete');

  await send(page, 'Hello from a colleague');
  await page.waitForFunction(() => document.querySelector('#messages .msg.assistant:last-child')?.textContent === 'echo: Hello from a colleague');
  await page.waitForSelector('#send:not([disabled])');

  // A tool call is shown with its arguments and result.
  await send(page, '/tool weather in Zürich');
  await page.waitForFunction(() => document.querySelector('#messages .msg.assistant:last-child')?.textContent === 'found: result for weather in Zürich');
  const tool = await page.textContent('#messages .toolcall');
  assert.match(tool, /lookup\(\{"query":"weather in Zürich"\}\)/);
  assert.match(tool, /→ result for weather in Zürich/);
  await page.waitForSelector('#send:not([disabled])');

  const before = await bubbles(page);
  const sessionId = await page.evaluate(() => localStorage.getItem('turnkeep.session'));
  assert.match(sessionId, /^session-/);
  await page.screenshot({ path: screenshotPath });

  // Reload: the same session is loaded from GET /api/sessions/:id.
  await page.reload();
  await page.waitForFunction((n) => document.querySelectorAll('#messages .msg').length === n, before.length);
  assert.deepEqual(await bubbles(page), before);
  assert.equal(await page.textContent('#session-label'), sessionId);

  // Stop: the request is aborted, the page says so, and the partial answer is kept.
  await send(page, '/words 2000');
  await page.waitForFunction(() => /w3 /.test(document.querySelector('#messages .msg.assistant:last-child')?.textContent ?? ''));
  await page.click('#stop');
  await page.waitForSelector('.diag code:text("STOPPED")');
  await page.waitForSelector('#send:not([disabled])');
  await page.reload();
  await page.waitForFunction((n) => document.querySelectorAll('#messages .msg').length === n, before.length + 2);
  const partial = (await bubbles(page)).at(-1);
  assert.match(partial, /^w1 w2 w3/);
  assert.doesNotMatch(partial, /w2000/);

  // Diagnostics are shown readably: a bad tenant is refused by the page, a busy session by the server.
  assert.deepEqual(pageErrors, []);
  await context.close();
});

test('a server diagnostic (401 for a tenant the server refuses) is shown with its code', async () => {
  const context = await browser.newContext({ colorScheme: 'dark' });
  const page = await context.newPage();
  await page.goto(`${worker.url}/`);
  // The page only lets SafeIds through; simulate a stale stored tenant the server rejects.
  await page.evaluate(() => localStorage.setItem('turnkeep.tenant', 'bad tenant'));
  await page.reload();
  await page.waitForSelector('.diag code:text("AUTH_REQUIRED")');
  assert.match(await page.textContent('.diag'), /HTTP 401/);
  await context.close();
});
