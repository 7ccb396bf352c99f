// examples/next-edge's TanStack AI page (`/tanstack/:id`: `useChat` of @tanstack/ai-react over
// toTanStackConnection, `persistence: true, live: true` as the example's README gives it, Redis
// behind it) in headless Chromium, against the same `next start` as the AI SDK page:
//
// - a turn streams to the page (its partial answers show before the end);
// - a reload mid-answer resumes the answer: every word once, in order (no text seen on the way
//   is anything but a prefix of it), one answer;
// - a second tab follows a turn the first sent, live;
// - Approve on the page runs the tool exactly once (the example's ledger of executions, in
//   Redis), Reject runs it zero times;
// - Stop pressed in a second tab stops the answer the first sent.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';

import { launchChromium } from '../support/chromium.mjs';
import { recordPage } from './next-chat-page.mjs';

const auth = { authorization: 'Bearer demo' }; // the example signs the page in as this user
const words = (n) => Array.from({ length: n }, (_, i) => `w${i + 1}`).join(' ');
let chats = 0;
const newChatId = () => `tanstack-${process.pid}-${Date.now()}-${++chats}`;

/** Registers the scenarios. `app()` gives `{ url }`: the Redis-backed `next start`. */
export function tanStackPageScenarios(app) {
  let browser;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });
  const tabs = new Set();
  afterEach(async () => {
    for (const tab of tabs) await tab.close().catch(() => {});
    tabs.clear();
  });

  /** A tab on `/tanstack/:id`, live (useChat mounted on the connection, idle). */
  async function openTab(id) {
    const page = await browser.newPage();
    tabs.add(page);
    await page.addInitScript(recordPage);
    const response = await page.goto(`${app().url}/tanstack/${id}`);
    assert.equal(response.status(), 200);
    await waitReady(page);
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
  /** The transfer tool's executions of `amount` (the example's ledger, in Redis). */
  const transfersOf = async (amount) => {
    const response = await fetch(`${app().url}/api/ui/transfers`, { headers: auth });
    assert.equal(response.status, 200);
    return (await response.json()).transfers.filter((t) => t.amount === amount);
  };
  const prefixes = async (page, answer) => {
    for (const text of await seen(page)) assert.ok(answer.startsWith(text), `a state that is not a prefix of the answer: …${text.slice(-60)}`);
  };

  test('tanstack page: a turn streams to the page', async () => {
    const id = newChatId();
    const page = await openTab(id);
    await send(page, '/words 200');
    await waitForAnswer(page, /\bw200$/);
    await waitReady(page);
    assert.equal(await answerText(page), words(200));
    assert.deepEqual(await roles(page), ['user', 'assistant'], 'the user\'s message once, one answer');
    const partial = (await seen(page)).filter((t) => t.length > 0 && t !== words(200));
    assert.ok(partial.length > 0, 'the answer showed before it ended');
    await prefixes(page, words(200));
    const stored = await storedMessages(id);
    assert.deepEqual(stored.map((m) => m.role), ['user', 'assistant']);
    assert.equal(textOf(stored[1]), words(200));
    await noErrors(page);
  });

  test('tanstack page: a reload mid-answer resumes the answer: every word once, in order', async () => {
    const id = newChatId();
    const page = await openTab(id);
    await send(page, '/words 300');
    await waitForAnswer(page, /\bw20\b/);
    await page.reload();
    await waitForAnswer(page, /\bw300$/);
    await waitReady(page);
    assert.equal(await answerText(page), words(300));
    assert.deepEqual(await roles(page), ['user', 'assistant'], 'one answer, not two');
    const texts = await seen(page);
    assert.ok(texts.some((t) => t.length > 0 && t !== words(300)), `the reloaded page showed the answer before its end (${texts.length} states)`);
    await prefixes(page, words(300));
    assert.equal(textOf((await storedMessages(id))[1]), words(300));
    await noErrors(page);
  });

  test('tanstack page: a second tab follows a turn the first sent, live', async () => {
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
    await prefixes(b, words(200));
    await waitReady(a);
    assert.equal(await answerText(a), words(200));
    await noErrors(a, b);
  });

  test('tanstack page: Approve runs the tool exactly once; Reject runs it zero times', async () => {
    const amount = 100_000 + Math.floor(Math.random() * 800_000);
    const id = newChatId();
    const page = await openTab(id);
    await send(page, `/confirm ${amount}`);
    await page.locator('[data-testid="approve"]').waitFor();
    assert.equal((await transfersOf(amount)).length, 0, 'nothing ran before the approval');
    await page.click('[data-testid="approve"]');
    await page.locator('[data-testid="tool-output"]', { hasText: `transferred ${amount}` }).waitFor();
    await waitForAnswer(page, new RegExp(`^transfer: transferred ${amount}$`));
    await waitReady(page);
    const ran = await transfersOf(amount);
    assert.equal(ran.length, 1, `the tool ran ${ran.length} times`);
    assert.match(ran[0].idempotencyKey, /^confirm-/, 'with the approval as its idempotency key');
    // A reload shows the finished tool, and nothing runs again.
    await page.reload();
    await waitReady(page);
    await page.locator('[data-testid="tool-output"]', { hasText: `transferred ${amount}` }).waitFor();
    assert.equal(await page.locator('[data-testid="approve"]').count(), 0);
    assert.equal((await transfersOf(amount)).length, 1);
    await noErrors(page);

    const rejected = amount + 1;
    const other = newChatId();
    const tab = await openTab(other);
    await send(tab, `/confirm ${rejected}`);
    await tab.locator('[data-testid="reject"]').waitFor();
    await tab.click('[data-testid="reject"]');
    await tab.locator('[data-testid="tool"]:not([data-state="approval-requested"])').waitFor();
    await waitReady(tab);
    await tab.locator('[data-testid="tool-output"]').waitFor();
    assert.equal((await transfersOf(rejected)).length, 0, 'a rejected transfer never runs');
    const tool = (await storedMessages(other))[1].parts.find((p) => p.type === 'tool-transfer');
    assert.equal(tool.approval.approved, false, 'the stored decision is the rejection');
    assert.equal(await tab.locator('[data-testid="approve"]').count(), 0);
    await noErrors(tab);
  });

  test('tanstack page: Stop pressed in a second tab stops the answer the first sent', async () => {
    const id = newChatId();
    const a = await openTab(id);
    const b = await openTab(id);
    await send(a, '/words 2000');
    await waitForAnswer(b, /\bw5\b/);
    await b.click('[data-testid="stop"]');
    await waitReady(a);
    await waitReady(b);
    const stored = textOf((await storedMessages(id)).at(-1));
    assert.match(stored, /^w1 w2 w3 w4 w5/);
    assert.doesNotMatch(stored, /\bw2000\b/, 'stopped mid-answer');
    await waitForAnswer(a, new RegExp(`^${stored}$`));
    assert.equal(await answerText(a), stored, 'tab A shows what was stored');
    await noErrors(a, b);
  });
}
