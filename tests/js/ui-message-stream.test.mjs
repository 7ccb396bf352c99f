// turnkeep behind the AI SDK, judged by the AI SDK's own client (ai 7, the real package): the
// stock DefaultChatTransport and AbstractChat (the class useChat wraps) against
// createUIMessageChatHandler in Node over HTTP (toNodeHandler), with the demo model, memory
// storage and a memory session log.
//
// - a turn's chunks are accepted by the client, and the message it builds is the one stored;
// - a stream aborted mid-answer and resumed by reconnectToStream ends with every word once;
// - reconnectToStream answers null (204) once the turn ended;
// - a stop from another client ends the stream within a second, keeping the partial answer;
// - 5 simultaneous sends: one answer, four 409s (the chat's error state says why);
// - approve: the tool ran once and its output arrives in the same assistant message;
// - 20 identical approval resubmits at once: one run, every stream ends well;
// - reject: the tool never runs, the part shows the denial;
// - a file part is kept in the stored message; regenerate replaces the last answer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';

import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, readUIMessageStream } from 'ai';
import * as pkg from '../../js/node.mjs';
import { TestChat, textOf, waitFor, words } from '../support/ai-sdk.mjs';

const { createUIMessageChatHandler, createDemoModel, createMemoryChatMemory, createMemorySessionLog, createMemorySessionStorage, defineChat, toNodeHandler } = pkg;

let server;
let base;
const sessions = new Map(); // sessionId → { memory, log }
const runs = []; // every execution of the transfer tool: { amount, idempotencyKey }
const pending = [];

const transfer = {
  name: 'transfer',
  description: 'Moves money; a person approves it first.',
  parameters: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
  requiresConfirmation: true,
  async execute(args, context) {
    runs.push({ amount: args.amount, idempotencyKey: context.idempotencyKey });
    return `transferred ${args.amount}`;
  },
};
const lookup = {
  name: 'lookup',
  description: 'Looks a thing up.',
  parameters: { type: 'object', properties: { query: { type: 'string' } } },
  execute: async ({ query }) => `result for ${query}`,
};

function session(id) {
  if (!sessions.has(id)) sessions.set(id, { memory: createMemoryChatMemory(), log: createMemorySessionLog() });
  return sessions.get(id);
}

before(async () => {
  const storage = createMemorySessionStorage();
  const handler = createUIMessageChatHandler({
    authenticate: (request) =>
      request.headers.get('authorization') === 'Bearer demo'
        ? { ok: true, context: {} }
        : { ok: false, response: new Response('unauthorized', { status: 401 }) },
    resolveDefinition: (_context, sessionId) =>
      defineChat({ id: 'demo', revision: 1, model: createDemoModel({ chunkDelayMs: 10 }), memory: session(sessionId).memory, tools: [lookup, transfer] }),
    sessionStorage: () => storage,
    sessionLog: (_context, sessionId) => session(sessionId).log,
  });
  const host = { waitUntil: (promise) => pending.push(promise) };
  const node = toNodeHandler((request) => handler(request, host));
  server = createServer((req, res) => {
    if (!req.url.startsWith('/api/chat')) return void res.writeHead(404).end();
    node(req, res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(async () => {
  await Promise.allSettled(pending);
  server?.close();
  server?.closeAllConnections?.();
});

const headers = { authorization: 'Bearer demo' };
const transport = () => new DefaultChatTransport({ api: `${base}/api/chat`, headers });
let chats = 0;
const newChatId = () => `ui-${process.pid}-${++chats}`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));


const chatFor = (id, init = {}) => new TestChat({ id, transport: transport(), ...init });

/** The stored conversation of `id` (canonical messages). */
async function stored(id) {
  await Promise.allSettled(pending);
  return session(id).memory.load({ signal: AbortSignal.timeout(5_000) });
}

test('a turn: the client accepts every chunk and builds the message the session stores', async () => {
  const id = newChatId();
  const chat = chatFor(id);
  await chat.sendMessage({ text: 'hello there' });
  assert.equal(chat.status, 'ready', chat.error?.message);
  assert.equal(chat.messages.length, 2);
  const [user, answer] = chat.messages;
  assert.equal(textOf(answer), 'echo: hello there');
  const saved = await stored(id);
  assert.deepEqual(saved.map((m) => m.role), ['user', 'assistant']);
  assert.equal(saved[0].id, user.id, 'the client\'s message id is kept');
  assert.equal(saved[1].id, answer.id, 'the UI message is the stored answer');
  assert.equal(saved[1].content, textOf(answer));

  // readUIMessageStream over the raw stream of a second turn builds the same text.
  const stream = await transport().sendMessages({
    chatId: id,
    trigger: 'submit-message',
    messageId: undefined,
    messages: [...chat.messages, { id: 'u2', role: 'user', parts: [{ type: 'text', text: '/tool cats' }] }],
    abortSignal: undefined,
  });
  let last;
  for await (const message of readUIMessageStream({ stream, terminateOnError: true })) last = message;
  const tool = last.parts.find((p) => p.type === 'tool-lookup');
  assert.equal(tool.state, 'output-available');
  assert.deepEqual(tool.input, { query: 'cats' });
  assert.equal(tool.output, 'result for cats');
  assert.equal(textOf(last), 'found: result for cats');
});

test('a stream aborted mid-answer and resumed by reconnectToStream ends with every word once, in order', async () => {
  const id = newChatId();
  const first = chatFor(id);
  const sending = first.sendMessage({ text: '/words 120' });
  await waitFor(() => textOf(first.messages[1] ?? { parts: [] }).includes('w10'));
  await first.stop(); // the AI SDK's stop(): disconnects only; the turn goes on (a session log keeps it)
  await sending;
  assert.ok(!textOf(first.messages[1]).includes('w120'), 'cut mid-answer');

  // A reload: a fresh chat with the messages so far, resuming.
  const messages = structuredClone(first.messages);
  const second = chatFor(id, { messages });
  await second.resumeStream();
  assert.equal(second.status, 'ready', second.error?.message);
  assert.equal(second.messages.length, 2, 'no duplicate assistant message');
  assert.equal(textOf(second.messages[1]), words(120));
  assert.equal(second.messages[1].id, first.messages[1].id);

  // Once the turn ended, there is nothing to resume: 204 → null, nothing changes.
  assert.equal(await transport().reconnectToStream({ chatId: id }), null);
  const third = chatFor(id, { messages: structuredClone(second.messages) });
  await third.resumeStream();
  assert.deepEqual(third.messages, second.messages);
});

test('a stop from another client ends the stream within a second and keeps the partial answer', async () => {
  const id = newChatId();
  const chat = chatFor(id);
  const sending = chat.sendMessage({ text: '/words 2000' });
  await waitFor(() => textOf(chat.messages[1] ?? { parts: [] }).includes('w5'));
  const stopped = Date.now();
  const response = await fetch(`${base}/api/chat/${id}/stop`, { method: 'POST', headers });
  assert.equal(response.status, 202);
  assert.equal((await response.json()).stop.state, 'stopping');
  await sending;
  const took = Date.now() - stopped;
  assert.ok(took < 1_000, `the stream ended ${took} ms after the stop`);
  assert.equal(chat.status, 'ready', 'a stop is not an error');
  const partial = textOf(chat.messages[1]);
  assert.match(partial, /^w1 w2 w3 w4 w5/);
  assert.doesNotMatch(partial, /w2000/);
  const saved = await stored(id);
  assert.equal(saved.at(-1).content, partial, 'the partial answer is saved as the client shows it');
  // Nothing runs now: a stop says so.
  const idle = await fetch(`${base}/api/chat/${id}/stop`, { method: 'POST', headers });
  assert.equal((await idle.json()).stop.state, 'idle');
});

test('5 simultaneous sends: one answer, four 409 SESSION_BUSY', async () => {
  const id = newChatId();
  const clients = Array.from({ length: 5 }, () => chatFor(id));
  await Promise.all(clients.map((chat, i) => chat.sendMessage({ text: `/words ${20 + i}` })));
  const answered = clients.filter((c) => c.status === 'ready');
  const refused = clients.filter((c) => c.status === 'error');
  assert.equal(answered.length, 1);
  assert.equal(refused.length, 4);
  for (const chat of refused) {
    assert.equal(chat.error.statusCode, 409);
    assert.equal(JSON.parse(chat.error.message).error.code, 'SESSION_BUSY');
  }
  const saved = await stored(id);
  assert.equal(saved.filter((m) => m.role === 'assistant').length, 1, 'one model answer');
});

test('approve: the approval request, then the tool runs once and its output arrives in the same message', async () => {
  const id = newChatId();
  const before = runs.length;
  const chat = chatFor(id, { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
  await chat.sendMessage({ text: '/confirm 7' });
  assert.equal(chat.status, 'ready', chat.error?.message);
  const asking = chat.messages[1].parts.find((p) => p.type === 'tool-transfer');
  assert.equal(asking.state, 'approval-requested');
  assert.match(asking.approval.id, /^confirm-/);
  const answerId = chat.messages[1].id;

  await chat.addToolApprovalResponse({ id: asking.approval.id, approved: true });
  await waitFor(() => chat.status === 'ready' && chat.messages[1].parts.some((p) => p.type === 'tool-transfer' && p.state === 'output-available'));
  await waitFor(() => chat.status === 'ready' && textOf(chat.messages[1]).length > 0);
  assert.equal(chat.messages.length, 2, 'the continuation writes into the same assistant message');
  assert.equal(chat.messages[1].id, answerId);
  const done = chat.messages[1].parts.find((p) => p.type === 'tool-transfer');
  assert.equal(done.output, 'transferred 7');
  assert.equal(done.approval.approved, true);
  assert.equal(runs.length - before, 1, 'the tool ran once');
  assert.equal(runs.at(-1).idempotencyKey, asking.approval.id, 'its idempotency key is the token');
});

test('20 identical approval resubmits at once: the tool runs once, every stream ends without error', async () => {
  const id = newChatId();
  const chat = chatFor(id);
  await chat.sendMessage({ text: '/confirm 20' });
  const asking = chat.messages[1].parts.find((p) => p.type === 'tool-transfer');
  const answered = structuredClone(chat.messages);
  const part = answered[1].parts.find((p) => p.type === 'tool-transfer');
  part.state = 'approval-responded';
  part.approval = { id: asking.approval.id, approved: true };
  const before = runs.length;
  const clients = Array.from({ length: 20 }, () => chatFor(id, { messages: structuredClone(answered) }));
  await Promise.all(clients.map((c) => c.sendMessage()));
  assert.equal(runs.length - before, 1, 'one run of the tool');
  for (const c of clients) {
    assert.equal(c.status, 'ready', c.error?.message);
    assert.equal(c.messages.length, 2, 'no duplicate assistant message');
    const result = c.messages[1].parts.find((p) => p.type === 'tool-transfer');
    assert.equal(result.state, 'output-available');
    assert.equal(result.output, 'transferred 20');
  }
});

test('reject: the tool never runs; the part shows the denial and the model reads it', async () => {
  const id = newChatId();
  const before = runs.length;
  const chat = chatFor(id, { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
  await chat.sendMessage({ text: '/confirm 99' });
  const asking = chat.messages[1].parts.find((p) => p.type === 'tool-transfer');
  await chat.addToolApprovalResponse({ id: asking.approval.id, approved: false, reason: 'no thanks' });
  await waitFor(() => chat.status === 'ready' && chat.messages[1].parts.some((p) => p.type === 'tool-transfer' && p.state === 'output-denied'));
  await waitFor(() => chat.status === 'ready' && /rejected/.test(textOf(chat.messages[1])));
  assert.equal(runs.length, before, 'never ran');
  assert.equal(chat.messages.length, 2);
});

test('a file part is kept in the stored message; regenerate replaces the last answer', async () => {
  const id = newChatId();
  const chat = chatFor(id);
  const file = { type: 'file', mediaType: 'text/plain', filename: 'notes.txt', url: 'data:text/plain;base64,aGVsbG8=' };
  await chat.sendMessage({ text: 'see the file', files: [file] });
  assert.equal(chat.status, 'ready', chat.error?.message);
  const saved = await stored(id);
  assert.deepEqual(saved[0].parts, [
    { type: 'text', text: 'see the file' },
    { type: 'file', source: file.url, mimeType: 'text/plain', filename: 'notes.txt' },
  ]);
  const before = chat.messages[1].id;
  await chat.regenerate();
  assert.equal(chat.status, 'ready', chat.error?.message);
  assert.equal(chat.messages.length, 2);
  assert.notEqual(chat.messages[1].id, before, 'a new answer');
  const again = await stored(id);
  assert.deepEqual(again.map((m) => m.role), ['user', 'assistant'], 'the old answer was replaced');
  assert.equal(again[1].id, chat.messages[1].id);
});

test('the session as UIMessage[] for a first paint; refusals are versioned diagnostics', async () => {
  const id = newChatId();
  const chat = chatFor(id);
  await chat.sendMessage({ text: 'one' });
  await chat.sendMessage({ text: '/tool dogs' });
  const response = await fetch(`${base}/api/chat/${id}/messages`, { headers });
  assert.equal(response.status, 200);
  const { messages } = await response.json();
  assert.deepEqual(messages.map((m) => m.id), chat.messages.map((m) => m.id));
  assert.deepEqual(messages.map(textOf), chat.messages.map(textOf));
  const refusals = [
    [fetch(`${base}/api/chat`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{"id":"x"}' }), 400, 'REQUEST_INVALID_UI_MESSAGES'],
    [fetch(`${base}/api/chat`, { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body: '{}' }), 415, 'REQUEST_UNSUPPORTED_MEDIA_TYPE'],
    [fetch(`${base}/api/chat/a%2Fb/stream`, { headers }), 400, 'REQUEST_INVALID_UI_MESSAGES'],
  ];
  for (const [pending, status, code] of refusals) {
    const r = await pending;
    assert.equal(r.status, status);
    const body = await r.json();
    assert.equal(body.error.version, 1);
    assert.equal(body.error.code, code);
  }
  const unauthorized = await fetch(`${base}/api/chat/${id}/messages`);
  assert.equal(unauthorized.status, 401, "the host's own response, before anything is read");
});

