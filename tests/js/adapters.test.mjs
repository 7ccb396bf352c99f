// The JS-backed port adapters (src/web/adapters) driven with real host objects through the
// test-only wasm exports, and defineChat's config checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { createDemoModel, createMemoryChatMemory, defineChat } from '../../js/node.mjs';
import {
  __chatMemoryForTest,
  __runToolForTest,
  __sessionStorageConformanceForTest,
  __sessionStorageForTest,
  __streamModelForTest,
} from '../support/test-hooks.mjs';

const CREATED_AT = '2026-01-01T00:00:00.000Z';
const msg = (id, role, content) => ({ id, role, content, status: 'complete', createdAt: CREATED_AT });

// ---- JsSessionStorage

/// A correct CAS store over a Map, async like a real database client.
function casStore({ asText = false } = {}) {
  const rows = new Map();
  return {
    async load(sessionId) {
      const row = rows.get(sessionId);
      if (row === undefined) return null;
      return asText ? row : JSON.parse(row);
    },
    async save(snapshot, expectedCursor) {
      const current = rows.get(snapshot.sessionId);
      if (expectedCursor === undefined ? current !== undefined : current === undefined || JSON.parse(current).cursor !== expectedCursor) {
        return false;
      }
      rows.set(snapshot.sessionId, JSON.stringify(snapshot));
      return true;
    },
  };
}

/// Last-write-wins: not conformant.
function lwwStore() {
  const rows = new Map();
  return {
    load: (id) => rows.get(id) ?? null,
    save: (snapshot) => (rows.set(snapshot.sessionId, snapshot), true),
  };
}

test('a CAS host store passes the shared SessionStorage conformance suite through JsSessionStorage', async () => {
  for (const asText of [false, true]) {
    const report = await __sessionStorageConformanceForTest(() => casStore({ asText }));
    assert.deepEqual(report.failed, [], `asText=${asText}`);
    assert.equal(report.passed.length, 10);
  }
});

test('a last-write-wins host store fails the suite', async () => {
  const report = await __sessionStorageConformanceForTest(() => lwwStore());
  assert.ok(report.failed.length > 0);
});

test('JsSessionStorage: bad save results and throws are errors, absent is null', async () => {
  const check = async (store, op, a, b, expected) => {
    const got = await __sessionStorageForTest(store, op, a, b);
    if (expected.error instanceof RegExp) {
      assert.equal(got.ok, false, JSON.stringify(got));
      assert.match(got.error, expected.error);
    } else {
      assert.deepEqual(got, expected);
    }
  };
  const snapshot = { sessionId: 's1', cursor: 0 };
  await check({ load: () => undefined, save: () => true }, 'load', 's1', undefined, { ok: true, value: null });
  await check({ load: () => '{"a":1}', save: () => true }, 'load', 's1', undefined, { ok: true, value: '{"a":1}' });
  await check({ load: async () => ({ a: 1 }), save: () => true }, 'load', 's1', undefined, { ok: true, value: { a: 1 } });
  await check({ load: () => { throw new Error('db down'); }, save: () => true }, 'load', 's1', undefined, { error: /^sessionStorage\.load failed: db down$/ });
  await check({ load: () => null, save: async () => 'yes' }, 'save', snapshot, undefined, { error: /must resolve to true .* or false/ });
  await check({ load: () => null, save: async () => undefined }, 'save', snapshot, undefined, { error: /must resolve to true/ });
  await check({ load: () => null, save: () => Promise.reject(new Error('timeout')) }, 'save', snapshot, 3, { error: /^sessionStorage\.save failed: timeout$/ });
  // Any thenable is awaited as a Promise would be; an object whose `then` is no function is a value.
  const later = (value) => ({ then: (ok) => setTimeout(() => ok(value), 1) });
  await check({ load: () => later({ a: 2 }), save: () => true }, 'load', 's1', undefined, { ok: true, value: { a: 2 } });
  await check({ load: () => ({ then: (_, fail) => fail(new Error('late')) }), save: () => true }, 'load', 's1', undefined, { error: /^sessionStorage\.load failed: late$/ });
  await check({ load: () => ({ then: 'no', a: 3 }), save: () => true }, 'load', 's1', undefined, { ok: true, value: { then: 'no', a: 3 } });
  await check({ load: () => null, save: () => later(true) }, 'save', snapshot, undefined, { ok: true, value: true });
  let seen;
  await check({ load: () => null, save: (s, c) => ((seen = [s, c]), false) }, 'save', snapshot, 7, { ok: true, value: false });
  assert.deepEqual(seen, [snapshot, 7]);
  assert.throws(() => __sessionStorageForTest({ load() {} }, 'load', 's1'), /sessionStorage\.save must be a function/);
});

// ---- JsChatMemory and createMemoryChatMemory

test('createMemoryChatMemory round-trips canonical messages and starts empty', async () => {
  const memory = createMemoryChatMemory();
  assert.deepEqual(await __chatMemoryForTest(memory), { ok: true, value: [] });
  const messages = [msg('m1', 'user', 'hi'), { ...msg('m2', 'assistant', 'hello'), extra: 'dropped' }];
  const got = await __chatMemoryForTest(memory, messages);
  assert.deepEqual(got, { ok: true, value: [msg('m1', 'user', 'hi'), msg('m2', 'assistant', 'hello')] });
  await assert.rejects(memory.save([{ id: 'x' }]), /MemoryChatMemory\.save: messages\[0\]/);
});

test('JsChatMemory passes { signal } and validates what the host loads', async () => {
  const calls = [];
  const host = {
    stored: [msg('m1', 'user', 'hi')],
    load(options) {
      calls.push(['load', Object.keys(options)]);
      return this.stored;
    },
    async save(messages, options) {
      calls.push(['save', Object.keys(options)]);
      this.stored = messages;
    },
  };
  assert.deepEqual(await __chatMemoryForTest(host), { ok: true, value: [msg('m1', 'user', 'hi')] });
  const bad = await __chatMemoryForTest({ load: () => [{ id: 'm1', role: 'robot' }], save() {} });
  assert.equal(bad.ok, false);
  assert.match(bad.error, /^memory\.load returned invalid messages: messages\[0\]/);
  const threw = await __chatMemoryForTest({ load: () => Promise.reject(new Error('gone')), save() {} });
  assert.deepEqual(threw, { ok: false, error: 'memory.load failed: gone' });
  const nothing = await __chatMemoryForTest({ load: () => null, save() {} });
  assert.deepEqual(nothing, { ok: true, value: [] });
  await __chatMemoryForTest(host, [msg('m9', 'user', 'saved')]);
  assert.deepEqual(host.stored, [msg('m9', 'user', 'saved')]);
  assert.deepEqual(calls.map((c) => c[0]), ['load', 'save', 'load']);
});

// ---- JsTool

const baseTool = {
  name: 'lookup',
  description: 'Looks up.',
  parameters: { type: 'object', properties: { q: { type: 'string' } } },
};

test('JsTool: strings pass as is, other results are JSON.stringify text, throws become "Tool failed."', async () => {
  const check = async (execute, expected) => {
    const got = await __runToolForTest({ ...baseTool, execute }, { q: 'x' }, {});
    assert.deepEqual({ ok: got.ok, value: got.value, error: got.error }, expected);
  };
  await check((args) => `result for ${args.q}`, { ok: true, value: 'result for x', error: undefined });
  await check(async () => ({ temp: 21, unit: 'C' }), { ok: true, value: '{"temp":21,"unit":"C"}', error: undefined });
  await check(() => 42, { ok: true, value: '42', error: undefined });
  await check(() => undefined, { ok: true, value: '', error: undefined });
  await check(() => { throw new Error('quota exceeded'); }, { ok: false, value: undefined, error: 'Tool failed. quota exceeded' });
  await check(() => Promise.reject(new TypeError('bad input')), { ok: false, value: undefined, error: 'Tool failed. bad input' });
  await check(() => { throw 'secret string'; }, { ok: false, value: undefined, error: 'Tool failed.' });
  await check(() => { throw { token: 'secret' }; }, { ok: false, value: undefined, error: 'Tool failed.' });
  await check(() => 10n, { ok: false, value: undefined, error: 'Tool failed. It returned a value with no JSON form.' });
  const long = await __runToolForTest({ ...baseTool, execute: () => { throw new Error('e'.repeat(2_000)); } }, {}, {});
  assert.ok(long.error.length < 600, 'a long error message is cut');
});

test('JsTool: the turn cancel aborts the signal given to execute', async () => {
  let sawAbort = false;
  const tool = {
    ...baseTool,
    requiresConfirmation: true,
    execute: (args, { signal }) =>
      new Promise((_, reject) => {
        signal.addEventListener('abort', () => {
          sawAbort = true;
          reject(new Error('aborted'));
        });
      }),
  };
  const got = await __runToolForTest(tool, {}, { cancelAfterMs: 5 });
  assert.equal(sawAbort, true);
  assert.deepEqual(got, {
    ok: false,
    error: 'Tool failed. aborted',
    spec: { name: 'lookup', description: 'Looks up.', parameters: baseTool.parameters, requiresConfirmation: true },
  });
});

test('JsTool refuses bad tool objects with the field at fault', () => {
  const cases = [
    [{ ...baseTool, name: 'has space', execute() {} }, /tool\.name must be/],
    [{ ...baseTool, name: 'x'.repeat(65), execute() {} }, /tool\.name must be/],
    [{ ...baseTool, description: 3, execute() {} }, /description must be a string/],
    [{ ...baseTool, parameters: 'schema', execute() {} }, /parameters must be a JSON Schema object/],
    [{ ...baseTool, requiresConfirmation: 'yes', execute() {} }, /requiresConfirmation must be a boolean/],
    [{ ...baseTool }, /tool lookup: execute must be a function/],
    [{ name: 'lookup', description: 'd', inputSchema: {}, execute() {} }, /tool lookup: parameters is missing/],
    [{ ...baseTool, parameters: { '~standard': { validate() {} } }, execute() {} }, /parameters is a Standard Schema without ~standard\.jsonSchema/],
  ];
  for (const [tool, pattern] of cases) assert.throws(() => __runToolForTest(tool, {}, {}), pattern);
});

// ---- Host (custom) models and the demo model

const request = (input) => ({ messages: [msg('m1', 'user', input)] });

test('a host model: chunks map one to one; a missing finish is added; nothing after finish is read', async () => {
  let seenRequest;
  let after = 0;
  const host = {
    async *stream(req, { signal }) {
      seenRequest = { ...req, signal: signal instanceof AbortSignal };
      yield { type: 'text', text: 'Hi' };
      yield { type: 'tool-call', index: 0, id: 'c1', name: 'lookup', argsDelta: '{"q":' };
      yield { type: 'tool-call', index: 0, argsDelta: '"x"}' };
      yield { type: 'finish', reason: 'tool_calls', usage: { promptTokens: 3, completionTokens: 2 } };
      after += 1;
      yield { type: 'text', text: 'ignored' };
    },
  };
  const got = await __streamModelForTest(host, { ...request('hello'), tools: [{ ...baseTool, execute() {} }] }, {});
  assert.deepEqual(got, {
    chunks: [
      { type: 'text', text: 'Hi' },
      { type: 'tool-call', index: 0, id: 'c1', name: 'lookup', argsDelta: '{"q":' },
      { type: 'tool-call', index: 0, argsDelta: '"x"}' },
      { type: 'finish', reason: 'tool-calls', usage: { promptTokens: 3, completionTokens: 2, totalTokens: 5 } },
    ],
  });
  assert.equal(after, 0, 'the generator was not resumed after its finish chunk');
  assert.deepEqual(seenRequest, {
    messages: [msg('m1', 'user', 'hello')],
    tools: [{ name: 'lookup', description: 'Looks up.', parameters: baseTool.parameters, requiresConfirmation: false }],
    settings: {},
    signal: true,
  });
  const noFinish = await __streamModelForTest({ stream: () => [{ type: 'text', text: 'a' }] }, request('x'), {});
  assert.deepEqual(noFinish, { chunks: [{ type: 'text', text: 'a' }, { type: 'finish', reason: 'stop' }] });
});

test('a host model: a bad chunk or a throw fails the call; abort reaches the generator', async () => {
  const bad = await __streamModelForTest({ async *stream() { yield { type: 'text', text: 1 }; } }, request('x'), {});
  assert.deepEqual(bad, { chunks: [], error: 'the model yielded an invalid chunk: a text chunk needs a string text' });
  const threw = await __streamModelForTest({ async *stream() { yield { type: 'text', text: 'a' }; throw new Error('upstream'); } }, request('x'), {});
  assert.deepEqual(threw, { chunks: [{ type: 'text', text: 'a' }], error: 'model.stream failed: upstream' });
  const notIterable = await __streamModelForTest({ stream: () => 42 }, request('x'), {});
  assert.deepEqual(notIterable, { chunks: [], error: 'model.stream must return an async iterable of chunks' });

  let signal;
  let cleanedUp = false;
  const endless = {
    async *stream(_req, options) {
      signal = options.signal;
      try {
        for (let i = 0; ; i++) yield { type: 'text', text: `w${i} ` };
      } finally {
        cleanedUp = true;
      }
    },
  };
  const got = await __streamModelForTest(endless, request('x'), { abortAfterChunks: 2 });
  assert.equal(got.chunks.length, 2);
  assert.equal(got.afterAbort, null);
  assert.equal(signal.aborted, true);
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(cleanedUp, true, "the generator's finally ran");
});

test('the demo model plays its script: echo, /tool, /fail; abort stops it', async () => {
  const demo = createDemoModel({ chunkDelayMs: 0 });
  const echo = await __streamModelForTest(demo, request('hi there'), {});
  assert.deepEqual(echo.chunks.map((c) => c.text ?? c.type), ['echo:', ' hi', ' there', 'finish']);
  assert.deepEqual(echo.chunks.at(-1).usage, { promptTokens: 2, completionTokens: 3, totalTokens: 5 });
  const tool = await __streamModelForTest(demo, request('/tool weather'), {});
  assert.deepEqual(tool.chunks[0], { type: 'tool-call', index: 0, name: 'lookup', argsDelta: '{"query":"weather"}' });
  const fail = await __streamModelForTest(demo, request('/fail'), {});
  assert.equal(fail.chunks.length, 1);
  assert.match(fail.error, /demo model failed/);
  const aborted = await __streamModelForTest(createDemoModel({ chunkDelayMs: 1 }), request('/words 50'), { abortAfterChunks: 3 });
  assert.equal(aborted.chunks.length, 3);
  assert.equal(aborted.afterAbort, null);
});

test('model descriptors are checked on the Rust side too', () => {
  assert.throws(() => __streamModelForTest({ kind: 'turnkeep.demo', chunkDelayMs: -1 }, request('x'), {}), /chunkDelayMs must be/);
  assert.throws(() => __streamModelForTest({ kind: 'turnkeep.future' }, request('x'), {}), /not a model this build knows/);
  assert.throws(() => __streamModelForTest({ kind: 'turnkeep.openai-compatible', baseUrl: 'file:///x', model: 'm' }, request('x'), {}), /baseUrl must be/);
  assert.throws(() => __streamModelForTest({}, request('x'), {}), /model must be/);
});

// ---- defineChat

test('defineChat returns a frozen definition and refuses bad configs with SERVER_INVALID_CONFIG', () => {
  const memory = createMemoryChatMemory();
  const tool = { ...baseTool, execute() {} };
  const chat = defineChat({ id: 'demo', revision: 1, model: createDemoModel(), memory, tools: [tool] });
  assert.ok(Object.isFrozen(chat));
  assert.ok(Object.isFrozen(chat.tools));
  assert.equal(chat.maxToolIterations, 5);
  assert.deepEqual(createDemoModel(), { kind: 'turnkeep.demo', chunkDelayMs: 20 });
  const good = { id: 'demo', revision: 1, model: createDemoModel(), memory };
  const bad = [
    { ...good, id: 'bad id' },
    { ...good, id: '-x' },
    { ...good, revision: 0 },
    { ...good, revision: 1.5 },
    { ...good, revision: '1' },
    { ...good, model: {} },
    { ...good, model: { kind: 'turnkeep.demo', chunkDelayMs: 'fast' } },
    { ...good, memory: { load() {} } },
    { ...good, tools: [tool, { ...tool }] },
    { ...good, tools: [{ ...tool, execute: undefined }] },
    { ...good, tools: 'lookup' },
    { ...good, maxToolIterations: 51 },
    { ...good, initialMessages: 'hi' },
  ];
  for (const options of bad) {
    assert.throws(() => defineChat(options), { code: 'SERVER_INVALID_CONFIG' }, JSON.stringify(options));
  }
  assert.throws(() => createDemoModel({ chunkDelayMs: 60_001 }), { code: 'SERVER_INVALID_CONFIG' });
  const custom = defineChat({ ...good, model: { stream: async function* () {} } });
  assert.equal(typeof custom.model.stream, 'function');
});
