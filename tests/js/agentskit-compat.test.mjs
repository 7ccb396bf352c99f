// The names turnkeep shares with AgentsKit Chat (`@agentskit/chat-protocol`, `@agentskit/chat`)
// have AgentsKit's signatures and result shapes (README.md, "AgentsKit Chat compatibility"). The expected values below are
// AgentsKit's, restated from its public contract: result shapes, literal diagnostic messages,
// the check order. Where turnkeep is deliberately stricter (a value JSON cannot hold is refused,
// not dropped), the case says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import * as pkg from '../../js/node.mjs';
import { readUntil } from '../support/http-chat.mjs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc');

const {
  createMemorySessionStorage, createSnapshotEvent, createTurnSnapshotCursor, decodeSessionSnapshot,
  decodeTurnEvent, encodeTurnEvent, resumeChatSession, snapshotMessages,
} = pkg;

const SUBMIT = Object.freeze({
  protocol: 'agentskit.chat.turn', version: 1, eventId: 'e1', sessionId: 's1', turnId: 't1', sequence: 0,
  emittedAt: '2026-07-11T03:00:00.000Z', event: 'client.turn.submit', payload: { input: 'hello' },
});
const MESSAGE = Object.freeze({ id: 'm1', role: 'user', content: 'hello', status: 'complete', createdAt: '2026-07-11T03:00:00.000Z' });
const snapshot = (sequence, extra = {}) => ({
  ...SUBMIT, eventId: `e${sequence}`, sequence, event: 'server.turn.snapshot',
  payload: { messages: [MESSAGE], status: 'complete', usage: { promptTokens: 1, completionTokens: 0, totalTokens: 1 } },
  ...extra,
});
const SECRET = 'SECRET-4711';

const NOT_JSON = { code: 'PROTOCOL_INVALID_PAYLOAD', message: 'Turn event is not valid JSON.', retryable: false };
const INVALID = { code: 'PROTOCOL_INVALID_PAYLOAD', message: 'Turn event payload is invalid.', retryable: false };
const VERSION = { code: 'PROTOCOL_UNSUPPORTED_VERSION', message: 'Turn event uses an unsupported protocol version.', retryable: false };
const UNKNOWN = { code: 'PROTOCOL_UNKNOWN_EVENT', message: 'Turn event kind is unknown.', retryable: false };
const withId = (diagnostic, eventId = 'e1') => ({ ...diagnostic, eventId });

/** A getter that records whether it ran and throws hostile text. */
function hostileGetter(target, key) {
  const probe = { called: false };
  Object.defineProperty(target, key, {
    enumerable: true,
    get() { probe.called = true; throw new Error(SECRET); },
  });
  return probe;
}

function checkDecode(name, input, expected) {
  const got = decodeTurnEvent(input);
  if (expected.ok) {
    assert.deepEqual(got, { ok: true, event: expected.event }, name);
  } else {
    assert.deepEqual(got, { ok: false, diagnostic: expected }, name);
    assert.ok(!JSON.stringify(got).includes(SECRET), `${name}: the diagnostic echoes input`);
  }
}

test('decodeTurnEvent: { ok: false, diagnostic } with the reference messages, in the reference check order', () => {
  const cycle = { ...SUBMIT };
  cycle.self = cycle;
  const cases = [
    ['text that is not JSON', '{"protocol":', NOT_JSON],
    ['null', null, INVALID],
    ['version 2 of our protocol', { ...SUBMIT, version: 2 }, withId(VERSION)],
    ['an unknown event kind', { ...SUBMIT, event: 'client.turn.resume' }, withId(UNKNOWN)],
    ['version "1" as a string', { ...SUBMIT, version: '1' }, withId(INVALID)],
    ['a blank input', { ...SUBMIT, payload: { input: ' \n' } }, withId(INVALID)],
    ['an eventId that is not a SafeId is not echoed', { ...SUBMIT, eventId: `${SECRET} x`, payload: {} }, INVALID],
    ['a sessionId that is not a SafeId (its value is not quoted)', { ...SUBMIT, sessionId: `${SECRET} x` }, withId(INVALID)],
    ['a valid event decodes, unknown fields dropped', { ...SUBMIT, extra: 'dropped' }, { ok: true, event: SUBMIT }],
    ['a property that is undefined is absent', { ...SUBMIT, payload: { input: 'hello', note: undefined } }, { ok: true, event: SUBMIT }],
    ['a null-prototype object is a plain object', Object.assign(Object.create(null), SUBMIT), { ok: true, event: SUBMIT }],
    // Stricter than AgentsKit (which drops unknown fields before looking at them): a value JSON
    // cannot hold is refused wherever it is, never dropped or coerced.
    ['a function field', { ...SUBMIT, extra: () => SECRET }, INVALID],
    ['NaN', { ...SUBMIT, payload: { input: 'hello', n: NaN } }, INVALID],
    ['Infinity as the sequence', { ...SUBMIT, sequence: Infinity }, INVALID],
    ['a BigInt', { ...SUBMIT, sequence: 1n }, INVALID],
    ['a symbol', { ...SUBMIT, extra: Symbol(SECRET) }, INVALID],
    ['a Date', { ...SUBMIT, extra: new Date(0) }, INVALID],
    ['a Map', { ...SUBMIT, extra: new Map() }, INVALID],
    ['undefined in an array', { ...SUBMIT, extra: [1, undefined] }, INVALID],
    ['a hole in an array', { ...SUBMIT, extra: [1, , 3] }, INVALID], // eslint-disable-line no-sparse-arrays
    ['a lone surrogate', { ...SUBMIT, payload: { input: '\ud800' } }, INVALID],
    ['a cycle', cycle, INVALID],
    ['a proxy that throws', new Proxy({ ...SUBMIT }, { ownKeys() { throw new Error(SECRET); } }), INVALID],
    ['a revoked proxy', (() => { const p = Proxy.revocable({}, {}); p.revoke(); return p.proxy; })(), INVALID],
  ];
  for (const [name, input, expected] of cases) checkDecode(name, input, expected);

  const deep = { ...SUBMIT };
  let at = deep;
  for (let i = 0; i < 200; i += 1) at = at.extra = {};
  checkDecode('nesting beyond 128 levels', deep, INVALID);
});

test('decodeTurnEvent never runs a getter of its input, nor quotes what one throws', () => {
  const input = { ...SUBMIT };
  const probe = hostileGetter(input, 'payload');
  checkDecode('an accessor property', input, INVALID);
  assert.equal(probe.called, false, 'the getter ran');
  assert.throws(() => encodeTurnEvent(input), (error) => !String(error.message).includes(SECRET));
  assert.equal(probe.called, false);
});

test('createTurnSnapshotCursor: { apply(input) -> boolean, getSnapshot() } with deep-frozen accepted state', () => {
  const cursor = createTurnSnapshotCursor('s1');
  assert.equal(cursor.getSnapshot(), undefined);
  const steps = [
    ['the first snapshot, whatever its sequence', snapshot(5), true],
    ['the same sequence again', snapshot(5), false],
    ['an older one', snapshot(4), false],
    ['another session', snapshot(9, { sessionId: 's2' }), false],
    ['a diagnostic', { ...SUBMIT, event: 'server.turn.diagnostic', sequence: 99, payload: { version: 1, code: 'SESSION_BUSY', message: 'busy', retryable: true } }, false],
    ['a submit', { ...SUBMIT, sequence: 99 }, false],
    ['undecodable text', '{', false],
    ['a non-JSON value', snapshot(50, { extra: () => 1 }), false],
    ['a newer one, as NDJSON text', JSON.stringify(snapshot(7)), true],
  ];
  for (const [name, input, accepted] of steps) assert.equal(cursor.apply(input), accepted, name);
  const accepted = cursor.getSnapshot();
  assert.equal(accepted.sequence, 7);
  assert.equal(cursor.getSnapshot(), accepted, 'the same object until the next accept');
  for (const part of [accepted, accepted.payload, accepted.payload.messages, accepted.payload.messages[0], accepted.payload.usage]) {
    assert.ok(Object.isFrozen(part), 'accepted state is frozen all the way down');
  }
  assert.throws(() => { accepted.payload.messages[0].content = 'changed'; }, TypeError);
  assert.throws(() => createTurnSnapshotCursor(`${SECRET} x`), (e) => e instanceof Error && !e.message.includes(SECRET));
});

test('decodeSessionSnapshot: { ok: true, snapshot } or { ok: false, diagnostic } with the reference messages', () => {
  const v1 = {
    protocol: 'agentskit.chat.session', version: 1, sessionId: 's1', definitionId: 'demo', definitionRevision: 1,
    updatedAt: '2026-07-11T03:00:00.000Z', cursor: 3, confirmations: [],
  };
  const { protocol: _protocol, ...v0 } = { ...v1, version: 0 };
  const fail = (code, message) => ({ ok: false, diagnostic: { code, message, retryable: false } });
  const cases = [
    ['JSON text', JSON.stringify(v1), { ok: true, snapshot: v1 }],
    ['an object', v1, { ok: true, snapshot: v1 }],
    ['v0 is migrated', v0, { ok: true, snapshot: v1 }],
    ['text that is not JSON', '{', fail('SESSION_INVALID_SNAPSHOT', 'Session snapshot is not valid JSON.')],
    ['version 7', { ...v1, version: 7 }, fail('SESSION_UNSUPPORTED_VERSION', 'Session snapshot uses an unsupported version.')],
    ['a missing cursor', { ...v1, cursor: undefined }, fail('SESSION_INVALID_SNAPSHOT', 'Session snapshot payload is invalid.')],
    ['a function inside (refused, not dropped)', { ...v1, extra: () => SECRET }, fail('SESSION_INVALID_SNAPSHOT', 'Session snapshot payload is invalid.')],
    ['a foreign id is not quoted', { ...v1, sessionId: SECRET + ' !' }, fail('SESSION_INVALID_SNAPSHOT', 'Session snapshot payload is invalid.')],
  ];
  for (const [name, input, expected] of cases) assert.deepEqual(decodeSessionSnapshot(input), expected, name);
});

/** A CAS store over a Map that records every save; `conflict()` makes the next save lose. */
function recordingStore(initial) {
  const rows = new Map(initial ? [[initial.sessionId, JSON.stringify(initial)]] : []);
  const saves = [];
  let loseNext = false;
  return {
    saves,
    conflict() { loseNext = true; },
    row: (id) => (rows.has(id) ? JSON.parse(rows.get(id)) : undefined),
    async load(id) { return rows.has(id) ? JSON.parse(rows.get(id)) : null; },
    async save(snapshot, expectedCursor) {
      saves.push({ cursor: snapshot.cursor, expectedCursor });
      const current = rows.has(snapshot.sessionId) ? JSON.parse(rows.get(snapshot.sessionId)) : undefined;
      const ok = !loseNext && (expectedCursor === undefined ? current === undefined : current?.cursor === expectedCursor);
      loseNext = false;
      if (ok) rows.set(snapshot.sessionId, JSON.stringify(snapshot));
      return ok;
    },
  };
}

const DEFINITION = { id: 'demo', chat: { adapter: { createSource() {} } } };
const clock = (ms) => () => new Date(ms);

test('resumeChatSession(definition, { sessionId, storage, now }) -> a ChatSession: claim, replay, busy, release by CAS', async () => {
  const store = recordingStore();
  const session = await resumeChatSession(DEFINITION, { sessionId: 's1', storage: store, now: clock(1_000) });
  assert.deepEqual([session.sessionId, session.definitionId, session.definitionRevision, session.getCursor()], ['s1', 'demo', 1, 0]);
  assert.equal(session.chat, DEFINITION.chat);
  assert.equal(session.getConversationSnapshot(), undefined);

  assert.equal(await session.claimTurn('t1', 45_000), true);
  assert.deepEqual(store.row('s1').activeTurn, { turnId: 't1', expiresAt: 46_000 });
  assert.equal(store.row('s1').updatedAt, '1970-01-01T00:00:01.000Z');
  assert.equal(await session.claimTurn('t2', 45_000), false, 'another turn holds the lease');
  await session.releaseTurn('t2', 'completed'); // not the holder: nothing happens
  await session.releaseTurn('t1', 'completed');
  assert.equal(store.row('s1').activeTurn, undefined);
  assert.deepEqual(store.row('s1').terminalTurns, [{ turnId: 't1', outcome: 'completed' }]);
  assert.equal(await session.claimTurn('t1', 45_000), false, 'a finished turn never runs again');
  await session.persist();
  assert.deepEqual(store.saves, [
    { cursor: 1, expectedCursor: undefined }, // the first save creates the record
    { cursor: 2, expectedCursor: 1 },
    { cursor: 3, expectedCursor: 2 },
  ]);
  assert.equal(session.getCursor(), 3);

  const again = await resumeChatSession(DEFINITION, { sessionId: 's1', storage: store, now: clock(2_000) });
  assert.equal(again.getCursor(), 3, 'a second client resumes from the stored cursor');
});

test('ChatSession: a lost compare-and-set rejects with SessionConflictError and commits nothing', async () => {
  const store = recordingStore();
  const a = await resumeChatSession(DEFINITION, { sessionId: 's1', storage: store });
  const b = await resumeChatSession(DEFINITION, { sessionId: 's1', storage: store });
  const claims = await Promise.allSettled([a.claimTurn('ta', 45_000), b.claimTurn('tb', 45_000)]);
  assert.deepEqual(claims.map((c) => c.status), ['fulfilled', 'rejected'], 'both created the record; one won');
  assert.equal(claims[1].reason.name, 'SessionConflictError');
  assert.equal(claims[1].reason.message, 'Session snapshot changed in another client.');
  assert.equal(b.getCursor(), 0, 'the loser committed nothing');
  assert.equal(store.row('s1').activeTurn.turnId, 'ta');

  store.conflict();
  await assert.rejects(a.persist(), { name: 'SessionConflictError' });
  assert.equal(a.getCursor(), 1);
  await a.persist(); // the queue goes on after a failure
  assert.equal(a.getCursor(), 2);
});

test('resumeChatSession rejects bad input with a ConfigError (AK_CONFIG_INVALID) and the reference texts', async () => {
  const stored = {
    protocol: 'agentskit.chat.session', version: 1, sessionId: 's1', definitionId: 'demo', definitionRevision: 1,
    updatedAt: '2026-07-11T03:00:00.000Z', cursor: 3, confirmations: [],
  };
  const cases = [
    ['a corrupt record', DEFINITION, { sessionId: 's1', storage: recordingStore({ ...stored, cursor: -1 }) }, 'Session snapshot payload is invalid.'],
    ['another definition', { ...DEFINITION, id: 'other' }, { sessionId: 's1', storage: recordingStore(stored) }, 'Session snapshot is incompatible with this chat definition.'],
    ['another revision', { ...DEFINITION, revision: 2 }, { sessionId: 's1', storage: recordingStore(stored) }, 'Session snapshot is incompatible with this chat definition.'],
    ['a session id that is not a SafeId', DEFINITION, { sessionId: `${SECRET} x`, storage: recordingStore() }, 'Chat session identity is invalid.'],
    ['a revision of 0', { ...DEFINITION, revision: 0 }, { sessionId: 's1', storage: recordingStore() }, 'Chat definition revision is invalid.'],
  ];
  for (const [name, definition, options, message] of cases) {
    await assert.rejects(resumeChatSession(definition, options), { name: 'ConfigError', code: 'AK_CONFIG_INVALID', message }, name);
  }
  const session = await resumeChatSession(DEFINITION, { sessionId: 's1', storage: recordingStore() });
  await assert.rejects(session.claimTurn('bad id', 45_000), { code: 'AK_CONFIG_INVALID', message: 'Turn claim is invalid.' });
  await assert.rejects(session.claimTurn('t1', 0), { code: 'AK_CONFIG_INVALID', message: 'Turn claim is invalid.' });
});

test('createSnapshotEvent builds a canonical snapshot (Date createdAt, retry/edit/regenerate lineage); snapshotMessages reads it back', () => {
  const at = new Date('2026-07-11T03:00:00.000Z');
  const base = {
    eventId: 'e2', sessionId: 's1', turnId: 't2', sequence: 12, emittedAt: '2026-07-11T03:00:01.000Z',
    messages: [{ ...MESSAGE, createdAt: at }], status: 'complete', usage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 },
  };
  for (const operation of ['retry', 'edit', 'regenerate']) {
    const lineage = { operation, parentTurnId: 't1', sourceMessageId: 'm1' };
    const event = createSnapshotEvent({ ...base, lineage });
    assert.deepEqual(event, {
      protocol: 'agentskit.chat.turn', version: 1, eventId: 'e2', sessionId: 's1', turnId: 't2', sequence: 12,
      emittedAt: '2026-07-11T03:00:01.000Z', event: 'server.turn.snapshot',
      payload: { messages: [MESSAGE], status: 'complete', usage: base.usage, lineage },
    });
    assert.equal(decodeTurnEvent(event).ok, true);
  }
  const error = { version: 1, code: 'CHAT_TURN_FAILED', message: 'The chat turn failed.', retryable: true };
  assert.deepEqual(createSnapshotEvent({ ...base, status: 'error', error }).payload.error, error);
  assert.throws(() => createSnapshotEvent({ ...base, lineage: { operation: 'retry', parentTurnId: 't1' } }), /createSnapshotEvent: .*sourceMessageId/);
  assert.throws(() => createSnapshotEvent({ ...base, status: 'done' }), /createSnapshotEvent: .*status/);
  assert.throws(() => createSnapshotEvent({ ...base, messages: [{ ...MESSAGE, createdAt: new Date(NaN) }] }), /createSnapshotEvent/);

  const messages = snapshotMessages(createSnapshotEvent(base));
  assert.equal(messages.length, 1);
  assert.ok(messages[0].createdAt instanceof Date);
  assert.equal(messages[0].createdAt.toISOString(), MESSAGE.createdAt);
  assert.equal(messages[0].content, 'hello');
  assert.throws(() => snapshotMessages(SUBMIT), /snapshotMessages: event must be a server.turn.snapshot/);
  assert.throws(() => snapshotMessages({ ...snapshot(1), payload: {} }), /snapshotMessages/);
});

test('the in-memory session storage is a SessionStorage a ChatSession can use', async () => {
  const storage = createMemorySessionStorage();
  const session = await resumeChatSession(DEFINITION, { sessionId: 'mem', storage });
  assert.equal(await session.claimTurn('t1', 1_000), true);
  const stored = decodeSessionSnapshot(await storage.load('mem'));
  assert.equal(stored.ok, true);
  assert.equal(stored.snapshot.activeTurn.turnId, 't1');
});

// ---- createChatHandler with AgentsKit-shaped definitions and adapters

/**
 * An AgentsKit adapter (`createSource(request) -> { stream(), abort() }`) that streams the
 * chunk lists of `script` (one list per model call) and records what it was asked and told.
 */
function scriptedAdapter(script, { delayMs = 0 } = {}) {
  const log = { requests: [], aborted: 0, finished: 0 };
  let call = 0;
  const adapter = {
    createSource(request) {
      log.requests.push(request);
      const chunks = script[Math.min(call, script.length - 1)];
      call += 1;
      let aborted = false;
      return {
        async *stream() {
          try {
            for (const chunk of chunks) {
              if (aborted) return;
              if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
              yield chunk;
            }
          } finally {
            log.finished += 1;
          }
        },
        abort() { aborted = true; log.aborted += 1; },
      };
    },
  };
  return { adapter, log };
}

/** An AgentsKit ChatMemory: messages with `Date` timestamps in and out. */
function agentskitMemory(initial = []) {
  const memory = {
    messages: initial,
    saved: [],
    async load() { return memory.messages; },
    async save(messages) { memory.saved.push(messages); memory.messages = messages; },
  };
  return memory;
}

async function turn(handler, { sessionId = 'ak', turnId = 't1', input = 'hello', signal } = {}) {
  const response = await handler(new Request('http://127.0.0.1/api/chat', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...SUBMIT, sessionId, turnId, payload: { input } }),
    signal,
  }));
  return response;
}

const lines = async (response) => (await response.text()).trimEnd().split('\n').map((l) => JSON.parse(l));

test('createChatHandler runs an AgentsKit definition { id, chat: { adapter, memory } } unchanged', async () => {
  const { adapter, log } = scriptedAdapter([[
    { type: 'text', content: 'Hello ' },
    { type: 'reasoning', content: 'not shown' },
    { type: 'text', content: 'from AgentsKit' },
    { type: 'usage', usage: { promptTokens: 3, completionTokens: 2, totalTokens: 5 } },
    { type: 'done' },
  ]]);
  const earlier = [{ id: 'm0', role: 'system', content: 'be brief', status: 'complete', createdAt: new Date('2026-07-11T02:00:00.000Z') }];
  const memory = agentskitMemory(earlier);
  const definition = { id: 'support', chat: { adapter, memory } };
  const handler = pkg.createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => createMemorySessionStorage() });

  const response = await turn(handler);
  assert.equal(response.status, 200);
  const last = (await lines(response)).at(-1).payload;
  assert.equal(last.status, 'complete');
  assert.deepEqual(last.messages.map((m) => [m.role, m.content]), [['system', 'be brief'], ['user', 'hello'], ['assistant', 'Hello from AgentsKit']]);
  assert.deepEqual(last.usage, { promptTokens: 3, completionTokens: 2, totalTokens: 5 });

  // The adapter got AgentsKit's AdapterRequest: Messages with Date timestamps, context.tools.
  const [request] = log.requests;
  assert.deepEqual(request.messages.map((m) => m.content), ['be brief', 'hello']);
  assert.ok(request.messages.every((m) => m.createdAt instanceof Date));
  assert.deepEqual(request.context, { tools: [] });
  assert.equal(log.finished, 1);
  // The memory got AgentsKit Messages back.
  const saved = memory.saved.at(-1);
  assert.deepEqual(saved.map((m) => m.content), ['be brief', 'hello', 'Hello from AgentsKit']);
  assert.ok(saved.every((m) => m.createdAt instanceof Date));
  assert.equal(saved[0].createdAt.toISOString(), '2026-07-11T02:00:00.000Z');
});

test('an AgentsKit adapter\'s tool_call chunks run the definition\'s tools, then the model answers', async () => {
  const { adapter, log } = scriptedAdapter([
    [{ type: 'tool_call', toolCall: { id: 'call-1', name: 'lookup', args: '{"query":"cats"}' } }, { type: 'done' }],
    [{ type: 'text', content: 'found it' }, { type: 'done' }],
  ]);
  const lookup = {
    name: 'lookup', description: 'Looks a thing up', parameters: { type: 'object', properties: { query: { type: 'string' } } },
    execute: async ({ query }) => `result for ${query}`,
  };
  const definition = { id: 'tools', chat: { adapter, memory: agentskitMemory(), tools: [lookup] } };
  const handler = pkg.createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => createMemorySessionStorage() });
  const last = (await lines(await turn(handler, { input: 'find cats' }))).at(-1).payload;
  const calls = last.messages.flatMap((m) => m.toolCalls ?? []);
  assert.deepEqual(calls.map((c) => [c.name, c.args, c.status, c.result]), [['lookup', { query: 'cats' }, 'complete', 'result for cats']]);
  assert.equal(last.messages.at(-1).content, 'found it');
  assert.equal(log.requests.length, 2, 'the tool result went back to the model');
  assert.deepEqual(log.requests[0].context.tools, [{ name: 'lookup', description: 'Looks a thing up', schema: lookup.parameters, requiresConfirmation: false }]);
});

test('a client abort calls the AgentsKit source\'s abort() and ends its generator', async () => {
  const endless = Array.from({ length: 10_000 }, (_, i) => ({ type: 'text', content: `w${i} ` }));
  const { adapter, log } = scriptedAdapter([endless], { delayMs: 2 });
  const memory = agentskitMemory();
  const definition = { id: 'stop', chat: { adapter, memory } };
  const handler = pkg.createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => createMemorySessionStorage() });
  const controller = new AbortController();
  const response = await turn(handler, { signal: controller.signal });
  await readUntil(response, /w0 w1 /);
  // Nothing here holds the Request: in Node it follows `controller` only while it is alive, so
  // the handler must keep it. Collect garbage first, or this passes only when GC happens late.
  collectGarbage();
  await new Promise((resolve) => setTimeout(resolve, 0));
  collectGarbage();
  controller.abort();
  // The generator is suspended in its own await when return() comes: its finally runs once that settles.
  for (let i = 0; i < 2000 && (memory.saved.length === 0 || log.finished === 0); i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(log.aborted, 1, 'abort() was called once');
  assert.equal(log.finished, 1, `the generator's finally ran: ${JSON.stringify({ ...log, requests: log.requests.length, saved: memory.saved.length })}`);
  assert.ok(memory.saved.at(-1).at(-1).content.startsWith('w0 '), 'the partial answer was saved');
});

test('an AgentsKit error chunk fails the turn with the safe diagnostic, never the provider\'s text', async () => {
  const { adapter } = scriptedAdapter([[{ type: 'text', content: 'par' }, { type: 'error', content: SECRET }]]);
  const definition = { id: 'fails', chat: { adapter, memory: agentskitMemory() } };
  const handler = pkg.createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => createMemorySessionStorage() });
  const response = await turn(handler);
  const text = await response.text();
  assert.ok(!text.includes(SECRET));
  const last = text.trimEnd().split('\n').map((l) => JSON.parse(l)).at(-1).payload;
  assert.equal(last.status, 'error');
  assert.equal(last.error.code, 'CHAT_TURN_FAILED');
});

// ---- Component frames and the assistant content envelope

const FRAME = Object.freeze({
  protocol: 'agentskit.chat.component', version: 1, type: 'render', componentKey: 'choice-list', instanceId: 'c1',
  props: { choices: [{ id: 'a', label: 'A' }] }, fallback: { kind: 'choices', summary: 'Pick A' },
});

test('decodeComponentFrame: { ok, frame } or { ok: false, diagnostic } with the reference texts', () => {
  const fail = (code, message) => ({ ok: false, diagnostic: { code, message, retryable: false } });
  const invalid = fail('COMPONENT_INVALID_FRAME', 'Component frame payload is invalid.');
  const cases = [
    ['a frame', FRAME, { ok: true, frame: FRAME }],
    ['as text, unknown keys dropped', JSON.stringify({ ...FRAME, extra: 1 }), { ok: true, frame: FRAME }],
    ['text that is not JSON', '{', fail('COMPONENT_INVALID_FRAME', 'Component frame is not valid JSON.')],
    ['version 2', { ...FRAME, version: 2 }, fail('COMPONENT_UNSUPPORTED_VERSION', 'Component frame uses an unsupported version.')],
    ['a select event', { ...FRAME, type: 'select' }, fail('COMPONENT_UNKNOWN_TYPE', 'Component frame type is unknown.')],
    ['props with a function (refused, not dropped)', { ...FRAME, props: { onClick: () => SECRET } }, invalid],
    ['a bad key', { ...FRAME, componentKey: SECRET }, invalid],
  ];
  for (const [name, input, expected] of cases) assert.deepEqual(pkg.decodeComponentFrame(input), expected, name);
  assert.equal(pkg.isComponentFrameCandidate({ protocol: pkg.COMPONENT_PROTOCOL, version: 7 }), true);
  assert.equal(pkg.isComponentFrameCandidate(JSON.stringify(FRAME)), true);
  assert.equal(pkg.isComponentFrameCandidate('{'), false);
  assert.equal(pkg.isComponentFrameCandidate([FRAME]), false);
});

test('createSelectionEvent / createInteractionEvent answer a frame; bad input throws naming the field', () => {
  assert.deepEqual(pkg.createSelectionEvent(FRAME, 'a'), {
    protocol: 'agentskit.chat.component', version: 1, type: 'select', componentKey: 'choice-list', instanceId: 'c1', choiceId: 'a',
  });
  assert.deepEqual(pkg.createInteractionEvent(FRAME, 'submit', { n: 1 }), {
    protocol: 'agentskit.chat.component', version: 1, type: 'interact', componentKey: 'choice-list', instanceId: 'c1', event: 'submit', value: { n: 1 },
  });
  assert.equal('value' in pkg.createInteractionEvent(FRAME, 'open'), false);
  assert.throws(() => pkg.createSelectionEvent(FRAME, 'not safe'), /createSelectionEvent: choiceId/);
  assert.throws(() => pkg.createInteractionEvent(FRAME, 'Open'), /createInteractionEvent: event/);
  assert.throws(() => pkg.createInteractionEvent(FRAME, 'open', NaN), /createInteractionEvent: value must be a JSON value/);
});

test('the assistant content envelope: the encoder writes what decodeAssistantContent reads, also mid-stream', () => {
  const encoder = pkg.createAssistantContentEncoder();
  const envelope = encoder.encode({ kind: 'text', text: 'Pick one:' }) + encoder.encode({ kind: 'component', frame: FRAME });
  assert.ok(envelope.startsWith(pkg.ASSISTANT_CONTENT_PREFIX));
  assert.equal(envelope.split(pkg.ASSISTANT_CONTENT_PREFIX).length, 2, 'one header');
  const decoded = pkg.decodeAssistantContent(envelope);
  assert.deepEqual(decoded, { ok: true, parts: [{ kind: 'text', text: 'Pick one:' }, { kind: 'component', frame: FRAME }], complete: true });
  assert.ok(Object.isFrozen(decoded.parts));
  assert.deepEqual(pkg.decodeAssistantContent(envelope.slice(0, -3)), { ok: true, parts: [{ kind: 'text', text: 'Pick one:' }], complete: false });
  assert.deepEqual(pkg.decodeAssistantContent(pkg.ASSISTANT_CONTENT_PREFIX.slice(0, 5)), { ok: true, parts: [], complete: false });
  assert.throws(() => encoder.encode({ kind: 'text', text: '' }), /encode: text/);

  const fail = (code, message) => ({ ok: false, diagnostic: { code, message, retryable: false } });
  const record = `${JSON.stringify({ kind: 'text', text: 't' })}\n`;
  const cases = [
    ['not a string', 42, fail('ASSISTANT_CONTENT_INVALID_RECORD', 'Assistant content envelope is invalid.')],
    ['plain text', 'hello', fail('ASSISTANT_CONTENT_INVALID_RECORD', 'Assistant content envelope is invalid.')],
    ['version 2', '\u001eagentskit.chat.content/2\n', fail('ASSISTANT_CONTENT_UNSUPPORTED_VERSION', 'Assistant content envelope uses an unsupported version.')],
    ['a bad record', `${pkg.ASSISTANT_CONTENT_PREFIX}{"kind":"${SECRET}"}\n`, fail('ASSISTANT_CONTENT_INVALID_RECORD', 'Assistant content record is invalid.')],
    ['over the byte limit', pkg.ASSISTANT_CONTENT_PREFIX + 'x'.repeat(pkg.ASSISTANT_CONTENT_MAX_BYTES), fail('ASSISTANT_CONTENT_LIMIT_EXCEEDED', 'Assistant content envelope exceeds its safety limit.')],
    ['over the record limit', pkg.ASSISTANT_CONTENT_PREFIX + record.repeat(pkg.ASSISTANT_CONTENT_MAX_RECORDS + 1), fail('ASSISTANT_CONTENT_LIMIT_EXCEEDED', 'Assistant content envelope exceeds its record limit.')],
  ];
  for (const [name, input, expected] of cases) assert.deepEqual(pkg.decodeAssistantContent(input), expected, name);
  assert.equal(pkg.decodeAssistantContent(pkg.ASSISTANT_CONTENT_PREFIX + record.repeat(pkg.ASSISTANT_CONTENT_MAX_RECORDS)).parts.length, 512);
  assert.equal(pkg.isAssistantContentCandidate('\u001eanything'), true);
  assert.equal(pkg.isAssistantContentCandidate({}), false);
});

test('the protocol constants are the ones the core speaks', () => {
  assert.equal(decodeTurnEvent({ ...SUBMIT, protocol: pkg.TURN_PROTOCOL, version: pkg.TURN_PROTOCOL_VERSION }).ok, true);
  assert.equal(decodeSessionSnapshot({
    protocol: pkg.SESSION_PROTOCOL, version: pkg.SESSION_PROTOCOL_VERSION, sessionId: 's1', definitionId: 'd', definitionRevision: 1,
    updatedAt: '2026-07-11T03:00:00.000Z', cursor: 0, confirmations: [],
  }).ok, true);
  assert.equal(pkg.decodeComponentFrame({ ...FRAME, protocol: pkg.COMPONENT_PROTOCOL, version: pkg.COMPONENT_PROTOCOL_VERSION }).ok, true);
  assert.equal(pkg.ASSISTANT_CONTENT_PREFIX, `\u001e${pkg.ASSISTANT_CONTENT_PROTOCOL}/${pkg.ASSISTANT_CONTENT_PROTOCOL_VERSION}\n`);
  assert.equal(pkg.createAssistantContentEncoder().encode({ kind: 'text', text: 'x' }).startsWith(pkg.ASSISTANT_CONTENT_PREFIX), true);
});

// ---- AgentsKit definitions move over unchanged: AgentsKit tools, systemPrompt, settings, observers

/** An AgentsKit `ToolDefinition` (`schema`, `execute(args, { messages, call })`), recording its runs. */
function weatherTool(runs) {
  return {
    name: 'weather',
    description: 'Current weather for a city',
    schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    tags: ['demo'],
    async execute(args, context) {
      runs.push({ args, context });
      return { city: args.city, sky: 'sunny' };
    },
  };
}

test('an AgentsKit definition with AgentsKit tools, a systemPrompt and observers runs a tool turn as in AgentsKit', async () => {
  const { adapter, log } = scriptedAdapter([
    [
      { type: 'reasoning', content: 'I need the weather tool.' },
      { type: 'tool_call', toolCall: { id: 'call-1', name: 'weather', args: '{"city":"Paris"}' } },
      { type: 'done' },
    ],
    [
      { type: 'text', content: 'It is sunny ' },
      { type: 'text', content: 'in Paris.' },
      { type: 'usage', usage: { promptTokens: 12, completionTokens: 5, totalTokens: 17 } },
      { type: 'done' },
    ],
  ]);
  const runs = [];
  const events = [];
  const errors = [];
  const memory = agentskitMemory();
  const definition = {
    id: 'weather',
    chat: {
      adapter, memory, tools: [weatherTool(runs)],
      systemPrompt: 'You are a weather bot.', temperature: 0.2, maxTokens: 300,
      observers: [{ name: 'recorder', on: (event) => events.push(event) }],
      onError: (error) => errors.push(error),
    },
  };
  assert.equal(pkg.defineChat(definition).chat, definition.chat, 'defineChat takes AgentsKit\'s definition as it is');
  const handler = pkg.createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => createMemorySessionStorage() });
  const last = (await lines(await turn(handler, { input: 'Weather in Paris?' }))).at(-1).payload;
  assert.equal(last.status, 'complete');

  // The AgentsKit tool ran once, with AgentsKit's context; its object result is its JSON text.
  assert.equal(runs.length, 1);
  const [{ args, context }] = runs;
  assert.deepEqual(args, { city: 'Paris' });
  assert.ok(context.messages.every((m) => m.createdAt instanceof Date), 'messages are AgentsKit Messages');
  assert.equal(context.messages.find((m) => m.role === 'user').content, 'Weather in Paris?');
  assert.deepEqual({ id: context.call.id, name: context.call.name, args: context.call.args }, { id: 'call-1', name: 'weather', args: { city: 'Paris' } });
  const [call] = last.messages.flatMap((m) => m.toolCalls ?? []);
  assert.deepEqual([call.status, call.result], ['complete', '{"city":"Paris","sky":"sunny"}']);
  assert.equal(last.messages.at(-1).content, 'It is sunny in Paris.');
  assert.equal(last.messages.find((m) => m.toolCalls).metadata.reasoning, 'I need the weather tool.', 'reasoning where AgentsKit keeps it');
  assert.deepEqual(last.usage, { promptTokens: 12, completionTokens: 5, totalTokens: 17 });

  // The adapter got AgentsKit's AdapterRequest: the systemPrompt first and in the context.
  const [first, second] = log.requests;
  assert.deepEqual(first.context, {
    systemPrompt: 'You are a weather bot.', temperature: 0.2, maxTokens: 300,
    tools: [{ name: 'weather', description: 'Current weather for a city', schema: definition.chat.tools[0].schema, requiresConfirmation: false }],
  });
  assert.deepEqual(first.messages.map((m) => [m.role, m.content]), [['system', 'You are a weather bot.'], ['user', 'Weather in Paris?']]);
  assert.ok(first.messages[0].createdAt instanceof Date);
  assert.deepEqual(second.messages.slice(-2).map((m) => [m.role, m.content]), [['assistant', ''], ['tool', '{"city":"Paris","sky":"sunny"}']]);
  assert.equal(memory.saved.at(-1)[0].role, 'user', 'the system prompt is sent, not saved');

  // The observers saw AgentsKit's events, in order; the first save keeps the user's message
  // before the model starts (turnkeep's own: AgentsKit saves once, at the end).
  assert.deepEqual(events.map((e) => e.type), ['memory:save', 'llm:start', 'llm:end', 'tool:start', 'tool:end', 'llm:start', 'llm:first-token', 'llm:end', 'memory:save']);
  assert.deepEqual(events[0], { type: 'memory:save', messageCount: 1 });
  events.shift();
  assert.deepEqual(events[2], { type: 'tool:start', name: 'weather', args: { city: 'Paris' } });
  assert.equal(events[3].result, '{"city":"Paris","sky":"sunny"}');
  assert.equal(typeof events[3].durationMs, 'number');
  assert.equal(events[6].content, 'It is sunny in Paris.');
  assert.deepEqual(events[6].usage, { promptTokens: 12, completionTokens: 5 });
  assert.deepEqual(errors, []);
});

test('an AgentsKit error chunk reaches chat.onError and the observers as an error event', async () => {
  const { adapter } = scriptedAdapter([[{ type: 'error', content: SECRET }]]);
  const events = [];
  const errors = [];
  const definition = { id: 'errs', chat: { adapter, memory: agentskitMemory(), observers: [{ name: 'r', on: (e) => events.push(e) }], onError: (e) => errors.push(e) } };
  const handler = pkg.createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => createMemorySessionStorage() });
  const last = (await lines(await turn(handler))).at(-1).payload;
  assert.equal(last.status, 'error');
  assert.equal(errors.length, 1);
  assert.ok(errors[0] instanceof Error);
  assert.ok(events.some((e) => e.type === 'error' && e.error === errors[0]));
});

test('chat.validateArgs runs before an AgentsKit tool; what it refuses never runs, the model reads why', async () => {
  const { adapter, log } = scriptedAdapter([
    [{ type: 'tool_call', toolCall: { id: 'c1', name: 'weather', args: '{"city":"Atlantis"}' } }, { type: 'done' }],
    [{ type: 'text', content: 'Sorry.' }, { type: 'done' }],
  ]);
  const runs = [];
  const validateArgs = (schema, args) => (args.city === 'Atlantis'
    ? { valid: false, errors: [{ path: '/city', message: 'is not a real city' }] }
    : { valid: true });
  const definition = { id: 'validate', chat: { adapter, memory: agentskitMemory(), tools: [weatherTool(runs)], validateArgs } };
  const handler = pkg.createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => createMemorySessionStorage() });
  const last = (await lines(await turn(handler))).at(-1).payload;
  assert.deepEqual(runs, []);
  const text = 'Invalid input for tool weather: input.city is not a real city.';
  assert.equal(last.messages.find((m) => m.role === 'tool').content, text);
  assert.equal(log.requests[1].messages.at(-1).content, text);
});

test('what turnkeep cannot honour in an AgentsKit definition is a config error naming it, never dropped', () => {
  const chat = { adapter: { createSource() {} }, memory: agentskitMemory() };
  const cases = [
    [{ id: 'x', chat: { ...chat, skills: [] } }, /defineChat\.chat\.skills is not supported by turnkeep: skills are not implemented/],
    [{ id: 'x', chat: { ...chat, retriever: {} } }, /defineChat\.chat\.retriever is not supported by turnkeep/],
    [{ id: 'x', chat: { ...chat, onMessage() {} } }, /defineChat\.chat\.onMessage is not supported by turnkeep/],
    [{ id: 'x', chat: { ...chat, onToolCall() {} } }, /defineChat\.chat\.onToolCall is not supported by turnkeep/],
    [{ id: 'x', chat: { ...chat, authorizeToolCall() {} } }, /defineChat\.chat\.authorizeToolCall is not supported by turnkeep/],
    [{ id: 'x', chat: { ...chat, systemprompt: 'x' } }, /defineChat\.chat: unknown option "systemprompt"/],
    [{ id: 'x', chat, extra: 1 }, /defineChat: unknown option "extra"/],
    [{ id: 'x', chat: { ...chat, tools: [{ ...weatherTool([]), init() {} }] } }, /tool weather: init is not supported by turnkeep/],
    [{ id: 'x', chat: { ...chat, tools: [{ name: 'bare', schema: {} }] } }, /tool bare: execute must be a function/],
    [{ id: 'x', chat: { ...chat, temperature: 9 } }, /defineChat\.chat\.temperature must be a number from 0 to 2/],
    [{ id: 'x', chat: { ...chat, observers: [{ name: 'no on' }] } }, /chat\.observers\[0\] must be an object with on\(event\)/],
  ];
  for (const [definition, message] of cases) {
    assert.throws(() => pkg.defineChat(definition), (e) => e.code === 'SERVER_INVALID_CONFIG' && message.test(e.message), `${message}`);
  }
  // What AgentsKit's own server does not read either is accepted: the component manifest.
  assert.ok(pkg.defineChat({ id: 'x', chat, components: { version: 1 }, choiceSubmission() {} }));
});

test('AssistantContentPartSchema is exported: safeParse / parse over the part rules', () => {
  const { AssistantContentPartSchema } = pkg;
  const ok = AssistantContentPartSchema.safeParse({ kind: 'text', text: 'hi', extra: 1 });
  assert.deepEqual(ok, { success: true, data: { kind: 'text', text: 'hi' } });
  assert.ok(Object.isFrozen(ok.data));
  assert.equal(AssistantContentPartSchema.safeParse({ kind: 'component', frame: FRAME }).success, true);
  for (const bad of [{ kind: 'text', text: '' }, { kind: 'video' }, 'text', { kind: 'component', frame: { ...FRAME, version: 2 } }]) {
    assert.equal(AssistantContentPartSchema.safeParse(bad).success, false, JSON.stringify(bad));
  }
  assert.throws(() => AssistantContentPartSchema.parse({ kind: 'text' }), /text/);
  // AgentsKit's own protocol test: every decoded part passes the schema.
  const encoder = pkg.createAssistantContentEncoder();
  const decoded = pkg.decodeAssistantContent(encoder.encode({ kind: 'text', text: 'a' }) + encoder.encode({ kind: 'component', frame: FRAME }));
  assert.ok(decoded.ok && decoded.parts.every((part) => AssistantContentPartSchema.safeParse(part).success));
});
