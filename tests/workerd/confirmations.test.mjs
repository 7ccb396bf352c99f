// Tool confirmations on the demo Worker in workerd: over HTTP (a pending record in
// GET /api/sessions/:id, two tenants, concurrent decisions), and on the demo page in headless
// Chromium (reload while pending shows the card; approving from a second tab streams the
// continuation into both tabs; a rejection in one tab updates the other).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

import { getSession, ndjson, postTurn, removeDir, startWorker, tempDir } from './harness.mjs';

let worker;
let state;
let browser;

before(async () => {
  state = tempDir('turnkeep-confirm-');
  // The page follows the session stream through the chat-stream proxy, which needs the
  // server-side streams token (the browser never holds it).
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

function resolveBody(sessionId, token, decision) {
  return JSON.stringify({
    protocol: 'agentskit.chat.turn',
    version: 1,
    eventId: `evt-${decision}-${Math.random().toString(36).slice(2)}`,
    sessionId,
    turnId: token,
    sequence: 0,
    emittedAt: new Date().toISOString(),
    event: 'client.confirmation.resolve',
    payload: { token, decision },
  });
}

function postResolve(tenant, sessionId, token, decision) {
  return fetch(`${worker.url}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant}` },
    body: resolveBody(sessionId, token, decision),
  });
}

/** Waits (bounded) until `check()` is truthy; the turn's release lands just after its stream. */
async function eventually(check, what) {
  for (let i = 0; i < 200; i++) {
    const value = await check();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`never: ${what}`);
}

test('over HTTP: the pending record is in the session view, decisions race, tenants never meet', async () => {
  const sessionId = `http-${process.pid}`;
  const lines = await ndjson(await postTurn(worker.url, 'acme', sessionId, '/confirm 250'));
  const record = lines.filter((l) => l.event === 'server.turn.snapshot').at(-1).payload.confirmations[0];
  assert.equal(record.status, 'pending');
  const view = await eventually(async () => {
    const v = await getSession(worker.url, 'acme', sessionId);
    return v.session.confirmations.length === 1 && v.session.activeTurn === null && v;
  }, 'the release stored the record');
  assert.deepEqual(view.session.confirmations, [record]);
  // Another tenant with the same session id holds no such token.
  const foreign = await postResolve('globex', sessionId, record.token, 'approve');
  assert.equal(foreign.status, 404);
  assert.equal((await foreign.json()).error.code, 'CONFIRMATION_NOT_FOUND');
  // Five concurrent decisions: one continuation, four answers with the final state.
  const answers = await Promise.all(
    ['approve', 'reject', 'approve', 'approve', 'reject'].map(async (decision) => {
      const response = await postResolve('acme', sessionId, record.token, decision);
      const type = response.headers.get('content-type');
      return type.startsWith('application/x-ndjson') ? { streamed: await ndjson(response) } : { status: response.status, body: await response.json() };
    }),
  );
  const winners = answers.filter((a) => a.streamed);
  assert.equal(winners.length, 1, JSON.stringify(answers.map((a) => a.body ?? 'stream')));
  const final = winners[0].streamed.filter((l) => l.event === 'server.turn.snapshot').at(-1).payload.confirmations[0].status;
  assert.ok(['approved', 'rejected'].includes(final));
  for (const loser of answers.filter((a) => !a.streamed)) {
    assert.deepEqual([loser.status, loser.body.confirmation.status], [200, final]);
  }
  const after = await eventually(async () => {
    const v = await getSession(worker.url, 'acme', sessionId);
    return v.session.confirmations[0].status === final && v.session.activeTurn === null && v;
  }, 'the continuation released');
  const results = after.messages.filter((m) => m.role === 'tool');
  assert.equal(results.length, 1);
  assert.equal(results[0].content, final === 'approved' ? 'transferred 250' : 'A person rejected this tool call.');
  assert.deepEqual(after.streamMessages, after.messages, 'the session stream projects to the saved messages');
});

test('the demo page: reload while pending shows the card; approving in a second tab streams into both', async () => {
  const context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
  const tabA = await context.newPage();
  const errors = [];
  tabA.on('pageerror', (error) => errors.push(error.message));
  await tabA.goto(`${worker.url}/`);
  await tabA.waitForSelector('#empty:not([hidden])');
  await tabA.fill('#input', '/confirm 250');
  await tabA.press('#input', 'Enter');
  const card = '.confirm-card[data-status="pending"]';
  await tabA.waitForSelector(card);
  assert.match(await tabA.textContent(card), /transfer\(\{"amount":250\}\)/);

  // Reload while pending: the card is there again (from the session view).
  await tabA.reload();
  await tabA.waitForSelector(card);

  // A second tab of the same session (the session id is in localStorage).
  const tabB = await context.newPage();
  tabB.on('pageerror', (error) => errors.push(error.message));
  await tabB.goto(`${worker.url}/`);
  await tabB.waitForSelector(card);
  // Tab A records what its chat shows from now on, without any navigation.
  await tabA.evaluate(() => {
    window.__seen = [];
    new MutationObserver(() => {
      const last = document.querySelector('#messages .msg.assistant:last-child');
      if (last) window.__seen.push(last.textContent);
    }).observe(document.getElementById('messages'), { childList: true, subtree: true, characterData: true });
  });
  await tabB.click(`${card} button.approve`);
  const done = (page) =>
    page.waitForFunction(() => document.querySelector('#messages .msg.assistant:last-child')?.textContent === 'transfer: transferred 250');
  await Promise.all([done(tabB), done(tabA)]);
  assert.ok((await tabA.evaluate(() => window.__seen)).includes('transfer: transferred 250'), 'tab A followed it live');
  await tabA.waitForSelector('.confirm-card', { state: 'detached' });
  await tabB.waitForSelector('.confirm-card', { state: 'detached' });
  assert.match(await tabA.textContent('#messages'), /→ transferred 250/, 'the tool card shows the result in tab A');

  // A rejection made in tab A updates tab B.
  await tabA.fill('#input', '/confirm 7');
  await tabA.press('#input', 'Enter');
  await tabB.waitForSelector(card);
  await tabA.waitForSelector(card);
  await tabA.click(`${card} button.reject`);
  const rejected = (page) =>
    page.waitForFunction(() => document.querySelector('#messages .msg.assistant:last-child')?.textContent === 'transfer: A person rejected this tool call.');
  await Promise.all([rejected(tabA), rejected(tabB)]);
  await tabB.waitForSelector('.confirm-card', { state: 'detached' });

  // The tool ran exactly once, for the approved call.
  const sessionId = await tabA.evaluate(() => localStorage.getItem('turnkeep.session'));
  const view = await eventually(async () => {
    const v = await getSession(worker.url, 'demo', sessionId);
    return v.session.activeTurn === null && v.session.confirmations.every((c) => c.status !== 'pending') && v;
  }, 'both resolved');
  assert.deepEqual(view.session.confirmations.map((c) => c.status), ['approved', 'rejected']);
  assert.deepEqual(view.messages.filter((m) => m.role === 'tool').map((m) => m.content), ['transferred 250', 'A person rejected this tool call.']);
  assert.deepEqual(errors, []);
  await context.close();
});
