// TurnkeepChatTransport (turnkeep/client) under the AI SDK's own client (ai 7's AbstractChat, the
// class useChat wraps), over a page's one createChatConnection. The server is Node:
// createUIMessageChatHandler at /api/chat and createSessionLogHandler at /api/log/:id, both over
// the same memory session logs (a database's log, as turnkeep/redis gives one, served to the
// browser without a streams server).
//
// - a turn sent through the transport builds the stored answer;
// - a page that opens mid-answer resumes from the offset its seed holds (its one SSE read starts
//   there, not at -1) and ends with every word once;
// - a turn sent from another tab reaches this one (onRemoteTurn, then resumeStream);
// - stop() from another tab ends the answer in this one;
// - createSessionLogHandler answers reads as the Durable Streams protocol says (catch-up,
//   long-poll, bad offsets).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';

import * as pkg from '../../js/node.mjs';
import { TestChat, textOf, waitFor, words } from '../support/ai-sdk.mjs';
import { createChatConnection, TurnkeepChatTransport } from '../../js/client/node.mjs';

const {
  createUIMessageChatHandler, createSessionLogHandler, createDemoModel, createMemoryChatMemory,
  createMemorySessionLog, createMemorySessionStorage, defineChat, resolveChatSnapshot, toNodeHandler,
} = pkg;

let server;
let base;
const sessions = new Map();
const pending = [];

function session(id) {
  if (!sessions.has(id)) sessions.set(id, { memory: createMemoryChatMemory(), log: createMemorySessionLog() });
  return sessions.get(id);
}

before(async () => {
  const storage = createMemorySessionStorage();
  const chat = createUIMessageChatHandler({
    resolveDefinition: (_c, id) => defineChat({ id: 'demo', revision: 1, model: createDemoModel({ chunkDelayMs: 10 }), memory: session(id).memory }),
    sessionStorage: () => storage,
    sessionLog: (_c, id) => session(id).log,
  });
  const logs = createSessionLogHandler({
    log: (request) => session(decodeURIComponent(new URL(request.url).pathname.split('/').pop())).log,
    sseMs: 2_000,
  });
  const host = { waitUntil: (p) => pending.push(p) };
  const chatNode = toNodeHandler((r) => chat(r, host));
  const logNode = toNodeHandler(logs);
  server = createServer((req, res) => (req.url.startsWith('/api/log/') ? logNode(req, res) : chatNode(req, res)));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(async () => {
  await Promise.allSettled(pending);
  server?.close();
  server?.closeAllConnections?.();
});


let ids = 0;
const newChatId = () => `tr-${process.pid}-${++ids}`;

/** A page: its one connection (recording its reads), the transport, the chat. */
function page(id, { seed } = {}) {
  const reads = [];
  const connection = createChatConnection({
    target: { url: `${base}/api/log/${id}` },
    initialMessages: seed?.messages,
    initialOffset: seed?.offset ?? undefined,
    initialRunId: seed?.activeRunId ?? undefined,
    fetch: (request) => {
      reads.push(request.url);
      return fetch(request);
    },
  });
  const transport = new TurnkeepChatTransport({ connection, api: `${base}/api/chat` });
  const chat = new TestChat({ id, transport, messages: transport.messages() });
  return { connection, transport, chat, reads, close: () => connection.dispose() };
}


test('a turn sent through the transport builds the stored answer', async () => {
  const id = newChatId();
  const a = page(id);
  await a.chat.sendMessage({ text: 'hello' });
  assert.equal(a.chat.status, 'ready', a.chat.error?.message);
  assert.equal(textOf(a.chat.messages[1]), 'echo: hello');
  await Promise.allSettled(pending);
  const saved = await session(id).memory.load({ signal: AbortSignal.timeout(5_000) });
  assert.equal(saved[1].id, a.chat.messages[1].id);
  a.close();
});

test('a page opened mid-answer resumes from its seed\'s offset over its one read, every word once', async () => {
  const id = newChatId();
  const a = page(id);
  const sending = a.chat.sendMessage({ text: '/words 100' });
  await waitFor(() => textOf(a.chat.messages[1]).includes('w10'));
  // The server renders the page: the seed is the log's projection and its offset.
  const seed = await resolveChatSnapshot({ target: session(id).log });
  assert.ok(seed.activeRunId, 'the turn runs');
  const b = page(id, { seed });
  assert.ok(textOf(b.chat.messages.at(-1)).includes('w10'), 'the first paint has the partial answer');
  await b.chat.resumeStream();
  assert.equal(b.chat.status, 'ready', b.chat.error?.message);
  assert.equal(b.chat.messages.length, 2, 'no duplicate message');
  assert.equal(textOf(b.chat.messages[1]), words(100));
  assert.equal(b.reads.length, 1, `one read: ${b.reads.join(', ')}`);
  assert.equal(new URL(b.reads[0]).searchParams.get('offset'), seed.offset, 'from the seed\'s offset, not a replay');
  await sending;
  assert.equal(textOf(a.chat.messages[1]), words(100));
  a.close();
  b.close();
});

test('a turn sent from another tab reaches this one; stop() from another tab ends the answer here', async () => {
  const id = newChatId();
  const a = page(id);
  const b = page(id);
  const remote = [];
  const stopListening = b.transport.onRemoteTurn(async ({ runId }) => {
    remote.push(runId);
    b.chat.messages = b.transport.messages();
    await b.chat.resumeStream();
  });
  await new Promise((r) => setTimeout(r, 100)); // b's read is open
  await a.chat.sendMessage({ text: 'from tab A' });
  await waitFor(() => textOf(b.chat.messages.at(-1)) === 'echo: from tab A' && b.chat.status === 'ready');
  assert.equal(remote.length, 1);
  assert.deepEqual(b.chat.messages.map(textOf), ['from tab A', 'echo: from tab A']);

  const sending = a.chat.sendMessage({ text: '/words 2000' });
  await waitFor(() => /\bw5\b/.test(textOf(a.chat.messages.at(-1))));
  const answer = await b.transport.stop({ chatId: id });
  assert.equal(answer.state, 'stopping');
  await sending;
  assert.equal(a.chat.status, 'ready');
  assert.doesNotMatch(textOf(a.chat.messages.at(-1)), /w2000/);
  stopListening();
  a.close();
  b.close();
});

test('createSessionLogHandler: catch-up, long-poll and refusals as the Durable Streams protocol has them', async () => {
  const id = newChatId();
  const a = page(id);
  await a.chat.sendMessage({ text: 'one' });
  a.close();
  const all = await fetch(`${base}/api/log/${id}?offset=-1`);
  assert.equal(all.status, 200);
  const chunks = await all.json();
  assert.ok(chunks.some((c) => c.type === 'RUN_FINISHED'));
  const tail = all.headers.get('stream-next-offset');
  assert.ok(tail);
  assert.equal(all.headers.get('stream-up-to-date'), 'true');
  const t0 = Date.now();
  const idle = fetch(`${base}/api/log/${id}?offset=${encodeURIComponent(tail)}&live=long-poll`);
  await new Promise((r) => setTimeout(r, 100));
  const b = page(id, { seed: await resolveChatSnapshot({ target: session(id).log }) });
  await b.chat.sendMessage({ text: 'two' });
  const woke = await idle;
  assert.equal(woke.status, 200, 'the long-poll answered with what was appended');
  assert.ok((await woke.json()).length > 0);
  assert.ok(Date.now() - t0 < 10_000);
  for (const [query, status, code] of [
    ['?offset=a%2Fb', 400, 'streams.v1.offset_malformed'],
    ['?offset=1&offset=2', 400, 'streams.v1.offset_repeated'],
    ['?live=sse', 400, 'streams.v1.offset_required'],
  ]) {
    const r = await fetch(`${base}/api/log/${id}${query}`);
    assert.equal(r.status, status, query);
    assert.equal((await r.json()).error.code, code);
  }
  const post = await fetch(`${base}/api/log/${id}`, { method: 'POST', body: '[]' });
  assert.equal(post.status, 405);
  assert.equal(post.headers.get('allow'), 'GET, HEAD');
  b.close();
});

test('the connection\'s authorize is asked for the transport\'s own posts: a refusal sends nothing', async () => {
  const id = newChatId();
  const asked = [];
  const connection = createChatConnection({
    target: { url: `${base}/api/log/${id}`, sessionId: id },
    authorize: (request, sessionId) => {
      asked.push([request.method, new URL(request.url).pathname, sessionId]);
      return false;
    },
  });
  const transport = new TurnkeepChatTransport({ connection, api: `${base}/api/chat` });
  const chat = new TestChat({ id, transport, messages: transport.messages() });
  await chat.sendMessage({ text: 'hello' });
  assert.equal(chat.status, 'error');
  assert.equal(chat.error?.code, 'SESSION_FORBIDDEN', chat.error?.message);
  assert.deepEqual(asked, [['POST', '/api/chat', id]]);
  assert.deepEqual(await session(id).memory.load({ signal: AbortSignal.timeout(5_000) }), [], 'nothing reached the route');
  connection.dispose();
});
