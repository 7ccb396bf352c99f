// The demo page in headless Chromium against the demo Worker in workerd. What a person sees:
// an answer streams in with tool and confirmation cards; a reload mid-answer paints the
// question and the partial answer at once and the answer goes on; a second tab follows live and
// its own turns appear in the first; Stop works from any tab; a tab without JavaScript shows the
// whole conversation (server-rendered); three panes share one stream request; an SSE read that
// the server closes mid-answer is resumed with no word lost or repeated; light and dark.
// (docs/demo.png and docs/demo-panes.png are taken by npm-start.test.mjs, from the Worker as
// `npm start` runs it.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { launchChromium } from '../support/chromium.mjs';
import { postTurn, removeDir, startWorker, tempDir } from './harness.mjs';


let worker;
let dropping; // the same Worker, with SSE reads closed by the server every 400 ms
let state;
let browser;

before(async () => {
  state = tempDir('turnkeep-page-');
  [worker, dropping, browser] = await Promise.all([
    startWorker({ persistDir: join(state, 'a') }),
    startWorker({ persistDir: join(state, 'b'), bindings: { STREAMS_SSE_MS: '400' } }),
    launchChromium(),
  ]);
});
after(async () => {
  await browser?.close();
  await worker?.stop();
  await dropping?.stop();
  if (state) removeDir(state);
});

let sessions = 0;
const newSession = () => `page-${process.pid}-${++sessions}`;
const words = (n) => Array.from({ length: n }, (_, i) => `w${i + 1}`).join(' ');

/** A page on `path` of `base`, once its script is live; page errors are collected. */
async function open(context, path, base = worker.url) {
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (error) => page.errors.push(error.message));
  await page.goto(`${base}${path}`);
  await page.waitForSelector('html[data-live]');
  return page;
}

/** The text of each message in `pane` (1-based). */
const messages = (page, pane = 1) =>
  page.$$eval(`.pane[data-pane="${pane}"] .msg`, (rows) => rows.map((row) => row.textContent));

const lastAssistant = (page, pane = 1) =>
  page.$eval(`.pane[data-pane="${pane}"]`, (el) => [...el.querySelectorAll('.msg.assistant')].at(-1)?.textContent ?? '');

async function send(page, text) {
  await page.fill('#input', text);
  await page.press('#input', 'Enter');
}

/** Waits until the last assistant message of `pane` satisfies `predicate` (given its text). */
function waitForAnswer(page, predicate, pane = 1, timeout = 20_000) {
  return page.waitForFunction(
    ({ source, pane }) => {
      const rows = document.querySelectorAll(`.pane[data-pane="${pane}"] .msg.assistant`);
      const text = rows[rows.length - 1]?.textContent ?? '';
      return new Function('text', `return (${source})(text)`)(text);
    },
    { source: predicate.toString(), pane },
    { timeout },
  );
}

test('an answer streams in; tool and confirmation cards', async () => {
  const context = await browser.newContext({ viewport: { width: 1100, height: 820 }, colorScheme: 'light' });
  const page = await open(context, `/?session=${newSession()}`);
  assert.equal(await page.isVisible('#empty'), true);

  await send(page, '/words 40');
  await page.waitForSelector('.pane .msg.assistant.streaming');
  await waitForAnswer(page, (text) => text.endsWith(' w40'));
  await page.waitForSelector('.pane .msg.assistant:not(.streaming)');
  assert.equal(await lastAssistant(page), words(40));
  assert.equal(await page.isVisible('#empty'), false);

  await send(page, '/tool weather in Zürich');
  await waitForAnswer(page, (text) => text.endsWith('found: result for weather in Zürich'));
  const card = page.locator('.tool-card[data-status="complete"]').first();
  assert.equal(await card.locator('.tool-name').textContent(), 'lookup');
  assert.equal(await card.locator('.tool-args').textContent(), '{"query":"weather in Zürich"}');
  assert.equal(await card.locator('.tool-result').textContent(), 'result for weather in Zürich');

  // A call that needs a person is drawn distinctly, with the slot its decision goes in.
  await page.waitForSelector('#send:not([disabled])');
  await send(page, '/confirm 250');
  const waiting = page.locator('.tool-card.needs-confirmation[data-status="requires_confirmation"]');
  await waiting.waitFor();
  assert.equal(await waiting.locator('.tool-name').textContent(), 'transfer');
  assert.equal(await waiting.locator('.tool-confirmation').count(), 1);
  await page.waitForSelector('#send:not([disabled])');
  await page.waitForSelector('#stop[disabled]');
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('a model\'s reasoning is drawn collapsed above its answer, live and server-rendered; opening it survives the stream', async () => {
  const context = await browser.newContext({ viewport: { width: 1100, height: 820 } });
  const page = await open(context, `/?session=${newSession()}`);
  await send(page, '/think cats');
  await waitForAnswer(page, (text) => text.endsWith('answer: cats'));
  const reasoning = page.locator('.pane .msg.assistant details.reasoning').last();
  assert.equal(await reasoning.locator('.reasoning-text').textContent(), 'Thinking about cats.');
  assert.equal(await reasoning.evaluate((el) => el.open), false, 'collapsed');
  assert.equal(await reasoning.locator('.reasoning-text').isVisible(), false);
  await reasoning.locator('summary').click();
  assert.equal(await reasoning.locator('.reasoning-text').isVisible(), true);
  // The server's first paint of the same session draws it collapsed too.
  await page.reload();
  await page.waitForSelector('html[data-live]');
  const painted = page.locator('.pane .msg.assistant details.reasoning').last();
  assert.equal(await painted.evaluate((el) => el.open), false);
  assert.equal(await lastAssistant(page), 'ReasoningThinking about cats.answer: cats');
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('a reload mid-answer paints the question and the partial answer at once; the answer goes on, every word once', async () => {
  const context = await browser.newContext();
  const id = newSession();
  const page = await open(context, `/?session=${id}`);
  await send(page, '/words 150');
  await waitForAnswer(page, (text) => /\bw10\b/.test(text) && !/\bw150\b/.test(text));

  // The document the reload receives already holds the conversation (what is painted first).
  const served = page.waitForResponse((r) => r.request().resourceType() === 'document');
  await page.reload({ waitUntil: 'commit' });
  const html = await (await served).text();
  const firstPaint = [...html.matchAll(/<div class="text">([^<]*)<\/div>/g)].map((m) => m[1]);
  assert.equal(firstPaint[0], '/words 150', 'the question');
  assert.match(firstPaint[1], /^w1 w2 w3 w4 w5 w6 w7 w8 w9 w10\b/, 'the partial answer');
  assert.ok(!firstPaint[1].endsWith('w150'), 'still partial when served');
  assert.match(html, /class="msg assistant streaming"/);

  await page.waitForSelector('html[data-live]');
  await waitForAnswer(page, (text) => text.endsWith(' w150'));
  await page.waitForSelector('.pane .msg.assistant:not(.streaming)');
  assert.deepEqual(await messages(page), ['/words 150', words(150)], 'every word exactly once, in order');
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('a second tab follows live; a turn sent from tab B appears in tab A; Stop works from either tab', async () => {
  const context = await browser.newContext();
  const path = `/?session=${newSession()}`;
  const a = await open(context, path);
  const b = await open(context, path); // opened before the send
  await send(a, '/words 60');
  await waitForAnswer(b, (text) => /\bw5\b/.test(text) && !/\bw60\b/.test(text)); // live, mid-answer
  await waitForAnswer(b, (text) => text.endsWith(' w60'));
  await waitForAnswer(a, (text) => text.endsWith(' w60'));
  assert.deepEqual(await messages(b), await messages(a));
  assert.deepEqual(await messages(b), ['/words 60', words(60)]);

  await a.waitForSelector('#send:not([disabled])');
  await send(b, 'hello from tab B');
  await waitForAnswer(a, (text) => text === 'echo: hello from tab B');
  assert.deepEqual(await messages(a), ['/words 60', words(60), 'hello from tab B', 'echo: hello from tab B']);

  // Tab A starts a long answer; tab B stops it.
  await b.waitForSelector('#send:not([disabled])');
  await send(a, '/words 2000');
  await waitForAnswer(b, (text) => /\bw5\b/.test(text));
  await b.waitForSelector('#stop:not([disabled])');
  await b.click('#stop');
  await b.waitForSelector('.diag code:text("STOPPED")');
  for (const page of [a, b]) {
    await page.waitForSelector('#stop[disabled]');
    await page.waitForSelector('.pane .msg.assistant:last-child:not(.streaming)');
  }
  await a.waitForSelector('#send:not([disabled])');
  const stopped = await lastAssistant(a);
  assert.match(stopped, /^w1 w2 w3 w4 w5/);
  assert.doesNotMatch(stopped, /w2000/);
  assert.equal(await lastAssistant(b), stopped);
  assert.deepEqual([...a.errors, ...b.errors], []);
  await context.close();
});

test('a new tab shows the whole conversation from the server-rendered HTML (JavaScript disabled)', async () => {
  const id = newSession();
  for (const input of ['first question', '/tool cats']) await (await postTurn(worker.url, 'demo', id, input)).text();
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(`${worker.url}/?session=${id}`);
  assert.equal(await page.$('html[data-live]'), null, 'the page script did not run');
  assert.deepEqual(await messages(page), [
    'first question',
    'echo: first question',
    '/tool cats',
    'lookupcomplete{"query":"cats"}→ result for cats',
    'found: result for cats',
  ]);
  assert.equal(await page.locator('.tool-card .tool-result').textContent(), 'result for cats');
  assert.equal(await page.isVisible('#empty'), false);
  // Another tenant's page of the same session id is another conversation (empty).
  await context.addCookies([{ name: 'turnkeep_tenant', value: 'globex', url: worker.url }]);
  await page.goto(`${worker.url}/?session=${id}`);
  assert.deepEqual(await messages(page), []);
  await context.close();
});

test('three panes of one session hold exactly one long-lived stream request', async () => {
  const id = newSession();
  await (await postTurn(worker.url, 'demo', id, 'the first turn')).text(); // the stream exists
  const context = await browser.newContext({ viewport: { width: 1400, height: 760 }, colorScheme: 'light' });
  const page = await context.newPage();
  const streamReads = []; // SSE requests and WebSockets (the page's default: a socket)
  page.on('request', (request) => {
    if (request.url().includes('/api/chat/stream/')) streamReads.push(request.url());
  });
  page.on('websocket', (socket) => {
    if (socket.url().includes('/api/chat/stream/')) streamReads.push(socket.url());
  });
  await page.goto(`${worker.url}/?session=${id}&panes=3`);
  await page.waitForSelector('html[data-live]');
  assert.equal(await page.locator('.pane').count(), 3);
  await send(page, '/words 60');
  for (const pane of [1, 2, 3]) await waitForAnswer(page, (text) => text.endsWith(' w60'), pane);
  for (const pane of [1, 2, 3]) {
    assert.deepEqual(await messages(page, pane), ['the first turn', 'echo: the first turn', '/words 60', words(60)]);
  }
  await page.waitForSelector('#stop[disabled]'); // the turn's end reached every reader
  assert.equal(streamReads.length, 1, `stream requests: ${streamReads.join(', ')}`);
  assert.match(streamReads[0], /[?&]live=sse/);
  await context.close();
});

test('an SSE read the server closes mid-answer is resumed: no word lost, none repeated', async () => {
  const id = newSession();
  await (await postTurn(dropping.url, 'demo', id, 'warm up')).text();
  const context = await browser.newContext();
  const page = await open(context, `/?session=${id}&live=sse`, dropping.url); // SSE, not a socket
  const reads = [];
  page.on('request', (request) => {
    if (request.url().includes('/api/chat/stream/')) reads.push(new URL(request.url()).searchParams.get('offset'));
  });
  await send(page, '/words 100'); // ~2 s at 20 ms a word: several 400 ms reads
  await waitForAnswer(page, (text) => text.endsWith(' w100'));
  await page.waitForSelector('.pane .msg.assistant:last-child:not(.streaming)');
  assert.deepEqual(await messages(page), ['warm up', 'echo: warm up', '/words 100', words(100)]);
  assert.ok(reads.length >= 3, `${reads.length} reads`);
  assert.equal(new Set(reads).size, reads.length, 'each read resumed from a newer offset');
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('dark mode follows the system setting', async () => {
  const context = await browser.newContext({ colorScheme: 'dark' });
  const page = await open(context, `/?session=${newSession()}`);
  const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(background, 'rgb(17, 19, 22)');
  await context.close();
});
