// createChatHandler with a session log, in Node with real Request/Response/ReadableStream:
// every turn is published, the log projects to the saved messages, a client that goes away no
// longer stops the turn, `client.turn.stop` does, and `onError` receives what host code threw.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  createChatHandler,
  createDemoModel,
  createMemoryChatMemory,
  createMemorySessionLog,
  createMemorySessionStorage,
  defineChat,
  projectChatSnapshot,
  resolveChatSnapshot,
} from '../../js/node.mjs';
import { submitEvent } from '../support/chat-harness.mjs';

function setup({ chunkDelayMs = 0, onError, sessionLog } = {}) {
  const storage = createMemorySessionStorage();
  const memory = createMemoryChatMemory();
  const log = createMemorySessionLog();
  const tools = [
    {
      name: 'lookup',
      description: 'Looks a query up.',
      parameters: { type: 'object', properties: { query: { type: 'string' } } },
      execute: ({ query }) => `result for ${query}`,
    },
  ];
  const chat = defineChat({ id: 'demo', revision: 1, model: createDemoModel({ chunkDelayMs }), memory, tools });
  const pending = [];
  const host = { waitUntil: (promise) => pending.push(promise) };
  const handler = createChatHandler({
    resolveDefinition: () => chat,
    sessionStorage: () => storage,
    sessionLog: sessionLog ?? (() => log),
    onError,
  });
  const post = (event, init = {}) =>
    handler(new Request('http://local/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event), ...init }), host);
  const settled = () => Promise.all(pending.splice(0));
  return { storage, memory, log, post, settled };
}

const event = (turnId, input, extra = {}) => submitEvent({ sessionId: 's1', turnId, input, ...extra });

test('every turn is published to the log, which projects to the messages saved in memory', async () => {
  const { memory, log, post, settled } = setup();
  for (const [i, input] of ['hello', '/tool cats', '/words 12', '/fail'].entries()) {
    const response = await post(event(`t${i}`, input));
    assert.equal(response.status, 200);
    await response.text();
    await settled();
    const { chunks } = await log.read();
    assert.deepEqual(projectChatSnapshot(chunks).messages, await memory.load(), `after ${input}`);
  }
  const snapshot = await resolveChatSnapshot({ target: log });
  assert.ok(snapshot.offset);
  assert.ok(snapshot.renderParts.some((p) => p.type === 'tool' && p.name === 'lookup' && p.status === 'complete' && p.result === 'result for cats'));
  const types = new Set((await log.read()).chunks.map((c) => c.type));
  for (const type of ['RUN_STARTED', 'TEXT_MESSAGE_START', 'TOOL_CALL_START', 'TOOL_CALL_RESULT', 'RUN_FINISHED', 'RUN_ERROR']) {
    assert.ok(types.has(type), type);
  }
});

test('with a log, a client that goes away leaves the turn running to its end', async () => {
  const { memory, log, post, settled } = setup({ chunkDelayMs: 5 });
  const controller = new AbortController();
  const response = await post(event('t1', '/words 30'), { signal: controller.signal });
  const reader = response.body.getReader();
  await reader.read();
  controller.abort();
  await settled();
  const saved = await memory.load();
  assert.match(saved.at(-1).content, / w30$/);
  assert.deepEqual(projectChatSnapshot((await log.read()).chunks).messages, saved);
});

test('client.turn.stop from another request stops the turn; a second stop says it ended', async () => {
  const { memory, post, settled } = setup({ chunkDelayMs: 10 });
  const response = await post(event('t1', '/words 500'));
  const reader = response.body.getReader();
  await reader.read();
  const stop = await post({ ...event('t1', 'x'), event: 'client.turn.stop', payload: {} });
  assert.equal(stop.status, 202);
  assert.equal((await stop.json()).stop.state, 'stopping');
  let text = '';
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  const last = JSON.parse(text.trim().split('\n').at(-1));
  assert.equal(last.event, 'server.turn.snapshot');
  await settled();
  const words = (await memory.load()).at(-1).content.split(' ').length;
  assert.ok(words < 500, `${words} words`);
  const again = await post({ ...event('t1', 'x'), event: 'client.turn.stop', payload: {} });
  assert.equal(again.status, 200);
  assert.deepEqual((await again.json()).stop, { version: 1, turnId: 't1', state: 'ended', outcome: 'completed' });
});

test('without a log, client.turn.stop is refused with its diagnostic', async () => {
  const { post } = setup({ sessionLog: () => undefined, chunkDelayMs: 10 });
  const response = await post(event('t1', '/words 50'));
  const stop = await post({ ...event('t1', 'x'), event: 'client.turn.stop', payload: {} });
  assert.equal(stop.status, 409);
  assert.equal((await stop.json()).error.code, 'TURN_STOP_UNAVAILABLE');
  await response.text();
});

test('onError receives the very error a host callback threw, with its stage; the client gets only the safe diagnostic', async () => {
  const seen = [];
  const thrown = new Error('database password is hunter2');
  const storage = createMemorySessionStorage();
  const handler = createChatHandler({
    resolveDefinition: () => {
      throw thrown;
    },
    sessionStorage: () => storage,
    onError: (error, info) => seen.push({ error, info }),
  });
  const response = await handler(
    new Request('http://local/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event('t1', 'hi')) }),
  );
  assert.equal(response.status, 500);
  const body = await response.text();
  assert.doesNotMatch(body, /hunter2/);
  assert.equal(JSON.parse(body).error.code, 'SERVER_INTERNAL');
  assert.equal(seen.length, 1);
  assert.equal(seen[0].error, thrown, 'the same object, not a copy');
  assert.deepEqual(seen[0].info, { stage: 'resolveDefinition', sessionId: 's1', turnId: 't1' });
});

test('onError hears about a failing memory save and a failing tool while the turn still answers', async () => {
  const seen = [];
  const storage = createMemorySessionStorage();
  const failure = new Error('disk full');
  let saves = 0;
  // The user's message is kept before the answer; the closing save fails.
  const memory = { load: () => [], save: () => (saves++ === 0 ? Promise.resolve() : Promise.reject(failure)) };
  const boom = new Error('tool exploded');
  const chat = defineChat({
    id: 'demo',
    revision: 1,
    model: createDemoModel({ chunkDelayMs: 0 }),
    memory,
    tools: [{ name: 'lookup', description: 'x', parameters: { type: 'object' }, execute: () => { throw boom; } }],
  });
  const handler = createChatHandler({ resolveDefinition: () => chat, sessionStorage: () => storage, onError: (error, info) => seen.push({ error, stage: info.stage }) });
  const response = await handler(
    new Request('http://local/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event('t1', '/tool cats')) }),
  );
  const lines = (await response.text()).trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.at(-1).payload.code, 'SERVER_INTERNAL');
  assert.ok(seen.some((s) => s.stage === 'tool'), JSON.stringify(seen.map((s) => s.stage)));
  assert.ok(seen.some((s) => s.stage === 'memory.save' && s.error === failure));
});

test('a signal handed to many log calls keeps no listener once each call is done', async () => {
  const { getEventListeners } = await import('node:events');
  const log = createMemorySessionLog();
  const signal = new AbortController().signal;
  for (let i = 0; i < 40; i++) {
    await log.append([JSON.stringify({ type: 'CUSTOM', name: 'n', value: i })], { signal });
    await log.read({ signal });
  }
  assert.equal(getEventListeners(signal, 'abort').length, 0);
  const stored = await log.read({});
  assert.equal(stored.chunks.length, 40);
});
