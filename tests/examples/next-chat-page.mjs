// examples/next-edge's chat page (`/chat/:id`: `useChat` from @ai-sdk/react over
// TurnkeepChatTransport, Redis behind it) in headless Chromium, against `next start`:
//
// - a reload mid-answer: the first paint is the server's HTML with the partial answer, the
//   answer resumes and ends with every word once, in order (no text seen on the way is anything
//   but a prefix of it);
// - a second tab of the same chat follows a turn live (its partial answers show before the end);
// - Stop pressed in tab B stops the answer tab A sent, and the partial answer is the stored one;
// - Approve pressed in two tabs at once runs the tool once (the example's ledger of executions);
// - an attached file is in the stored message (the messages route and the Redis chat memory);
// - the first paint is the server's HTML: the conversation shows with JavaScript off;
// - the page says where its sessions live; restarting the server keeps the conversation.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';

import { createClient } from 'redis';

import { launchChromium } from '../support/chromium.mjs';

const USER = 'demo'; // the example signs the page in as this user
const auth = { authorization: `Bearer ${USER}` };
const words = (n) => Array.from({ length: n }, (_, i) => `w${i + 1}`).join(' ');
let chats = 0;
const newChatId = () => `page-${process.pid}-${Date.now()}-${++chats}`;

// Runs in the page before its scripts: records every text the last assistant message shows,
// and every error the page throws.
export function recordPage() {
  window.__seen = [];
  window.__errors = [];
  window.addEventListener('error', (e) => window.__errors.push(String(e.message)));
  window.addEventListener('unhandledrejection', (e) => window.__errors.push(String(e.reason?.message ?? e.reason)));
  const record = () => {
    const answers = document.querySelectorAll('article[data-role="assistant"]');
    const last = answers[answers.length - 1];
    if (!last) return;
    const text = [...last.querySelectorAll('[data-testid="text"]')].map((p) => p.textContent).join('');
    if (window.__seen.at(-1) !== text) window.__seen.push(text);
  };
  new MutationObserver(record).observe(document, { subtree: true, childList: true, characterData: true });
}

/**
 * Registers the scenarios. `app()` gives `{ url, memoryUrl, redisUrl, restart() }`: the
 * Redis-backed server, one without REDIS_URL (the same build), Redis itself, and a restart of
 * the Redis-backed server (which changes `url`).
 */
export function chatPageScenarios(app) {
  let browser;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });
  // A tab a failed scenario left open would hold its connections to `next start`, whose
  // shutdown (a restart, the file's end) waits for them.
  const tabs = new Set();
  afterEach(async () => {
    for (const tab of tabs) await tab.close().catch(() => {});
    tabs.clear();
  });
  /** The chat memory's list in Redis, read directly (the example's key layout). */
  async function memoryInRedis(id) {
    const redis = createClient({ url: app().redisUrl });
    await redis.connect();
    try {
      return (await redis.lRange(`next-example:${USER}/{${id}}:messages`, 0, -1)).map((m) => JSON.parse(m));
    } finally {
      await redis.close();
    }
  }

  /** A tab on `/chat/:id`, live (its connection open, useChat mounted). */
  async function openTab(id, base = app().url) {
    const page = await browser.newPage();
    tabs.add(page);
    await page.addInitScript(recordPage);
    const response = await page.goto(`${base}/chat/${id}`);
    assert.equal(response.status(), 200);
    await page.locator('[data-testid="status"]', { hasText: /^ready$/ }).waitFor();
    return page;
  }
  const send = async (page, text) => {
    await page.fill('[data-testid="input"]', text);
    await page.click('[data-testid="send"]');
  };
  const answerText = (page) =>
    page.evaluate(() => {
      const answers = document.querySelectorAll('article[data-role="assistant"]');
      const last = answers[answers.length - 1];
      return last ? [...last.querySelectorAll('[data-testid="text"]')].map((p) => p.textContent).join('') : '';
    });
  const roles = (page) => page.$$eval('article[data-testid="message"]', (list) => list.map((a) => a.dataset.role));
  const waitForAnswer = (page, pattern, timeout = 30_000) =>
    page.waitForFunction(
      ([source]) => {
        const answers = document.querySelectorAll('article[data-role="assistant"]');
        const last = answers[answers.length - 1];
        const text = last ? [...last.querySelectorAll('[data-testid="text"]')].map((p) => p.textContent).join('') : '';
        return new RegExp(source).test(text);
      },
      [pattern.source],
      { timeout },
    );
  const waitReady = (page) => page.locator('[data-testid="status"]', { hasText: /^ready$/ }).waitFor({ timeout: 30_000 });
  const seen = (page) => page.evaluate(() => window.__seen);
  async function noErrors(...pages) {
    for (const page of pages) assert.deepEqual(await page.evaluate(() => window.__errors), [], 'the page threw');
    for (const page of pages) assert.equal(await page.locator('[data-testid="error"]').count(), 0, 'useChat shows no error');
  }
  const storedMessages = async (id) => {
    const response = await fetch(`${app().url}/api/ui/chat/${id}/messages`, { headers: auth });
    assert.equal(response.status, 200);
    return (await response.json()).messages;
  };
  const textOf = (message) => message.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
  const transfers = async () => {
    const response = await fetch(`${app().url}/api/ui/transfers`, { headers: auth });
    assert.equal(response.status, 200);
    return (await response.json()).transfers;
  };

  test('page: a reload mid-answer paints the partial answer from the server, then resumes it: every word once, in order', async () => {
    const id = newChatId();
    const page = await openTab(id);
    await send(page, '/words 300');
    await waitForAnswer(page, /\bw20\b/);
    const reloaded = await page.reload();
    const html = await reloaded.text();
    assert.match(html, /data-role="assistant"/, 'the server rendered the answer so far');
    assert.match(html, /w1 w2 w3 w4 w5/);
    assert.doesNotMatch(html, /\bw300\b/, 'rendered mid-answer');
    await waitForAnswer(page, /\bw300$/);
    await waitReady(page);
    assert.equal(await answerText(page), words(300));
    assert.deepEqual(await roles(page), ['user', 'assistant'], 'one answer, not two');
    const texts = await seen(page);
    assert.ok(texts.length > 2, `the resumed answer grew live (${texts.length} states)`);
    for (const text of texts) assert.ok(words(300).startsWith(text), `a state that is not a prefix of the answer: ${text.slice(-60)}`);
    assert.equal(textOf((await storedMessages(id))[1]), words(300));
    await noErrors(page);
    await page.close();
  });

  test('page: a second tab of the same chat follows a turn live', async () => {
    const id = newChatId();
    const a = await openTab(id);
    const b = await openTab(id);
    await send(a, '/words 200');
    await waitForAnswer(b, /\bw10\b/);
    await waitForAnswer(b, /\bw200$/);
    await waitReady(b);
    assert.equal(await answerText(b), words(200));
    assert.deepEqual(await roles(b), ['user', 'assistant']);
    assert.equal(await b.locator('article[data-role="user"] [data-testid="text"]').textContent(), '/words 200');
    const partial = (await seen(b)).filter((t) => t.length > 0 && t !== words(200));
    assert.ok(partial.length > 0, 'tab B showed the answer before it ended');
    for (const text of await seen(b)) assert.ok(words(200).startsWith(text), `not a prefix: ${text.slice(-60)}`);
    await waitReady(a);
    assert.equal(await answerText(a), words(200));
    await noErrors(a, b);
    await Promise.all([a.close(), b.close()]);
  });

  test('page: Stop pressed in tab B stops the answer tab A sent; the partial answer is the stored one', async () => {
    const id = newChatId();
    const a = await openTab(id);
    const b = await openTab(id);
    await send(a, '/words 2000');
    await waitForAnswer(b, /\bw5\b/);
    await b.click('[data-testid="stop"]');
    await waitReady(a);
    await waitReady(b);
    const partial = await answerText(a);
    assert.match(partial, /^w1 w2 w3 w4 w5/);
    assert.doesNotMatch(partial, /\bw2000\b/, 'stopped mid-answer');
    const stored = await storedMessages(id);
    assert.equal(textOf(stored.at(-1)), partial, 'tab A shows what was stored');
    assert.equal(await answerText(b), partial, 'tab B too');
    await noErrors(a, b);
    // The chat is free again: the next turn runs.
    await send(b, 'after the stop');
    await waitForAnswer(a, /^echo: after the stop$/);
    await Promise.all([a.close(), b.close()]);
  });

  test('page: Approve pressed in two tabs at once runs the tool once', async () => {
    const id = newChatId();
    const amount = 10_000 + Math.floor(Math.random() * 80_000);
    const a = await openTab(id);
    const b = await openTab(id);
    await send(a, `/confirm ${amount}`);
    await a.locator('[data-testid="approve"]').waitFor();
    await b.locator('[data-testid="approve"]').waitFor();
    const before = (await transfers()).filter((t) => t.amount === amount);
    assert.equal(before.length, 0, 'nothing ran before the approval');
    await Promise.all([a.click('[data-testid="approve"]'), b.click('[data-testid="approve"]')]);
    for (const page of [a, b]) {
      await page.locator('[data-testid="tool-output"]', { hasText: `transferred ${amount}` }).waitFor();
      await waitForAnswer(page, new RegExp(`^transfer: transferred ${amount}$`));
      await waitReady(page);
      assert.deepEqual(await roles(page), ['user', 'assistant'], 'the continuation is in the same message');
    }
    const ran = (await transfers()).filter((t) => t.amount === amount);
    assert.equal(ran.length, 1, `the tool ran ${ran.length} times`);
    assert.match(ran[0].idempotencyKey, /^confirm-/, 'with the approval as its idempotency key');
    const tool = (await storedMessages(id))[1].parts.find((p) => p.type === 'tool-transfer');
    assert.equal(tool.state, 'output-available');
    assert.equal(tool.approval.approved, true);
    // A reload shows the finished tool, and nothing runs again.
    await a.reload();
    await waitReady(a);
    assert.equal(await a.locator('[data-testid="approve"]').count(), 0);
    assert.equal((await transfers()).filter((t) => t.amount === amount).length, 1);
    await noErrors(a, b);
    await Promise.all([a.close(), b.close()]);
  });

  test('page: an attached file is in the stored message (the messages route and the Redis chat memory)', async () => {
    const id = newChatId();
    const page = await openTab(id);
    const content = 'hello from the page';
    await page.setInputFiles('[data-testid="file"]', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from(content) });
    await send(page, 'see the file');
    await waitForAnswer(page, /^echo: see the file$/);
    await waitReady(page);
    const url = `data:text/plain;base64,${Buffer.from(content).toString('base64')}`;
    const [user] = await storedMessages(id);
    assert.deepEqual(
      user.parts.find((p) => p.type === 'file'),
      { type: 'file', mediaType: 'text/plain', filename: 'notes.txt', url },
    );
    const memory = await memoryInRedis(id);
    assert.deepEqual(memory.map((m) => m.role), ['user', 'assistant']);
    assert.deepEqual(memory[0].parts.find((p) => p.type === 'file'), { type: 'file', source: url, mimeType: 'text/plain', filename: 'notes.txt' });
    await page.reload();
    await waitReady(page);
    assert.equal(await page.locator('[data-testid="attachment"]').textContent(), '📎 notes.txt');
    await noErrors(page);
    await page.close();
  });

  test('page: the first paint is the server\'s HTML (the conversation shows with JavaScript off); prints its figures', async () => {
    const id = newChatId();
    const page = await openTab(id);
    await send(page, 'painted by the server');
    await waitForAnswer(page, /^echo: painted by the server$/);
    await waitReady(page);
    await page.close();

    const noScript = await browser.newContext({ javaScriptEnabled: false });
    const bare = await noScript.newPage();
    tabs.add(bare);
    await bare.goto(`${app().url}/chat/${id}`);
    assert.deepEqual(await roles(bare), ['user', 'assistant']);
    assert.equal(await answerText(bare), 'echo: painted by the server');
    await noScript.close();

    const tab = await openTab(id);
    const figures = await tab.evaluate(() => {
      const [navigation] = performance.getEntriesByType('navigation');
      const paint = performance.getEntriesByName('first-contentful-paint')[0];
      const resources = performance.getEntriesByType('resource');
      const bytes = (suffix) => resources.filter((r) => r.name.split('?')[0].endsWith(suffix)).reduce((n, r) => n + r.encodedBodySize, 0);
      return { html: navigation.encodedBodySize, paintMs: paint?.startTime, liveMs: performance.now(), js: bytes('.js'), wasm: bytes('.wasm') };
    });
    const kB = (n) => `${(n / 1000).toFixed(1)} kB`;
    console.log(
      `[examples] next-edge chat page: first contentful paint ${figures.paintMs?.toFixed(0)} ms, live (useChat on the connection) by ${figures.liveMs.toFixed(0)} ms; ` +
        `HTML ${kB(figures.html)}, JS ${kB(figures.js)}, wasm ${kB(figures.wasm)} (bytes as sent, next start's compression)`,
    );
    assert.ok(figures.wasm > 0, 'the page loaded turnkeep/client\'s wasm');
    await noErrors(tab);
    await tab.close();
  });

  test('page: it says where sessions live; with Redis a restart of the server keeps the conversation', async () => {
    const memory = await openTab(newChatId(), app().memoryUrl);
    assert.match(await memory.locator('[data-testid="storage"]').textContent(), /in-memory, not durable/);
    await memory.close();

    const id = newChatId();
    const page = await openTab(id);
    assert.match(await page.locator('[data-testid="storage"]').textContent(), /Redis \(durable/);
    await send(page, 'remember me');
    await waitForAnswer(page, /^echo: remember me$/);
    await waitReady(page);
    await page.close();
    await app().restart();
    const again = await openTab(id);
    assert.deepEqual(await roles(again), ['user', 'assistant']);
    assert.equal(await answerText(again), 'echo: remember me');
    await noErrors(again);
    await again.close();
  });
}
