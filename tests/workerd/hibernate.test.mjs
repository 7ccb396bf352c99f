// Idle tabs cost nothing (issue 26, item 3): a page's live connection on a hibernatable
// WebSocket lets its session's stream object go while the socket stays open, and the next turn
// still reaches the page; the same page on SSE holds its object in memory all along.
//
// The Worker's test build runs in workerd through Miniflare (TEST_HOOKS=1; Miniflare serves the
// page's static assets as wrangler dev does). workerd evicts a Durable
// Object after about 10 s with nothing to do — no request in flight, no event handler running —
// and a socket accepted through the hibernation API does not count (workerd PR #1138 brought
// production's rule to workerd). `GET /__test/stream-instance/<name>` reports the object's
// in-memory marker, a random id it draws when it is built: a new marker means the old instance
// and everything it held in memory are gone. Asking wakes the object, so each round first waits
// longer than the eviction delay, then sends a turn, then asks.
//
// Three pages run the same rounds side by side: the demo page in headless Chromium (its live
// read is a socket), a Node connection over a socket (`webSocket` with `ws`), and a Node
// connection over SSE (the connection's default). The sockets' objects must be rebuilt while
// their one socket stays open, every turn arriving once; the SSE page's object must keep its
// marker over the same rounds (an SSE response is a request in flight: the object cannot
// hibernate, and is billed for all of it). The estimate these imply for 10,000 tabs a day is
// printed from scripts/idle-tab-cost.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from 'ws';

import { createChatConnection, projectChatSnapshot } from '../../js/client/node.mjs';
import { TEST_HOOKS_WORKER } from '../support/wrangler-dev.mjs';
import { costTable, idleTabCost } from '../../scripts/idle-tab-cost.mjs';
import { launchChromium } from '../support/chromium.mjs';
import { postTurn, removeDir, root, startWorker, tempDir } from './harness.mjs';

const TENANT = 'acme';
const PAGE_TENANT = 'demo'; // the demo page's tenant without a cookie
/** Longer than workerd's inactivity eviction (10 s), so a round can see one. */
const IDLE_MS = 12_000;
/** Rounds before the test gives up on seeing the eviction (workerd checks on its own timer). */
const ROUNDS_MAX = 5;
const state = tempDir('turnkeep-hibernate-');
let server;
let browser;

before(async () => {
  [server, browser] = await Promise.all([
    startWorker({
      persistDir: state,
      scriptPath: `${root}${TEST_HOOKS_WORKER}`,
      bindings: { TEST_HOOKS: '1', DEMO_CHUNK_DELAY_MS: '5' },
    }),
    launchChromium(),
  ]);
});
after(async () => {
  await browser?.close();
  await server?.stop();
  removeDir(state);
});

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The stream object's `{ marker, constructed, sockets }` (wakes it). */
async function instance(sessionId, tenant = TENANT) {
  const response = await fetch(`${server.url}/__test/stream-instance/chat/${tenant}/${sessionId}`);
  assert.equal(response.status, 200, 'the test hook answers (TEST_HOOKS=1, the test build)');
  return response.json();
}

/** A page's connection; with `socket`, over `ws` sockets whose opens and closes are counted. */
function page(sessionId, { socket }) {
  const sockets = { opened: 0, closed: 0 };
  const webSocket = (url, headers) => {
    const ws = new WebSocket(url, { headers: Object.fromEntries(headers) });
    ws.addEventListener('open', () => (sockets.opened += 1));
    ws.addEventListener('close', () => (sockets.closed += 1));
    return ws;
  };
  const reads = [];
  const connection = createChatConnection({
    target: {
      url: `${server.url}/api/chat/stream/${sessionId}`,
      chatUrl: `${server.url}/api/chat`,
      sessionId,
      headers: { authorization: `Bearer ${TENANT}` },
    },
    fetch: (request) => (reads.push(request.url), fetch(request)),
    ...(socket ? { webSocket } : {}),
  });
  const chunks = [];
  let wake = () => {};
  (async () => {
    for await (const chunk of connection.subscribe()) {
      chunks.push(chunk);
      wake();
    }
  })();
  /** Resolves once the page shows `answer` as an assistant message. */
  const shows = async (answer) => {
    while (!answers(chunks).includes(answer)) await new Promise((resolve) => (wake = resolve));
  };
  return { connection, chunks, sockets, reads, shows };
}

/** The demo page in Chromium on `sessionId`; its sockets to the stream route are counted. */
async function browserPage(sessionId) {
  const context = await browser.newContext();
  const tab = await context.newPage();
  const sockets = { opened: 0, closed: 0 };
  const errors = [];
  tab.on('pageerror', (error) => errors.push(error.message));
  tab.on('websocket', (socket) => {
    if (!socket.url().includes('/api/chat/stream/')) return;
    sockets.opened += 1;
    socket.on('close', () => (sockets.closed += 1));
  });
  const reads = [];
  tab.on('request', (request) => {
    if (request.url().includes('/api/chat/stream/')) reads.push(request.url());
  });
  await tab.goto(`${server.url}/?session=${sessionId}`);
  await tab.waitForSelector('html[data-live]');
  const shown = () => tab.$$eval('.pane .msg.assistant', (rows) => rows.map((row) => row.textContent));
  const shows = (answer) =>
    tab.waitForFunction(
      (answer) => [...document.querySelectorAll('.pane .msg.assistant:not(.streaming)')].some((r) => r.textContent === answer),
      answer,
      { timeout: 20_000 },
    );
  return { context, sockets, reads, errors, shows, shown };
}

const answers = (chunks) =>
  projectChatSnapshot(chunks).messages.filter((m) => m.role === 'assistant').map((m) => m.content);

async function turn(sessionId, input, tenant = TENANT) {
  const response = await postTurn(server.url, tenant, sessionId, input);
  assert.equal(response.status, 200);
  await response.text();
}

test('an idle page on a socket lets its stream object go; the next turn still reaches it', async (t) => {
  const run = `${process.pid}`;
  const ids = { browser: `hib-page-${run}`, socket: `hib-socket-${run}`, sse: `hib-sse-${run}` };
  const tenants = { browser: PAGE_TENANT, socket: TENANT, sse: TENANT };
  const kinds = Object.keys(ids);
  for (const kind of kinds) await turn(ids[kind], 'first', tenants[kind]);
  const pages = {
    browser: await browserPage(ids.browser),
    socket: page(ids.socket, { socket: true }),
    sse: page(ids.sse, { socket: false }),
  };
  for (const kind of kinds) await pages[kind].shows('echo: first');
  const look = async () => Object.fromEntries(await Promise.all(kinds.map(async (k) => [k, await instance(ids[k], tenants[k])])));
  const first = await look();
  assert.equal(first.browser.sockets, 1, 'the browser page holds one socket on its object');
  assert.equal(first.socket.sockets, 1, 'the Node socket page holds one socket on its object');
  assert.equal(first.sse.sockets, 0, 'the SSE page holds none');

  const rebuilt = (now, kind) => now[kind].marker !== first[kind].marker;
  let evicted = null;
  for (let round = 1; round <= ROUNDS_MAX && !evicted; round += 1) {
    await sleep(IDLE_MS); // every page idle, connected
    for (const kind of kinds) await turn(ids[kind], `round ${round}`, tenants[kind]);
    for (const kind of kinds) await pages[kind].shows(`echo: round ${round}`);
    const now = await look();
    t.diagnostic(`round ${round}: ${kinds.map((k) => `${k} object ${rebuilt(now, k) ? 'rebuilt' : 'kept'}`).join(', ')}`);
    if (rebuilt(now, 'browser') && rebuilt(now, 'socket')) evicted = { round, now };
  }
  assert.ok(evicted, `workerd never let both socket pages' objects go in ${ROUNDS_MAX} idle rounds`);
  const { round, now } = evicted;
  const expected = ['echo: first', ...Array.from({ length: round }, (_, i) => `echo: round ${i + 1}`)];
  // Each socket page's object was rebuilt (its memory gone) while the page's one socket stayed
  // open, and the turns appended after that reached the page through it, once each, in order.
  for (const kind of ['browser', 'socket']) {
    assert.equal(now[kind].sockets, 1, `${kind}: the rebuilt object found the open socket`);
    assert.deepEqual(pages[kind].sockets, { opened: 1, closed: 0 }, `${kind}: one socket, never closed`);
    assert.equal(pages[kind].reads.length, 0, `${kind}: no SSE read, the socket carried everything`);
  }
  assert.deepEqual(await pages.browser.shown(), expected, 'the browser page: every turn once, in order');
  assert.deepEqual(pages.browser.errors, []);
  assert.deepEqual(answers(pages.socket.chunks), expected, 'the Node socket page: every turn once, in order');
  // Over the same rounds the SSE page's object never went: its open response held it.
  assert.equal(now.sse.marker, first.sse.marker, 'the SSE page kept its object in memory');
  assert.deepEqual(answers(pages.sse.chunks), expected);
  assert.ok(pages.sse.reads.length >= 1);

  for (const line of costTable(idleTabCost())) t.diagnostic(line);
  await pages.browser.context.close();
  for (const kind of ['socket', 'sse']) pages[kind].connection.dispose();
});

test('a socket that cannot open falls back to SSE, resuming from its offset', async () => {
  const id = `hib-fallback-${process.pid}`;
  await turn(id, 'before');
  // A server without the upgrade answers a socket handshake with something other than 101:
  // here a socket factory that fails as a refused handshake does.
  let tries = 0;
  const reads = [];
  const connection = createChatConnection({
    target: {
      url: `${server.url}/api/chat/stream/${id}`,
      chatUrl: `${server.url}/api/chat`,
      sessionId: id,
      headers: { authorization: `Bearer ${TENANT}` },
    },
    fetch: (request) => (reads.push(new URL(request.url)), fetch(request)),
    webSocket: (url) => {
      tries += 1;
      return new WebSocket(url.replace('/api/chat/stream/', '/api/no-such-route/'));
    },
  });
  const chunks = [];
  const reading = (async () => {
    for await (const chunk of connection.subscribe()) {
      chunks.push(chunk);
      if (answers(chunks).includes('echo: after')) break;
    }
  })();
  while (reads.length === 0) await sleep(20);
  await turn(id, 'after');
  await reading;
  assert.equal(tries, 1, 'one socket tried, then SSE from then on');
  assert.deepEqual(answers(chunks), ['echo: before', 'echo: after']);
  assert.equal(reads[0].searchParams.get('live'), 'sse');
  connection.dispose();
});

test('a socket read refuses another tenant and a bad session id as the SSE read does', async () => {
  const open = (path, headers) =>
    new Promise((resolve) => {
      const ws = new WebSocket(`${server.url.replace('http', 'ws')}${path}?offset=-1&live=sse`, { headers });
      ws.on('unexpected-response', (_, response) => resolve(response.statusCode));
      ws.on('open', () => (ws.close(), resolve(101)));
      ws.on('error', () => {});
    });
  const id = `hib-auth-${process.pid}`;
  await turn(id, 'hello');
  assert.equal(await open(`/api/chat/stream/${id}`, { authorization: `Bearer ${TENANT}` }), 101);
  assert.equal(await open(`/api/chat/stream/${id}`, {}), 401, 'no tenant');
  // A cookie alone counts only from the Worker's own origin (a browser always sends Origin).
  const cookie = `turnkeep_tenant=${TENANT}`;
  assert.equal(await open(`/api/chat/stream/${id}`, { cookie, origin: server.url }), 101);
  assert.equal(await open(`/api/chat/stream/${id}`, { cookie, origin: 'https://evil.example' }), 401);
  assert.equal(await open(`/api/chat/stream/bad%2Fid`, { authorization: `Bearer ${TENANT}` }), 400);
});
