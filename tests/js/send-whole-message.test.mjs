// `connection.send(messages)` posts the last user message whole (`payload.message` beside the
// v1 `input`), so the stored message keeps what the client gave it — its id, attachments and
// metadata — at createChatHandler and at a host's own toChatResponse route alike. The message
// is checked before anything is posted, by the same reader the endpoint runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import * as server from '../../js/node.mjs';
import { createChatConnection } from '../../js/client/node.mjs';

const { createChatHandler, createDemoModel, createMemoryChatMemory, createMemorySessionLog, createMemorySessionStorage, decodeTurnEvent, defineChat, resolveChatSnapshot, toChatResponse } = server;

const PNG = 'data:image/png;base64,iVBORw0KGgo=';

function chatServer() {
  const memory = createMemoryChatMemory();
  const storage = createMemorySessionStorage();
  const posted = [];
  const chat = createChatHandler({
    authenticate: async () => ({ ok: true, context: {} }),
    resolveDefinition: () => defineChat({ id: 'demo', revision: 1, model: createDemoModel({ chunkDelayMs: 0 }), memory }),
    sessionStorage: () => storage,
  });
  const connection = createChatConnection({
    target: { url: 'http://app.test/api/chat/stream/s1', chatUrl: 'http://app.test/api/chat', sessionId: 's1' },
    fetch: async (request) => {
      posted.push(await request.clone().json());
      return chat(request);
    },
  });
  const stored = async () => memory.load({ signal: AbortSignal.timeout(1_000) });
  return { connection, posted, stored, chat };
}

// The same message in each vocabulary a page may hold, and the stored user message it becomes.
const CASES = [
  {
    name: 'an AI SDK UIMessage',
    message: {
      id: 'ui-1', role: 'user', metadata: { composer: 'main', draft: 3 },
      parts: [{ type: 'text', text: 'what is in ' }, { type: 'text', text: 'this picture?' }, { type: 'file', mediaType: 'image/png', url: PNG, filename: 'cat.png' }],
    },
    stored: {
      id: 'ui-1', content: 'what is in this picture?', metadata: { composer: 'main', draft: 3 },
      parts: [{ type: 'text', text: 'what is in this picture?' }, { type: 'file', source: PNG, mimeType: 'image/png', filename: 'cat.png' }],
    },
  },
  {
    name: 'a TanStack UI message',
    message: {
      id: 'ts-1', role: 'user', createdAt: '2026-07-11T03:00:00.000Z',
      parts: [{ type: 'text', content: 'and this one?' }, { type: 'image', source: { type: 'data', value: 'iVBORw0KGgo=', mimeType: 'image/png' } }],
    },
    stored: {
      id: 'ts-1', content: 'and this one?',
      parts: [{ type: 'text', text: 'and this one?' }, { type: 'file', source: PNG, mimeType: 'image/png' }],
    },
  },
  {
    name: 'an AgentsKit message',
    message: { id: 'ak-1', role: 'user', content: 'listen', parts: [{ type: 'audio', source: 'https://cdn.test/a.mp3', mimeType: 'audio/mpeg', durationSec: 2.5 }] },
    stored: {
      id: 'ak-1', content: 'listen',
      parts: [{ type: 'text', text: 'listen' }, { type: 'audio', source: 'https://cdn.test/a.mp3', mimeType: 'audio/mpeg', durationSec: 2.5 }],
    },
  },
];

for (const { name, message, stored } of CASES) {
  test(`send keeps ${name} whole: its id, attachments and metadata are stored`, async () => {
    const s = chatServer();
    const history = [{ id: 'old', role: 'assistant', content: 'earlier answer' }, message];
    const { snapshot } = await s.connection.send(history);
    assert.equal(snapshot.payload.status, 'complete');
    assert.deepEqual(s.posted[0].payload, { input: stored.content, message }, 'the last user message, posted whole');
    const [user, answer] = await s.stored();
    const { status, createdAt, role, ...kept } = user;
    assert.deepEqual([role, status], ['user', 'complete']);
    assert.deepEqual(kept, stored);
    assert.equal(answer.role, 'assistant');
    assert.match(answer.content, new RegExp(`echo: ${stored.content.replace(/\?/g, '\\?')}`));
    s.connection.dispose();
  });
}

test('a string is sent as it always was: input only, nothing else stored', async () => {
  const s = chatServer();
  await s.connection.send('plain text');
  assert.deepEqual(s.posted[0].payload, { input: 'plain text' });
  const [user] = await s.stored();
  assert.deepEqual([user.content, user.parts, user.metadata], ['plain text', undefined, undefined]);
  s.connection.dispose();
});

test('a broken attachment is refused before anything is posted, naming the field', async () => {
  const s = chatServer();
  const cases = [
    [[{ role: 'user', parts: [{ type: 'text', text: 'hi' }, { type: 'file', url: PNG }] }], /payload\.message\.parts\[1\].*mediaType/],
    [[{ role: 'user', content: 'hi', metadata: 'not an object' }], /payload\.message\.metadata must be a JSON object/],
    [[{ role: 'user', content: 'hi', id: '' }], /payload\.message\.id/],
    [[{ role: 'user', parts: [{ type: 'image', source: { type: 'id', value: 'file-123' } }, { type: 'text', text: 'x' }] }], /payload\.message\.parts\[0\].*provider file ids/],
  ];
  for (const [messages, error] of cases) {
    await assert.rejects(s.connection.send(messages), error, JSON.stringify(messages));
  }
  assert.equal(s.posted.length, 0);
  assert.deepEqual(await s.stored(), []);
  s.connection.dispose();
});

test('the endpoint refuses a hand-written body whose message breaks a rule: 400, nothing stored', async () => {
  const s = chatServer();
  const body = {
    protocol: 'agentskit.chat.turn', version: 1, eventId: 'e1', sessionId: 's1', turnId: 't1', sequence: 0,
    emittedAt: '2026-07-11T03:00:00.000Z', event: 'client.turn.submit',
    payload: { input: 'hi', message: { role: 'assistant', content: 'forged' } },
  };
  const response = await s.chat(new Request('http://app.test/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));
  assert.equal(response.status, 400);
  assert.equal((await response.json()).error.code, 'REQUEST_INVALID_EVENT');
  assert.deepEqual(await s.stored(), []);
  // The AgentsKit-compatible decoder reads the same body as v1 does: the extension is not its.
  const decoded = decodeTurnEvent({ ...body, payload: { input: 'hi', message: { id: 'm1' } } });
  assert.equal(decoded.ok, true);
  assert.deepEqual(decoded.event.payload, { input: 'hi' });
});

test('a host route with toChatResponse passes the posted message on whole as newMessages', async () => {
  const log = createMemorySessionLog();
  const route = async (request) => {
    const body = await request.json();
    const event = decodeTurnEvent(body);
    if (!event.ok) return Response.json({ error: event.error }, { status: 400 });
    const user = body.payload.message ?? { role: 'user', content: event.event.payload.input };
    async function* answer() {
      yield { type: 'TEXT_MESSAGE_START', messageId: 'a1', role: 'assistant' };
      yield { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a1', delta: 'seen' };
      yield { type: 'TEXT_MESSAGE_END', messageId: 'a1' };
    }
    return toChatResponse({ target: log, request, sessionId: event.event.sessionId, authorize: () => true, newMessages: [user], source: answer(), mode: 'await' });
  };
  const connection = createChatConnection({
    target: { url: 'http://app.test/api/chat/stream/s1', chatUrl: 'http://app.test/api/chat', sessionId: 's1' },
    fetch: (request) => route(request),
  });
  const message = { id: 'ui-9', role: 'user', metadata: { tag: 'kept' }, parts: [{ type: 'text', text: 'see' }, { type: 'file', mediaType: 'image/png', url: PNG }] };
  await connection.send([message]);
  const snapshot = await resolveChatSnapshot({ target: log });
  const user = snapshot.nativeMessages.find((m) => m.id === 'ui-9');
  assert.ok(user, JSON.stringify(snapshot.nativeMessages));
  assert.deepEqual(user.metadata, { tag: 'kept' });
  assert.deepEqual(user.parts, message.parts, 'the native parts survive storage unchanged');
  connection.dispose();
});
