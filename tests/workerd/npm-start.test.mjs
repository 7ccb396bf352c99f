// The demo as a person gets it: the Worker started by `scripts/start.sh` itself (what `npm start`
// runs: its wrangler command, its vars, nothing injected; no `.dev.vars`; a fresh state folder),
// driven in headless Chromium. Every promise of the demo page holds on these defaults: a second
// tab follows a running answer live; a reload mid-answer shows the partial answer and resumes it
// to its end, every word once and in order; a turn sent from tab B appears in tab A; a new tab
// renders the whole conversation on first paint; an idle new page holds one pending stream
// request and polls nothing; no page holds more than one long-lived stream request; no request
// of any page is answered 5xx; a refused large body leaves the keep-alive connection usable.
//
// The demo's screenshots are taken here, from this Worker: $TURNKEEP_DEMO_SCREENSHOT (e.g.
// docs/demo.png) and $TURNKEEP_DEMO_PANES_SCREENSHOT (docs/demo-panes.png), else temporary files.
//
// The other browser tests of the page (demo-page, confirmations, connection) run the Worker
// through Miniflare with settings of their own (short SSE reads, test hooks); this file is the
// one that runs nothing the README does not give a user.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { launchChromium } from '../support/chromium.mjs';
import { spawnServer } from '../support/spawn-server.mjs';
import { ROOT, freePort } from '../support/wrangler-dev.mjs';
import { removeDir, tempDir } from '../support/temp-dir.mjs';
import { REFUSED_BODY_BYTES, refusedBodyThenNext } from '../support/hostile.mjs';

const screenshotPath = process.env.TURNKEEP_DEMO_SCREENSHOT || join(tmpdir(), `turnkeep-demo-${process.pid}.png`);
const panesScreenshotPath = process.env.TURNKEEP_DEMO_PANES_SCREENSHOT || join(tmpdir(), `turnkeep-demo-panes-${process.pid}.png`);
const START_READY_MS = 10 * 60_000; // start.sh sets up and builds first (seconds when warm)
const IDLE_MS = 6_000; // longer than the connection's first 404 polls were apart

let server;
let base;
let state;
let browser;

before(async () => {
  // wrangler dev reads .dev.vars (and .env) beside wrangler.toml: a fresh clone has neither.
  for (const file of ['.dev.vars', '.env']) {
    assert.equal(existsSync(join(ROOT, file)), false, `${file} exists: this test runs what a fresh clone runs; move it aside`);
  }
  state = tempDir('turnkeep-npm-start-');
  const port = await freePort();
  [server, browser] = await Promise.all([
    spawnServer({
      command: 'bash',
      args: ['scripts/start.sh'],
      cwd: ROOT,
      env: { PORT: String(port), STATE_DIR: state },
      ready: /Ready on http/,
      timeoutMs: START_READY_MS,
    }),
    launchChromium(),
  ]);
  base = `http://127.0.0.1:${port}`;
});

after(async () => {
  await browser?.close();
  await server?.stop();
  if (state) removeDir(state);
});

let sessions = 0;
const newSession = () => `start-${process.pid}-${++sessions}`;
const words = (n) => Array.from({ length: n }, (_, i) => `w${i + 1}`).join(' ');
const isStreamRead = (url) => url.includes('/api/chat/stream/');

/**
 * A page on `path`, once its script is live. Each page records every response of its own
 * (`page.answers`: [status, url]), its page errors, and its stream requests (SSE requests and
 * sockets): how many are open now and the most that were open at once.
 */
async function open(context, path) {
  const page = await context.newPage();
  page.errors = [];
  page.answers = [];
  page.streams = { open: 0, maxOpen: 0, started: 0, ended: [] };
  page.on('pageerror', (error) => page.errors.push(error.message));
  page.on('response', (response) => page.answers.push([response.status(), response.url()]));
  page.on('request', (request) => {
    if (!isStreamRead(request.url())) return;
    page.streams.started += 1;
    page.streams.open += 1;
    page.streams.maxOpen = Math.max(page.streams.maxOpen, page.streams.open);
  });
  const ended = async (request) => {
    if (!isStreamRead(request.url())) return;
    page.streams.open -= 1;
    // The response may be gone by the time it is asked for (its context closed): 'failed' then.
    const response = await request.response().catch(() => null);
    page.streams.ended.push([response?.status() ?? 'failed', request.url()]);
  };
  page.on('requestfinished', ended);
  page.on('requestfailed', ended);
  // The page's live read is a WebSocket (a hibernatable one on the stream's object): counted as
  // a stream request, open until the socket closes or its document is gone (a reload: the old
  // document's socket may report its close after the new document opened its own).
  const sockets = new Set();
  const socketEnded = (socket) => {
    if (!sockets.delete(socket)) return;
    page.streams.open -= 1;
    page.streams.ended.push(['closed', socket.url()]);
  };
  page.on('websocket', (socket) => {
    if (!isStreamRead(socket.url())) return;
    sockets.add(socket);
    page.streams.started += 1;
    page.streams.open += 1;
    page.streams.maxOpen = Math.max(page.streams.maxOpen, page.streams.open);
    socket.on('close', () => socketEnded(socket));
  });
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) for (const socket of [...sockets]) socketEnded(socket);
  });
  // A page's load (its document, assets and wasm from wrangler dev) took over playwright's 30 s
  // once on a machine loaded by builds beside the tests: the bound is a hang's, not a speed's.
  await page.goto(`${base}${path}`, { timeout: 90_000 });
  await page.waitForSelector('html[data-live]');
  return page;
}

/** What no page may see: a 5xx answer, a page error, two stream requests open at once. */
function assertHealthy(...pages) {
  for (const page of pages) {
    assert.deepEqual(page.answers.filter(([status]) => status >= 500), [], '5xx answers');
    assert.deepEqual(page.errors, [], 'page errors');
    assert.ok(page.streams.maxOpen <= 1, `${page.streams.maxOpen} stream requests open at once`);
  }
}

const messages = (page) => page.$$eval('.pane[data-pane="1"] .msg', (rows) => rows.map((row) => row.textContent));

async function send(page, text) {
  await page.waitForSelector('#send:not([disabled])');
  await page.fill('#input', text);
  await page.press('#input', 'Enter');
}

/** Waits until the last assistant message satisfies `predicate` (given its text). */
function waitForAnswer(page, predicate, timeout = 20_000) {
  return page.waitForFunction(
    (source) => {
      const rows = document.querySelectorAll('.pane[data-pane="1"] .msg.assistant');
      const text = rows[rows.length - 1]?.textContent ?? '';
      return new Function('text', `return (${source})(text)`)(text);
    },
    predicate.toString(),
    { timeout },
  );
}

const idle = (page) => page.waitForSelector('.pane .msg.assistant:last-child:not(.streaming)');

test('npm start says where the demo is and needs no secret', () => {
  const printed = server.output();
  assert.match(printed, new RegExp(`\\[start\\] turnkeep demo Worker: ${base}/`));
  assert.doesNotMatch(printed, /STREAMS_TOKEN/);
});

test(`behind wrangler dev, a refused ${REFUSED_BODY_BYTES / 1048576} MB body leaves the keep-alive connection usable on every route`, async () => {
  assert.deepEqual(await refusedBodyThenNext(base), []);
});

test('an idle new page holds one pending stream request and polls nothing', async () => {
  const context = await browser.newContext();
  const page = await open(context, `/?session=${newSession()}`);
  await page.waitForTimeout(IDLE_MS);
  assert.deepEqual(page.streams.ended, [], 'no stream read ended while the page was idle');
  assert.equal(page.streams.started, 1, 'one stream request');
  assert.equal(page.streams.open, 1, 'still pending');
  assertHealthy(page);
  await context.close();
});

test('a second tab follows a running answer live, and its own turn appears in the first', async () => {
  const context = await browser.newContext();
  const path = `/?session=${newSession()}`;
  const a = await open(context, path);
  const b = await open(context, path); // opened before anything was sent
  await send(a, '/words 80');
  await waitForAnswer(b, (text) => /\bw5\b/.test(text) && !/\bw80\b/.test(text)); // mid-answer
  await waitForAnswer(b, (text) => text.endsWith(' w80'));
  await idle(a);
  await idle(b);
  assert.deepEqual(await messages(b), ['/words 80', words(80)]);
  assert.deepEqual(await messages(a), await messages(b));

  await send(b, 'hello from tab B');
  await waitForAnswer(a, (text) => text === 'echo: hello from tab B');
  assert.deepEqual(await messages(a), ['/words 80', words(80), 'hello from tab B', 'echo: hello from tab B']);
  assertHealthy(a, b);
  await context.close();
});

test('Enter while this tab\'s answer runs keeps the typed text in the box; it sends once the answer ends', async () => {
  const context = await browser.newContext();
  const page = await open(context, `/?session=${newSession()}`);
  await send(page, '/words 60');
  await waitForAnswer(page, (text) => /\bw3\b/.test(text) && !/\bw60\b/.test(text));
  await page.fill('#input', 'typed while busy');
  await page.press('#input', 'Enter');
  assert.equal(await page.inputValue('#input'), 'typed while busy', 'not cleared, not lost');
  await idle(page);
  await send(page, await page.inputValue('#input'));
  await waitForAnswer(page, (text) => text === 'echo: typed while busy');
  assert.deepEqual(await messages(page), ['/words 60', words(60), 'typed while busy', 'echo: typed while busy']);
  assert.equal(await page.inputValue('#input'), '');
  assertHealthy(page);
  await context.close();
});

test('a reload mid-answer shows the partial answer, then resumes it to its end: every word once, in order', async () => {
  const context = await browser.newContext();
  const page = await open(context, `/?session=${newSession()}`);
  await send(page, '/words 150');
  await waitForAnswer(page, (text) => /\bw10\b/.test(text) && !/\bw150\b/.test(text));

  const served = page.waitForResponse((r) => r.request().resourceType() === 'document');
  await page.reload({ waitUntil: 'commit' });
  const html = await (await served).text();
  const firstPaint = [...html.matchAll(/<div class="text">([^<]*)<\/div>/g)].map((m) => m[1]);
  assert.equal(firstPaint[0], '/words 150');
  assert.match(firstPaint[1], /^w1 w2 w3 w4 w5 w6 w7 w8 w9 w10\b/, 'the partial answer is in the HTML');
  assert.ok(!firstPaint[1].endsWith('w150'), 'still partial when served');

  await page.waitForSelector('html[data-live]');
  await waitForAnswer(page, (text) => text.endsWith(' w150'));
  await idle(page);
  assert.deepEqual(await messages(page), ['/words 150', words(150)]);
  assertHealthy(page);
  await context.close();
});

test('a new tab renders the whole conversation on first paint', async () => {
  const context = await browser.newContext();
  const path = `/?session=${newSession()}`;
  const first = await open(context, path);
  await send(first, 'one');
  await waitForAnswer(first, (text) => text === 'echo: one');
  await send(first, '/tool cats');
  await waitForAnswer(first, (text) => text === 'found: result for cats');
  await idle(first);

  // The document alone, before any script runs: the server rendered all of it.
  const html = await (await fetch(`${base}${path}`, { headers: { cookie: 'turnkeep_tenant=demo' } })).text();
  for (const text of ['one', 'echo: one', '/tool cats', 'result for cats', 'found: result for cats']) {
    assert.ok(html.includes(text), `first paint holds ${JSON.stringify(text)}`);
  }
  const second = await open(context, path);
  assert.deepEqual(await messages(second), await messages(first));
  assertHealthy(first, second);
  await context.close();
});

test('the screenshots: a conversation with tool and confirmation cards; three panes of one session', async () => {
  const context = await browser.newContext({ viewport: { width: 1100, height: 820 }, colorScheme: 'light' });
  const path = `/?session=${newSession()}`;
  const page = await open(context, path);
  await send(page, '/words 40');
  await waitForAnswer(page, (text) => text.endsWith(' w40'));
  await send(page, '/tool weather in Zürich');
  await waitForAnswer(page, (text) => text.endsWith('found: result for weather in Zürich'));
  await send(page, '/confirm 250');
  await page.locator('.tool-card.needs-confirmation .confirm-card button.approve').waitFor();
  await page.waitForSelector('#stop[disabled]'); // the paused run's end reached the page
  await page.waitForSelector('#send:not([disabled])');
  await page.screenshot({ path: screenshotPath });

  const wide = await browser.newContext({ viewport: { width: 1400, height: 760 }, colorScheme: 'light' });
  const panes = await open(wide, `/?session=${newSession()}&panes=3`);
  assert.equal(await panes.locator('.pane').count(), 3);
  await send(panes, '/tool cats');
  await panes.waitForSelector('#stop[disabled]');
  await send(panes, '/words 12');
  for (const pane of [1, 2, 3]) {
    await panes.waitForFunction(
      (n) => [...document.querySelectorAll(`.pane[data-pane="${n}"] .msg.assistant`)].at(-1)?.textContent.endsWith(' w12'),
      pane,
    );
  }
  await panes.waitForSelector('#stop[disabled]');
  assert.equal(panes.streams.started, 1, 'three panes, one stream request');
  await panes.screenshot({ path: panesScreenshotPath });
  assertHealthy(page, panes);
  await context.close();
  await wide.close();
});
