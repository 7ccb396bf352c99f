// The OpenAI-compatible model adapter (Rust, over the global fetch) against recorded streams
// replayed by tests/support/openai-fixture-server.mjs, first through the test-only export
// `__streamModelForTest`, then through the public API (createChatHandler + defineChat).
//
// Optional real-model lane: with TURNKEEP_REAL_MODEL_URL set (scripts/real-model.sh does it),
// the last test streams from a real llama.cpp server instead of the fixtures.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  createChatHandler,
  createDemoModel,
  createMemoryChatMemory,
  createMemorySessionStorage,
  createOpenAICompatibleModel,
  defineChat,
} from '../../js/node.mjs';
import { __streamModelForTest } from '../support/test-hooks.mjs';
import { startOpenAIFixtureServer } from '../support/openai-fixture-server.mjs';

let server;
before(async () => {
  server = await startOpenAIFixtureServer();
});
after(() => server.close());

const CREATED_AT = '2026-01-01T00:00:00.000Z';
const LOOKUP = {
  name: 'lookup',
  description: 'Looks something up.',
  parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  execute: async ({ query }) => `result for ${query}`,
};

function userMessage(content) {
  return { id: 'msg-1', role: 'user', content, status: 'complete', createdAt: CREATED_AT };
}

function model(extra = {}) {
  return createOpenAICompatibleModel({ baseUrl: server.baseUrl, apiKey: 'sk-test-key', model: 'fixture-model', ...extra });
}

/// Streams `input` through the adapter; returns `{ chunks, error?, afterAbort? }` and the
/// request the fixture server recorded for it.
async function stream(input, { descriptor = model(), tools = [], options = {} } = {}) {
  const before = server.requests.length;
  const result = await __streamModelForTest(descriptor, { messages: [userMessage(input)], tools }, options);
  return { ...result, request: server.requests[before] };
}

function textOf(chunks) {
  return chunks.filter((c) => c.type === 'text').map((c) => c.text).join('');
}

/// Fails with `what` if `promise` has not settled after `ms` (a hang guard, not a timing check).
function settleWithin(promise, ms, what) {
  let timer;
  const guard = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  return Promise.race([promise, guard]).finally(() => clearTimeout(timer));
}

test('a text answer streams as text chunks, then one finish with usage', async () => {
  const { chunks, error, request } = await stream('fixture:text');
  assert.equal(error, undefined);
  assert.equal(textOf(chunks), 'Hello there, friend — ça va?');
  assert.ok(chunks.filter((c) => c.type === 'text').length >= 5, 'text arrives in pieces, not as one blob');
  assert.deepEqual(chunks.at(-1), {
    type: 'finish',
    reason: 'stop',
    usage: { promptTokens: 12, completionTokens: 6, totalTokens: 18 },
  });
  assert.equal(chunks.filter((c) => c.type === 'finish').length, 1);
});

test('the request is a streaming chat/completions POST with the bearer key and the conversation', async () => {
  const { request } = await stream('fixture:text', { tools: [LOOKUP] });
  assert.equal(request.method, 'POST');
  assert.equal(request.path, '/v1/chat/completions');
  assert.equal(request.authorization, 'Bearer sk-test-key');
  assert.equal(request.contentType, 'application/json');
  assert.equal(request.body.model, 'fixture-model');
  assert.equal(request.body.stream, true);
  assert.deepEqual(request.body.messages, [{ role: 'user', content: 'fixture:text' }]);
  assert.deepEqual(request.body.tools, [
    { type: 'function', function: { name: 'lookup', description: LOOKUP.description, parameters: LOOKUP.parameters } },
  ]);
  assert.equal('stream_options' in request.body, false, 'usage is opt-in');
});

test('includeUsage asks for the usage chunk; no apiKey sends no Authorization', async () => {
  const { request } = await stream('fixture:text', {
    descriptor: createOpenAICompatibleModel({ baseUrl: `${server.baseUrl}/`, model: 'fixture-model', includeUsage: true }),
  });
  assert.deepEqual(request.body.stream_options, { include_usage: true });
  assert.equal(request.authorization, null);
  assert.equal(request.path, '/v1/chat/completions', 'a trailing slash on baseUrl is dropped');
});

test('a tool call whose deltas repeat id and name arrives as tool-call chunks of one index', async () => {
  const { chunks, error } = await stream('fixture:tool', { tools: [LOOKUP] });
  assert.equal(error, undefined);
  const calls = chunks.filter((c) => c.type === 'tool-call');
  assert.equal(calls.length, 4);
  for (const call of calls) {
    assert.equal(call.index, 0);
    assert.equal(call.id, 'call_fx_1');
    assert.equal(call.name, 'lookup');
  }
  assert.deepEqual(JSON.parse(calls.map((c) => c.argsDelta).join('')), { query: 'weather in Paris' });
  assert.deepEqual(chunks.at(-1), { type: 'finish', reason: 'tool-calls' });
});

test('an HTTP error status fails the call with the status only, never the provider body', async () => {
  const { chunks, error } = await stream('fixture:error');
  assert.deepEqual(chunks, []);
  assert.equal(error, 'the model endpoint answered HTTP 429');
});

test('an error inside the stream fails the call without quoting it', async () => {
  const { error } = await stream('fixture:stream-error');
  assert.equal(error, 'the model provider reported an error in the stream');
});

test('a body that ends mid-answer is a failure after the text that did arrive', async () => {
  const { chunks, error } = await stream('fixture:cut');
  assert.equal(textOf(chunks), 'This answer stops he');
  assert.equal(chunks.some((c) => c.type === 'finish'), false);
  assert.equal(error, 'the model stream ended before it finished');
});

test('a connection reset mid-answer is a failure, not a finish', async () => {
  const { chunks, error } = await stream('fixture:reset');
  assert.equal(chunks.some((c) => c.type === 'finish'), false);
  assert.equal(textOf(chunks), 'This answer stops he');
  assert.equal(error, 'the model stream broke off');
});

test('abort() stops the stream and the endpoint sees the client go away', async () => {
  const disconnected = server.waitForDisconnect();
  const { chunks, afterAbort, error } = await stream('fixture:endless', { options: { abortAfterChunks: 3 } });
  assert.equal(error, undefined);
  assert.equal(chunks.length, 3);
  assert.equal(afterAbort, null, 'no chunk after abort');
  await settleWithin(disconnected, 5_000, 'the fetch abort reaching the server');
});

test('an unreachable endpoint fails the call with a fixed text', async () => {
  const descriptor = createOpenAICompatibleModel({ baseUrl: 'http://127.0.0.1:9/v1', model: 'x' });
  const result = await __streamModelForTest(descriptor, { messages: [userMessage('hi')] }, {});
  assert.deepEqual(result, { chunks: [], error: 'the model endpoint could not be reached' });
});

test('the descriptor is frozen, branded, and never shows its key', () => {
  const descriptor = model();
  assert.equal(descriptor.kind, 'turnkeep.openai-compatible');
  assert.ok(Object.isFrozen(descriptor));
  assert.equal(JSON.stringify(descriptor).includes('sk-test-key'), false);
  assert.equal(Object.keys(descriptor).includes('apiKey'), false);
  for (const bad of [
    { baseUrl: 'ftp://x', model: 'm' },
    { baseUrl: 'not a url', model: 'm' },
    { baseUrl: 'http://x', model: '' },
    { baseUrl: 'http://x', model: 'm', apiKey: 'line\nbreak' },
    { baseUrl: 'http://x', model: 'm', includeUsage: 'yes' },
  ]) {
    assert.throws(() => createOpenAICompatibleModel(bad), { code: 'SERVER_INVALID_CONFIG' }, JSON.stringify(bad));
  }
});

// ---- Through the public API: one turn of createChatHandler with the OpenAI-compatible model.

let eventCounter = 0;
function submit(sessionId, turnId, input) {
  eventCounter += 1;
  return {
    protocol: 'agentskit.chat.turn',
    version: 1,
    eventId: `evt-${eventCounter}`,
    sessionId,
    turnId,
    sequence: 0,
    emittedAt: new Date().toISOString(),
    event: 'client.turn.submit',
    payload: { input },
  };
}

async function turn(chat, input, { sessionId = `s-${eventCounter}`, signal } = {}) {
  const storage = createMemorySessionStorage();
  const handler = createChatHandler({
    resolveDefinition: () => chat,
    sessionStorage: () => storage,
  });
  const response = await handler(
    new Request('http://localhost/api/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(submit(sessionId, `t-${eventCounter}`, input)),
      signal,
    }),
  );
  const text = await response.text();
  const lines = text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  return { status: response.status, lines, last: lines.at(-1) };
}

test('createChatHandler streams an OpenAI-compatible answer into the final snapshot', async () => {
  const chat = defineChat({ id: 'fixture-chat', revision: 1, model: model(), memory: createMemoryChatMemory() });
  const { status, last } = await turn(chat, 'fixture:text');
  assert.equal(status, 200);
  assert.equal(last.event, 'server.turn.snapshot');
  assert.equal(last.payload.status, 'complete');
  const assistant = last.payload.messages.find((m) => m.role === 'assistant');
  assert.equal(assistant.content, 'Hello there, friend — ça va?');
  assert.deepEqual(last.payload.usage, { promptTokens: 12, completionTokens: 6, totalTokens: 18 });
});

test('createChatHandler runs the tool the OpenAI-compatible model called', async () => {
  const seen = [];
  const tool = { ...LOOKUP, execute: async (args, { signal }) => (seen.push({ args, signal: signal instanceof AbortSignal }), 'sunny') };
  const memory = createMemoryChatMemory();
  const chat = defineChat({ id: 'fixture-chat', revision: 1, model: model(), memory, tools: [tool], maxToolIterations: 1 });
  const { last } = await turn(chat, 'fixture:tool');
  assert.deepEqual(seen, [{ args: { query: 'weather in Paris' }, signal: true }]);
  const call = last.payload.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.id === 'call_fx_1');
  assert.equal(call.name, 'lookup');
  assert.equal(call.status, 'complete');
  assert.equal(call.result, 'sunny');
  const toolMessage = last.payload.messages.find((m) => m.role === 'tool');
  assert.equal(toolMessage.content, 'sunny');
});

test('createChatHandler turns an HTTP error of the model into a safe error snapshot', async () => {
  const chat = defineChat({ id: 'fixture-chat', revision: 1, model: model(), memory: createMemoryChatMemory() });
  const { status, lines, last } = await turn(chat, 'fixture:error');
  assert.equal(status, 200);
  assert.equal(last.payload.status, 'error');
  assert.equal(JSON.stringify(lines).includes('secret'), false, 'the provider body never reaches the client');
});

test('the demo model descriptor drives a turn too', async () => {
  const chat = defineChat({ id: 'demo', revision: 1, model: createDemoModel({ chunkDelayMs: 0 }), memory: createMemoryChatMemory() });
  const { last } = await turn(chat, 'hello there');
  const assistant = last.payload.messages.find((m) => m.role === 'assistant');
  assert.equal(assistant.content, 'echo: hello there');
  assert.deepEqual(last.payload.usage, { promptTokens: 2, completionTokens: 3, totalTokens: 5 });
});

// ---- Optional lane: a real OpenAI-compatible server (scripts/real-model.sh).
const realUrl = process.env.TURNKEEP_REAL_MODEL_URL;
test('a real llama.cpp server streams a text answer', { skip: realUrl ? false : 'TURNKEEP_REAL_MODEL_URL is not set' }, async () => {
  const descriptor = createOpenAICompatibleModel({ baseUrl: realUrl, model: process.env.TURNKEEP_REAL_MODEL_NAME || 'smollm2' });
  const result = await __streamModelForTest(descriptor, { messages: [userMessage('Say hello in three words.')] }, {});
  assert.equal(result.error, undefined);
  assert.ok(textOf(result.chunks).trim().length > 0, 'some text came back');
  assert.equal(result.chunks.at(-1).type, 'finish');
  const aborted = await __streamModelForTest(descriptor, { messages: [userMessage('Count from 1 to 200.')] }, { abortAfterChunks: 2 });
  assert.equal(aborted.chunks.length, 2);
  assert.equal(aborted.afterAbort, null);
  const chat = defineChat({ id: 'real', revision: 1, model: descriptor, memory: createMemoryChatMemory() });
  const { last } = await turn(chat, 'Name one colour.');
  assert.equal(last.payload.status, 'complete');
  assert.ok(last.payload.messages.find((m) => m.role === 'assistant').content.length > 0);
});
