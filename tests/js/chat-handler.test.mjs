// createChatHandler end to end in Node 20, with real Web objects (undici's Request, Response,
// ReadableStream, AbortController): the diagnostics table, authentication before the body,
// one turn per session under 50 concurrent submits, the 64-turn replay window, abort / cancel /
// deadline cleanup, a failing memory save, coalescing under a slow reader, sequences across
// 100 turns, the demo tool loop, and NDJSON framing. No timing assertions: small timeouts only
// make the deadline fire, and every "after X" is awaited on the event that proves X.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';

import * as pkg from '../../js/node.mjs';
import {
  assistantText,
  chatRequest,
  countingStorage,
  demoSetup,
  DIAGNOSTIC,
  errorOf,
  readTurn,
  recordingBody,
  recordingMemory,
  scenarioAbortMidStream,
  scenarioHappyPath,
  scenarioSlowReader,
  scenarioTooLarge,
  sleep,
  SNAPSHOT,
  submitEvent,
  words,
} from '../support/chat-harness.mjs';
import {
  checkAbortMidStream,
  checkErrorResponse,
  checkHappyPath,
  checkIncreasing,
  checkSlowReader,
  checkTooLarge,
} from '../support/chat-checks.mjs';

const { createChatHandler, defineChat, createDemoModel, createTurnSnapshotCursor, encodeTurnEvent } = pkg;

// The diagnostics table (AgentsKit's handler table, plus turnkeep's TURN_REPLAYED).
const E = {
  method: { status: 405, code: 'REQUEST_METHOD_NOT_ALLOWED', message: 'Only POST is supported.', retryable: false },
  media: { status: 415, code: 'REQUEST_UNSUPPORTED_MEDIA_TYPE', message: 'Content-Type must be application/json.', retryable: false },
  large: { status: 413, code: 'REQUEST_TOO_LARGE', message: 'Request body is too large.', retryable: false },
  json: { status: 400, code: 'REQUEST_INVALID_JSON', message: 'Request body is not valid JSON.', retryable: false },
  event: { status: 400, code: 'REQUEST_INVALID_EVENT', message: 'Request body must be a valid turn submission.', retryable: false },
  busy: { status: 409, code: 'SESSION_BUSY', message: 'Another turn is active for this session.', retryable: true },
  replayed: { status: 409, code: 'TURN_REPLAYED', message: 'This turn has already been processed.', retryable: false },
  timeout: { status: 408, code: 'SERVER_TIMEOUT', message: 'The chat request timed out.', retryable: true },
  cancelled: { status: 499, code: 'REQUEST_CANCELLED', message: 'The chat request was cancelled.', retryable: true },
  internal: { status: 500, code: 'SERVER_INTERNAL', message: 'The chat request failed.', retryable: true },
  incompatible: { status: 409, code: 'SESSION_INCOMPATIBLE_DEFINITION', message: 'The stored session cannot be resumed by this chat definition.', retryable: false },
};

/** The in-stream form of a row: a diagnostic payload, always retryable. */
const inStream = ({ code, message }) => ({ version: 1, code, message, retryable: true });

const never = () => new Promise(() => {});

/** A stored session envelope for seeding storage. */
function envelope(fields) {
  return {
    protocol: 'agentskit.chat.session',
    version: 1,
    sessionId: 's1',
    definitionId: 'demo',
    definitionRevision: 1,
    updatedAt: '2026-07-11T03:00:00.000Z',
    cursor: 4,
    confirmations: [],
    ...fields,
  };
}

/** Runs one request through a fresh demo setup and returns the response (and the setup). */
async function run({ request = () => chatRequest(submitEvent()), options, chat, seed, memory } = {}) {
  const setup = demoSetup(pkg, { options, chat, memory });
  if (seed) assert.equal(await setup.storage.save(seed, undefined), true);
  const response = await setup.handler(request());
  return { response, ...setup };
}

/** One row of the table: the request (and setup) → the error response. */
function check(name, { request = () => chatRequest(submitEvent()), ...setup }, expected) {
  test(name, async () => {
    const { response } = await run({ request, ...setup });
    checkErrorResponse(await errorOf(response), expected);
  });
}

describe('construction: bad options throw SERVER_INVALID_CONFIG', () => {
  const ok = { resolveDefinition: () => undefined, sessionStorage: () => undefined };
  const cases = [
    ['options missing', undefined],
    ['options not an object', 'fast'],
    ['resolveDefinition missing', { sessionStorage: ok.sessionStorage }],
    ['sessionStorage missing', { resolveDefinition: ok.resolveDefinition }],
    ['sessionStorage not a function', { ...ok, sessionStorage: {} }],
    ['authenticate not a function', { ...ok, authenticate: true }],
    ['now not a function', { ...ok, now: 5 }],
    ['createId not a function', { ...ok, createId: 'id' }],
    ['timeoutMs 0', { ...ok, timeoutMs: 0 }],
    ['timeoutMs negative', { ...ok, timeoutMs: -5 }],
    ['timeoutMs fractional', { ...ok, timeoutMs: 1.5 }],
    ['timeoutMs a string', { ...ok, timeoutMs: '100' }],
    ['timeoutMs NaN', { ...ok, timeoutMs: NaN }],
    ['timeoutMs Infinity', { ...ok, timeoutMs: Infinity }],
    ['cleanupTimeoutMs 0', { ...ok, cleanupTimeoutMs: 0 }],
    ['maxBodyBytes 0', { ...ok, maxBodyBytes: 0 }],
    ['maxBodyBytes 2^53', { ...ok, maxBodyBytes: 2 ** 53 }],
  ];
  for (const [name, options] of cases) {
    test(name, () => {
      assert.throws(() => createChatHandler(options), (e) => e instanceof Error && e.code === 'SERVER_INVALID_CONFIG');
    });
  }
  test('good options construct a handler (the control case)', () => {
    const handler = createChatHandler({ ...ok, timeoutMs: 1, cleanupTimeoutMs: 1, maxBodyBytes: 1, authenticate: () => ({ ok: true }) });
    assert.equal(typeof handler, 'function');
  });
});

describe('the diagnostics table, before the stream', () => {
  check('405 for GET', { request: () => chatRequest(undefined, { method: 'GET' }) }, E.method);
  check('405 for PUT with a valid body', { request: () => chatRequest(submitEvent(), { method: 'PUT' }) }, E.method);
  check('415 for text/plain', { request: () => chatRequest(submitEvent(), { headers: { 'content-type': 'text/plain' } }) }, E.media);
  check('415 with no content-type', { request: () => chatRequest(recordingBody(['{}']).stream, { headers: { 'content-type': null } }) }, E.media);
  check('415 when application/json is not at the start of the media type', { request: () => chatRequest(submitEvent(), { headers: { 'content-type': 'text/application/json' } }) }, E.media);

  test('413 by Content-Length and by counted bytes of a streamed body', async () => {
    const result = await scenarioTooLarge(pkg);
    assert.equal(result.lengthKept, true, 'Node keeps a Content-Length set on a Request');
    checkTooLarge(result);
  });

  check('400 for text that is not JSON', { request: () => chatRequest('{"protocol":') }, E.json);
  check('400 for an empty body', { request: () => chatRequest('') }, E.json);
  check('400 for a POST with no body', { request: () => chatRequest(undefined) }, E.json);
  check('400 for bytes that are not UTF-8', {
    request: () => chatRequest(new ReadableStream({ start: (c) => { c.enqueue(new Uint8Array([0x7b, 0xff, 0x7d])); c.close(); } })),
  }, E.json);
  check('400 for JSON that is not an event', { request: () => chatRequest('{}') }, E.event);
  check('400 for a JSON array', { request: () => chatRequest('[1,2]') }, E.event);
  check('400 for a blank input', { request: () => chatRequest(submitEvent({ input: '   ' })) }, E.event);
  check('400 for version 2', { request: () => chatRequest({ ...submitEvent(), version: 2 }) }, E.event);
  check('400 for a turnId that is not a SafeId', { request: () => chatRequest(submitEvent({ turnId: '-bad id' })) }, E.event);
  check('400 for a snapshot event sent as a submission', {
    request: () => {
      const snapshot = encodeTurnEvent({
        ...submitEvent(),
        event: 'server.turn.snapshot',
        payload: { messages: [], status: 'idle', usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 } },
      });
      assert.equal(pkg.decodeTurnEvent(snapshot).ok, true, 'the snapshot itself is a valid event');
      return chatRequest(snapshot);
    },
  }, E.event);

  check('409 SESSION_BUSY while another turn holds the lease', {
    seed: envelope({ activeTurn: { turnId: 'other', expiresAt: Date.now() + 600_000 } }),
  }, E.busy);
  check('409 TURN_REPLAYED with the recorded outcome', {
    seed: envelope({ terminalTurns: [{ turnId: 'older', outcome: 'completed' }, { turnId: 't1', outcome: 'indeterminate' }] }),
  }, { ...E.replayed, outcome: 'indeterminate' });
  test('an expired lease is taken over (the control case for SESSION_BUSY); its turn is recorded indeterminate', async () => {
    const { response, storage } = await run({ seed: envelope({ activeTurn: { turnId: 'other', expiresAt: 1 } }) });
    assert.equal(response.status, 200);
    await readTurn(pkg, response);
    assert.deepEqual((await storage.stored('s1')).terminalTurns, [
      { turnId: 'other', outcome: 'indeterminate' },
      { turnId: 't1', outcome: 'completed' },
    ]);
  });

  check('408 when the body never finishes arriving', {
    options: { timeoutMs: 30 },
    request: () => chatRequest(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('{"protocol":')) })),
  }, E.timeout);
  check('408 when the deadline fires during authentication', { options: { timeoutMs: 30, authenticate: never } }, E.timeout);
  for (const [name, load] of [
    ['a v0 session is migrated and the turn runs', (seed) => { const { protocol, ...v0 } = seed; return { ...v0, version: 0 }; }],
    ['a session stored as JSON text is read', (seed) => JSON.stringify(seed)],
  ]) {
    test(name, async () => {
      const stored = load(envelope({ cursor: 7, terminalTurns: [{ turnId: 'old', outcome: 'completed' }] }));
      const saves = [];
      const storage = { load: async () => stored, save: async (snapshot, expected) => (saves.push({ snapshot, expected }), true) };
      const { response } = await run({ options: { sessionStorage: () => storage } });
      assert.equal(response.status, 200);
      const turn = await readTurn(pkg, response);
      assert.deepEqual(turn.faults, []);
      assert.equal(saves[0].expected, 7);
      assert.equal(saves[0].snapshot.protocol, 'agentskit.chat.session');
      assert.equal(saves[0].snapshot.version, 1);
      assert.equal(turn.last.sequence, 8 * 2 ** 20 + turn.snapshots.length - 1, 'sequence = claim cursor × 2^20 + index');
    });
  }
  check('408 when the deadline fires during session load', {
    options: { timeoutMs: 30, sessionStorage: () => ({ load: never, save: async () => true }) },
  }, E.timeout);
  test('499 when the client aborts during authentication', async () => {
    const client = new AbortController();
    const authenticate = () => {
      client.abort();
      return never();
    };
    const { response } = await run({ options: { authenticate }, request: () => chatRequest(submitEvent(), { signal: client.signal }) });
    checkErrorResponse(await errorOf(response), E.cancelled);
  });
  test('499, not 500, when a resolver throws after the client aborted', async () => {
    const client = new AbortController();
    const resolveDefinition = () => {
      client.abort();
      throw new Error('gave up');
    };
    const { response } = await run({ options: { resolveDefinition }, request: () => chatRequest(submitEvent(), { signal: client.signal }) });
    checkErrorResponse(await errorOf(response), E.cancelled);
  });

  const throws = () => {
    throw new Error('secret internal detail');
  };
  check('500 when authenticate throws', { options: { authenticate: throws } }, E.internal);
  check('500 when resolveDefinition throws', { options: { resolveDefinition: throws } }, E.internal);
  check('500 when resolveDefinition rejects', { options: { resolveDefinition: async () => throws() } }, E.internal);
  check('500 when resolveDefinition returns something that is not a definition', { options: { resolveDefinition: () => ({ id: 'x' }) } }, E.internal);

  // A hand-built definition (not through defineChat) is held to defineChat's tool rules.
  const toolNamed = (name) => ({ name, description: 'd', parameters: { type: 'object' }, execute: () => 'ok' });
  const toolsNamed = (count) => Array.from({ length: count }, (_, i) => toolNamed(`t${i}`));
  const handBuilt = (tools) => ({
    resolveDefinition: () => ({ id: 'demo', revision: 1, model: createDemoModel({ chunkDelayMs: 0 }), memory: recordingMemory(), tools }),
  });
  check('500 when a hand-built definition declares more than 128 tools', { options: handBuilt(toolsNamed(129)) }, E.internal);
  check('500 when a hand-built definition declares a tool name twice', { options: handBuilt([toolNamed('a'), toolNamed('b'), toolNamed('a')]) }, E.internal);
  test('a hand-built definition with 128 distinct tools runs the turn', async () => {
    const { response } = await run({ options: handBuilt(toolsNamed(128)) });
    assert.equal(response.status, 200);
    await response.body.cancel();
  });
  check('500 when sessionStorage throws', { options: { sessionStorage: throws } }, E.internal);
  check('500 when storage.load throws', { options: { sessionStorage: () => ({ load: throws, save: async () => true }) } }, E.internal);
  check('500 when storage.save throws', { options: { sessionStorage: () => ({ load: async () => undefined, save: throws }) } }, E.internal);
  check('500 when storage.save answers neither true nor false', { options: { sessionStorage: () => ({ load: async () => undefined, save: async () => 'ok' }) } }, E.internal);
  check('500 for a corrupt stored session', { options: { sessionStorage: () => ({ load: async () => '{not json', save: async () => true }) } }, E.internal);
  check('409 SESSION_INCOMPATIBLE_DEFINITION for a stored session of another definition', { seed: envelope({ definitionId: 'other' }) }, E.incompatible);

  test('500 when memory.load fails after the claim, and the lease is freed for a retry', async () => {
    const memory = { ...recordingMemory(), load: async () => { throw new Error('down'); } };
    const { response, storage, handler } = await run({ memory });
    checkErrorResponse(await errorOf(response), E.internal);
    const stored = await storage.stored('s1');
    assert.equal(stored.activeTurn, undefined, 'the lease was released, not left to lapse');
    assert.equal(stored.terminalTurns, undefined, 'the turn id stays free');
    memory.load = async () => [];
    const retry = await handler(chatRequest(submitEvent()));
    assert.equal(retry.status, 200);
    await readTurn(pkg, retry);
  });

  test("the host's own 401 is returned verbatim", async () => {
    const hostResponse = new Response('who are you?', { status: 401, headers: { 'www-authenticate': 'Bearer', 'x-host': 'yes' } });
    const { response } = await run({ options: { authenticate: () => ({ ok: false, response: hostResponse }) } });
    assert.equal(response, hostResponse, 'the very same Response object');
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('www-authenticate'), 'Bearer');
    assert.equal(response.headers.get('x-host'), 'yes');
    assert.equal(await response.text(), 'who are you?');
  });

  test('internal messages never reach the client', async () => {
    const { response } = await run({ options: { resolveDefinition: throws } });
    assert.doesNotMatch(await response.text(), /secret internal detail/);
  });
});

describe('authentication runs before the body is read; context comes only from the host', () => {
  test('a rejecting authenticate sees the request and a signal, and no byte is read', async () => {
    const body = recordingBody([JSON.stringify(submitEvent())]);
    const seen = [];
    const resolved = [];
    const hostResponse = new Response(null, { status: 401 });
    const request = chatRequest(body.stream);
    const { response } = await run({
      request: () => request,
      options: {
        authenticate: (req, signal) => {
          seen.push({ same: req === request, signal: signal instanceof AbortSignal, pulls: body.pulls });
          return { ok: false, response: hostResponse };
        },
        resolveDefinition: () => resolved.push('definition'),
      },
    });
    assert.equal(response, hostResponse);
    assert.deepEqual(seen, [{ same: true, signal: true, pulls: 0 }]);
    assert.equal(body.pulls, 0, 'no byte of the body was pulled');
    assert.equal(body.cancelled, false);
    assert.deepEqual(resolved, []);
  });

  test('a throwing authenticate is a 500 and reads nothing either', async () => {
    const body = recordingBody([JSON.stringify(submitEvent())]);
    const { response } = await run({ request: () => chatRequest(body.stream), options: { authenticate: async () => { throw new Error('x'); } } });
    assert.equal(response.status, 500);
    assert.equal(body.pulls, 0);
  });

  test('the control case: an accepting authenticate lets the body be read', async () => {
    const body = recordingBody([JSON.stringify(submitEvent())]);
    const { response } = await run({ request: () => chatRequest(body.stream), options: { authenticate: () => ({ ok: true, context: {} }) } });
    assert.equal(response.status, 200);
    await readTurn(pkg, response);
    assert.ok(body.pulls > 0);
  });

  test('a `context` in the payload never reaches the resolvers', async () => {
    const trusted = { tenant: 'alice' };
    const received = [];
    const storage = countingStorage(pkg);
    const definition = demoSetup(pkg).definition;
    const spoofed = submitEvent({ extra: { context: { tenant: 'mallory' } } });
    spoofed.payload.context = { tenant: 'mallory' };
    const handler = createChatHandler({
      authenticate: () => ({ ok: true, context: trusted }),
      resolveDefinition: (ctx, sessionId, signal) => {
        received.push({ at: 'resolveDefinition', ctx, sessionId, signal: signal instanceof AbortSignal });
        return definition;
      },
      sessionStorage: (ctx, signal) => {
        received.push({ at: 'sessionStorage', ctx, signal: signal instanceof AbortSignal });
        return storage;
      },
    });
    const response = await handler(chatRequest(spoofed));
    assert.equal(response.status, 200);
    await readTurn(pkg, response);
    assert.equal(received.length, 2);
    for (const r of received) {
      assert.equal(r.ctx, trusted, `${r.at} got the authenticate context itself`);
      assert.equal(r.signal, true);
    }
    assert.equal(received[0].sessionId, 's1');
    assert.equal(JSON.stringify(received).includes('mallory'), false);
  });

  test('with no authenticate, the resolvers get undefined even if the payload has a context', async () => {
    const received = [];
    const { definition } = demoSetup(pkg);
    const storage = countingStorage(pkg);
    const handler = createChatHandler({
      resolveDefinition: (ctx) => (received.push(ctx), definition),
      sessionStorage: (ctx) => (received.push(ctx), storage),
    });
    const response = await handler(chatRequest(submitEvent({ extra: { context: { admin: true } } })));
    assert.equal(response.status, 200);
    await readTurn(pkg, response);
    assert.deepEqual(received, [undefined, undefined]);
  });
});

/** A custom JS model that counts calls and streams `n` words once `gate` resolves. */
function gatedModel(gate, n = 3) {
  const model = {
    calls: 0,
    async *stream(_request, { signal }) {
      model.calls += 1;
      await gate;
      for (let i = 1; i <= n && !signal.aborted; i += 1) yield { type: 'text', text: `${i === 1 ? '' : ' '}m${i}` };
      yield { type: 'finish', reason: 'stop', usage: { promptTokens: 1, completionTokens: n } };
    },
  };
  return model;
}

describe('one turn per session', () => {
  test('50 concurrent submits: one model invocation, 49 × 409 before any model or tool call', async () => {
    let open;
    const gate = new Promise((resolve) => { open = resolve; });
    const model = gatedModel(gate);
    const storage = countingStorage(pkg, { delayLoads: true });
    const definition = defineChat({ id: 'demo', revision: 1, model, memory: recordingMemory() });
    const handler = createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => storage });
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => handler(chatRequest(submitEvent({ sessionId: 'crowd', turnId: `t${i}` })))),
    );
    // Every response is settled and the model is still held at its gate: only one call so far.
    assert.equal(model.calls, 1);
    const winners = responses.filter((r) => r.status === 200);
    assert.equal(winners.length, 1);
    for (const r of responses.filter((r) => r.status !== 200)) checkErrorResponse(await errorOf(r), E.busy);
    open();
    const turn = await readTurn(pkg, winners[0]);
    assert.deepEqual(turn.faults, []);
    assert.equal(assistantText(turn.last.payload.messages), 'm1 m2 m3');
    assert.equal(model.calls, 1, 'no loser ever reached the model');
    const claims = storage.saves.filter((s) => s.ok && s.snapshot.activeTurn);
    assert.equal(claims.length, 1, 'exactly one claim was written');
  });

  test('a second submit while a turn streams is 409; after it ends the session is free', async () => {
    let open;
    const model = gatedModel(new Promise((resolve) => { open = resolve; }));
    const definition = defineChat({ id: 'demo', revision: 1, model, memory: recordingMemory() });
    const storage = countingStorage(pkg);
    const handler = createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => storage });
    const first = await handler(chatRequest(submitEvent({ turnId: 'a' })));
    assert.equal(first.status, 200);
    checkErrorResponse(await errorOf(await handler(chatRequest(submitEvent({ turnId: 'b' })))), E.busy);
    open();
    await readTurn(pkg, first);
    const third = await handler(chatRequest(submitEvent({ turnId: 'b' })));
    assert.equal(third.status, 200, 'the busy turn id was not burned');
    await readTurn(pkg, third);
    assert.equal(model.calls, 2);
  });

  test('the same turn id twice at once: one runs, the other is busy; afterwards it is a replay', async () => {
    let open;
    const model = gatedModel(new Promise((resolve) => { open = resolve; }));
    const definition = defineChat({ id: 'demo', revision: 1, model, memory: recordingMemory() });
    const storage = countingStorage(pkg, { delayLoads: true });
    const handler = createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => storage });
    const [a, b] = await Promise.all([handler(chatRequest(submitEvent())), handler(chatRequest(submitEvent()))]);
    const [ok, busy] = a.status === 200 ? [a, b] : [b, a];
    assert.equal(ok.status, 200);
    checkErrorResponse(await errorOf(busy), E.busy);
    open();
    await readTurn(pkg, ok);
    checkErrorResponse(await errorOf(await handler(chatRequest(submitEvent()))), { ...E.replayed, outcome: 'completed' });
    assert.equal(model.calls, 1);
  });
});

describe('replay protection over the last 64 turns', () => {
  test('a finished turn is TURN_REPLAYED; after 64 more turns its id is accepted again', async () => {
    const { handler } = demoSetup(pkg);
    const turn = async (turnId) => handler(chatRequest(submitEvent({ sessionId: 'window', turnId, input: `say ${turnId}` })));
    const first = await turn('t0');
    assert.equal(first.status, 200);
    await readTurn(pkg, first);
    checkErrorResponse(await errorOf(await turn('t0')), { ...E.replayed, outcome: 'completed' });
    for (let i = 1; i <= 64; i += 1) {
      const r = await turn(`t${i}`);
      assert.equal(r.status, 200, `turn t${i}`);
      await readTurn(pkg, r);
    }
    checkErrorResponse(await errorOf(await turn('t1')), { ...E.replayed, outcome: 'completed' });
    const again = await turn('t0');
    assert.equal(again.status, 200, 'the oldest id fell out of the window');
    const replayed = await readTurn(pkg, again);
    assert.equal(assistantText(replayed.last.payload.messages), 'echo: say t0');
  });
});

describe('abort, cancel and deadline: stop, save, release at once', () => {
  test('the client aborts mid-stream while still reading', async () => {
    checkAbortMidStream(await scenarioAbortMidStream(pkg));
  });

  test('the client aborts and never reads again: the model is stopped and cleanup still runs', async () => {
    const model = {
      calls: 0,
      stoppedBySignal: false,
      async *stream(_request, { signal }) {
        model.calls += 1;
        signal.addEventListener('abort', () => { model.stoppedBySignal = true; });
        for (let i = 1; ; i += 1) {
          if (signal.aborted) return;
          yield { type: 'text', text: `${i === 1 ? '' : ' '}x${i}` };
          await sleep(2);
        }
      },
    };
    const memory = recordingMemory();
    const storage = countingStorage(pkg);
    const definition = defineChat({ id: 'demo', revision: 1, model, memory });
    const handler = createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => storage });
    const client = new AbortController();
    const response = await handler(chatRequest(submitEvent({ turnId: 'gone' }), { signal: client.signal }));
    assert.equal(response.status, 200);
    const reader = response.body.getReader();
    await reader.read();
    await reader.read(); // two chunks in, then the reader goes quiet (no cancel, no more reads)
    client.abort();
    const released = await storage.released('gone');
    assert.equal(released.activeTurn, undefined);
    assert.equal(model.stoppedBySignal, true, "the model's signal was aborted");
    assert.equal(memory.saves, 2, "the user's message before the answer, then the turn");
    assert.match(assistantText(memory.messages), /^x1( x\d+)*$/);
    const next = await handler(chatRequest(submitEvent({ turnId: 'next' })));
    assert.equal(next.status, 200, 'the next turn is accepted at once');
    await next.body.cancel();
  });

  test("a model await left pending by an aborted turn never answers a later turn's await", async () => {
    // The handler reuses its `then` callbacks across awaits (web::js::settled): a pair whose
    // promise was still pending when its turn stopped must not be handed to another await.
    let settleStale;
    let staleServed = false;
    let nowPending;
    const pending = new Promise((resolve) => (nowPending = resolve));
    const stale = {
      stream: () => ({
        calls: 0,
        [Symbol.asyncIterator]() { return this; },
        next() {
          this.calls += 1;
          if (this.calls === 1) return Promise.resolve({ done: false, value: { type: 'text', text: 'a1' } });
          nowPending();
          return new Promise((resolve) => (settleStale = () => { staleServed = true; resolve({ done: false, value: { type: 'text', text: ' STALE' } }); }));
        },
        return: () => Promise.resolve({ done: true }),
      }),
    };
    const fresh = {
      async *stream() {
        yield { type: 'text', text: 'b1' };
        await Promise.resolve();
        settleStale(); // while this turn awaits its model's next chunk
        await sleep(1);
        yield { type: 'text', text: ' b2' };
        yield { type: 'text', text: ' b3' };
      },
    };
    const storage = countingStorage(pkg);
    const memory = recordingMemory();
    const handlerOf = (model, chatMemory) => {
      const definition = defineChat({ id: 'pool', revision: 1, model, memory: chatMemory });
      return createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => storage });
    };
    const client = new AbortController();
    const first = await handlerOf(stale, recordingMemory())(chatRequest(submitEvent({ sessionId: 'a', turnId: 'stopped' }), { signal: client.signal }));
    first.body.getReader().read();
    await pending; // the stopped turn awaits its model's second chunk
    client.abort();
    await storage.released('stopped');
    const second = await handlerOf(fresh, memory)(chatRequest(submitEvent({ sessionId: 'b', turnId: 'later' })));
    const turn = await readTurn(pkg, second);
    assert.equal(staleServed, true, 'the stale promise settled during the later turn');
    assert.deepEqual(turn.faults, []);
    assert.equal(assistantText(memory.messages), 'b1 b2 b3');
  });

  test('the response body is cancelled: stop, save, release', async () => {
    const { handler, storage, memory } = demoSetup(pkg, { chunkDelayMs: 3 });
    const response = await handler(chatRequest(submitEvent({ sessionId: 'cancel', turnId: 't1', input: '/words 500' })));
    const turn = await readTurn(pkg, response, { stopAfter: 3 });
    assert.equal(turn.cancelled, true);
    assert.deepEqual(turn.faults, []);
    const released = await storage.released('t1');
    assert.equal(released.activeTurn, undefined);
    assert.deepEqual(released.terminalTurns, [{ turnId: 't1', outcome: 'completed' }]);
    assert.equal(memory.saves, 2, "the user's message before the answer, then the turn");
    const partial = assistantText(memory.messages);
    assert.ok(partial.length > 0 && partial.length < words(500).length && words(500).startsWith(partial), partial.slice(0, 40));
    const next = await handler(chatRequest(submitEvent({ sessionId: 'cancel', turnId: 't2', input: 'more' })));
    assert.equal(next.status, 200);
    const nextTurn = await readTurn(pkg, next);
    assert.equal(assistantText(nextTurn.last.payload.messages), 'echo: more');
    assert.ok(storage.savesOf('t1').length <= 3);
  });

  test('the deadline fires mid-stream: SERVER_TIMEOUT for a reader still reading', async () => {
    const { handler, storage, memory } = demoSetup(pkg, { chunkDelayMs: 10, options: { timeoutMs: 250 } });
    const response = await handler(chatRequest(submitEvent({ sessionId: 'late', turnId: 't1', input: '/words 1000' })));
    assert.equal(response.status, 200);
    const turn = await readTurn(pkg, response);
    assert.deepEqual(turn.faults, []);
    assert.equal(turn.last.event, DIAGNOSTIC);
    assert.deepEqual(turn.last.payload, inStream(E.timeout));
    checkIncreasing(turn.events.map((e) => e.sequence));
    const stored = await storage.stored('late');
    assert.equal(stored.activeTurn, undefined, 'released before the stream closed');
    assert.deepEqual(stored.terminalTurns, [{ turnId: 't1', outcome: 'completed' }]);
    const partial = assistantText(memory.messages);
    assert.ok(partial.startsWith('w1') && partial.length < words(1000).length);
    const next = await handler(chatRequest(submitEvent({ sessionId: 'late', turnId: 't2', input: 'hi' })));
    assert.equal(next.status, 200, 'the lease (timeoutMs + 3 × cleanupTimeoutMs) did not have to lapse');
    const nextTurn = await readTurn(pkg, next);
    assert.equal(nextTurn.last.payload.status, 'complete');
  });
});

describe('a failing ChatMemory.save', () => {
  test("a save of the user's message that fails: 500 before the model runs, the session free, a retry of the same turn accepted", async () => {
    const memory = recordingMemory({ failSave: true });
    let modelCalls = 0;
    const model = { async *stream() { modelCalls += 1; yield { type: 'text', text: 'never' }; } };
    const storage = countingStorage(pkg);
    const definition = defineChat({ id: 'demo', revision: 1, model, memory });
    const handler = createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => storage });
    checkErrorResponse(await errorOf(await handler(chatRequest(submitEvent({ sessionId: 'k', turnId: 't1' })))), E.internal);
    assert.equal(modelCalls, 0, 'no model call for a message that could not be kept');
    const stored = await storage.stored('k');
    assert.ok(stored.activeTurn.expiresAt <= Date.now(), 'the lease is given up lapsed (the next claim re-syncs the log)');
    assert.deepEqual(stored.terminalTurns ?? [], [], 'nothing recorded: the turn did not run');
    memory.save = async (messages) => { memory.saves += 1; memory.messages = structuredClone(messages); };
    const retry = await handler(chatRequest(submitEvent({ sessionId: 'k', turnId: 't1' })));
    assert.equal(retry.status, 200, 'the same turn id is claimed again at once');
    const turn = await readTurn(pkg, retry);
    assert.equal(turn.last.payload.status, 'complete');
    assert.deepEqual(memory.messages.map((m) => m.role), ['user', 'assistant'], 'the message once');
  });

  test('a closing save that fails: outcome indeterminate, a SERVER_INTERNAL line, and the replay reports it', async () => {
    const memory = recordingMemory({ failSave: 'closing' });
    const { handler, storage } = demoSetup(pkg, { memory });
    const response = await handler(chatRequest(submitEvent({ sessionId: 'm', turnId: 't1' })));
    assert.equal(response.status, 200);
    const turn = await readTurn(pkg, response);
    assert.deepEqual(turn.faults, []);
    assert.equal(memory.saves, 2);
    assert.deepEqual(memory.messages.map((m) => m.role), ['user'], "the user's message was kept");
    assert.equal(turn.last.event, DIAGNOSTIC);
    assert.deepEqual(turn.last.payload, inStream(E.internal));
    assert.equal(turn.snapshots.at(-1).payload.status, 'complete', 'the answer itself was complete');
    const stored = await storage.stored('m');
    assert.equal(stored.activeTurn, undefined);
    assert.deepEqual(stored.terminalTurns, [{ turnId: 't1', outcome: 'indeterminate' }]);
    checkErrorResponse(await errorOf(await handler(chatRequest(submitEvent({ sessionId: 'm', turnId: 't1' })))), {
      ...E.replayed,
      outcome: 'indeterminate',
    });
  });
});

describe('snapshots: coalescing and sequences', () => {
  test('a reader 10× slower than the model gets fewer, newer snapshots; the last is complete', async () => {
    checkSlowReader(await scenarioSlowReader(pkg));
  });

  test('a happy turn: headers, lines, saves', async () => {
    checkHappyPath(await scenarioHappyPath(pkg));
  });

  test('one TurnSnapshotCursor accepts every snapshot of 100 turns of a session', async () => {
    const { handler, storage } = demoSetup(pkg, { chunkDelayMs: 1 });
    const cursor = createTurnSnapshotCursor('long');
    let snapshots = 0;
    let coalescedTurns = 0;
    let previous = -1;
    for (let i = 0; i < 100; i += 1) {
      const n = 3 + (i % 7);
      const slow = i % 4 === 0;
      const response = await handler(chatRequest(submitEvent({ sessionId: 'long', turnId: `t${i}`, input: `/words ${n}` })));
      assert.equal(response.status, 200, `turn ${i}`);
      const turn = await readTurn(pkg, response, { delayMs: slow ? 4 : 0 });
      assert.deepEqual(turn.faults, []);
      assert.equal(turn.diagnostics.length, 0);
      for (const line of turn.text.trimEnd().split('\n')) {
        assert.ok(cursor.apply(line), `turn ${i}: the cursor accepted ${line.slice(0, 120)}`);
        const accepted = cursor.getSnapshot();
        assert.ok(accepted.sequence > previous);
        previous = accepted.sequence;
        snapshots += 1;
      }
      assert.equal(assistantText(turn.last.payload.messages), words(n));
      if (turn.snapshots.length < n) coalescedTurns += 1;
    }
    assert.equal(cursor.getSnapshot().sequence, previous);
    assert.ok(coalescedTurns > 0, 'some turns had snapshots dropped by coalescing');
    assert.ok(snapshots >= 100);
    const stored = await storage.stored('long');
    assert.equal(stored.cursor, 200, 'two session writes per turn');
    assert.equal(stored.terminalTurns.length, 64);
    cursor.free();
  });
});

describe('the demo tool loop with tools defined in JS', () => {
  test('/tool Q runs lookup and answers with its result', async () => {
    const { handler, toolCalls } = demoSetup(pkg);
    const response = await handler(chatRequest(submitEvent({ input: '/tool weather in Paris' })));
    const turn = await readTurn(pkg, response);
    assert.deepEqual(turn.faults, []);
    assert.deepEqual(toolCalls, [{ name: 'lookup', args: { query: 'weather in Paris' }, hasSignal: true }]);
    const last = turn.last.payload;
    assert.equal(last.status, 'complete');
    const [user, call, tool, answer] = last.messages;
    assert.equal(user.content, '/tool weather in Paris');
    assert.equal(call.toolCalls.length, 1);
    assert.deepEqual(
      { name: call.toolCalls[0].name, args: call.toolCalls[0].args, status: call.toolCalls[0].status, result: call.toolCalls[0].result },
      { name: 'lookup', args: { query: 'weather in Paris' }, status: 'complete', result: 'result for weather in Paris' },
    );
    assert.deepEqual({ role: tool.role, content: tool.content, toolCallId: tool.toolCallId }, {
      role: 'tool',
      content: 'result for weather in Paris',
      toolCallId: call.toolCalls[0].id,
    });
    assert.equal(answer.content, 'found: result for weather in Paris');
    assert.equal(last.messages.length, 4);
  });

  test('every tool call gets a turn-stable idempotencyKey; its call is recorded before it runs and its result before the model reads it', async () => {
    const runs = [];
    const lookup = {
      name: 'lookup',
      description: 'd',
      parameters: { type: 'object' },
      execute(_args, { toolCallId, idempotencyKey }) {
        runs.push({ toolCallId, idempotencyKey, savesBefore: storage.saves.length });
        return 'r';
      },
    };
    const { handler, storage } = demoSetup(pkg, { chat: { tools: [lookup] } });
    const turn = await readTurn(pkg, await handler(chatRequest(submitEvent({ input: '/tool cats' }))));
    assert.deepEqual(turn.faults, []);
    assert.equal(runs.length, 1);
    const [run] = runs;
    assert.equal(run.idempotencyKey, `s1:t1:${run.toolCallId}`);
    const before = storage.saves[run.savesBefore - 1].snapshot.turnJournal;
    assert.deepEqual(before.messages.at(-1).toolCalls.map((c) => c.id), [run.toolCallId], 'the call was recorded before it ran');
    const result = storage.saves.find((s) => s.snapshot.turnJournal?.messages.some((m) => m.role === 'tool' && m.toolCallId === run.toolCallId));
    assert.ok(result, 'its result was recorded');
    assert.equal((await storage.stored('s1')).turnJournal, undefined, 'the release drops the journal');
  });

  test('/confirm 5 leaves a requires_confirmation tool call and never runs transfer', async () => {
    const { handler, toolCalls, memory, storage } = demoSetup(pkg);
    const response = await handler(chatRequest(submitEvent({ input: '/confirm 5' })));
    const turn = await readTurn(pkg, response);
    assert.deepEqual(turn.faults, []);
    assert.deepEqual(toolCalls, []);
    const calls = turn.last.payload.messages.flatMap((m) => m.toolCalls ?? []);
    assert.deepEqual(calls.map(({ name, args, status }) => ({ name, args, status })), [
      { name: 'transfer', args: { amount: 5 }, status: 'requires_confirmation' },
    ]);
    assert.deepEqual(memory.messages, turn.last.payload.messages);
    assert.equal((await storage.stored('s1')).activeTurn, undefined);
  });

  test('/fail ends with status error and a CHAT_TURN_FAILED payload error', async () => {
    const { handler, storage } = demoSetup(pkg);
    const response = await handler(chatRequest(submitEvent({ input: '/fail' })));
    const turn = await readTurn(pkg, response);
    assert.deepEqual(turn.faults, []);
    assert.equal(turn.diagnostics.length, 0, 'a failed model is a snapshot, not a diagnostic');
    assert.equal(turn.last.event, SNAPSHOT);
    assert.equal(turn.last.payload.status, 'error');
    assert.deepEqual(turn.last.payload.error, {
      version: 1,
      code: 'CHAT_TURN_FAILED',
      message: 'The chat turn failed.',
      retryable: true,
    });
    assert.deepEqual((await storage.stored('s1')).terminalTurns, [{ turnId: 't1', outcome: 'completed' }]);
  });
});

describe('NDJSON framing', () => {
  test('every line is compact JSON ending in "\\n" and decodes with decodeTurnEvent', async () => {
    const { handler } = demoSetup(pkg, { chunkDelayMs: 1 });
    const response = await handler(chatRequest(submitEvent({ input: '/tool "quoted" \u00e9\u4e2d' })));
    const bytes = new Uint8Array(await response.arrayBuffer());
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    assert.ok(text.endsWith('\n'), 'the last line ends in "\\n" too');
    const lines = text.slice(0, -1).split('\n');
    assert.ok(lines.length >= 1);
    for (const line of lines) {
      assert.notEqual(line, '', 'no blank lines');
      assert.equal(JSON.stringify(JSON.parse(line)), line, 'compact JSON');
      const decoded = pkg.decodeTurnEvent(line);
      assert.equal(decoded.ok, true, line.slice(0, 120));
      assert.equal(encodeTurnEvent(decoded.event), line, 'canonical form, schema key order');
    }
    const last = JSON.parse(lines.at(-1));
    assert.equal(last.payload.messages.at(-1).content, 'found: result for "quoted" \u00e9\u4e2d');
  });
});

describe('cleanup is bounded and reports what went wrong in-stream', () => {
  /** Storage whose release save (no activeTurn) answers `answer` instead of writing. */
  function releaseFails(answer) {
    const inner = countingStorage(pkg);
    return {
      inner,
      load: (id) => inner.load(id),
      save: async (snapshot, expected) => (snapshot.activeTurn ? inner.save(snapshot, expected) : answer()),
    };
  }

  test('a lost CAS on release is an in-stream SESSION_CONFLICT', async () => {
    const storage = releaseFails(async () => false);
    const { handler } = demoSetup(pkg, { storage });
    const turn = await readTurn(pkg, await handler(chatRequest(submitEvent())));
    assert.deepEqual(turn.faults, []);
    assert.equal(turn.snapshots.at(-1).payload.status, 'complete');
    assert.equal(turn.last.event, DIAGNOSTIC);
    assert.deepEqual(turn.last.payload, inStream({ code: 'SESSION_CONFLICT', message: 'Another turn is active for this session.' }));
  });

  test('a throwing release save is an in-stream SERVER_INTERNAL', async () => {
    const storage = releaseFails(async () => { throw new Error('db down'); });
    const { handler } = demoSetup(pkg, { storage });
    const turn = await readTurn(pkg, await handler(chatRequest(submitEvent())));
    assert.deepEqual(turn.last.payload, inStream(E.internal));
  });

  test('a closing memory.save that never settles is cut at cleanupTimeoutMs: indeterminate, released', async () => {
    const kept = recordingMemory();
    const memory = { ...kept, save: (messages) => (kept.saves++ === 0 ? kept.save(messages) : never()) };
    const { handler, storage } = demoSetup(pkg, { memory, options: { cleanupTimeoutMs: 30 } });
    const turn = await readTurn(pkg, await handler(chatRequest(submitEvent())));
    assert.deepEqual(turn.last.payload, inStream(E.internal));
    const stored = await storage.stored('s1');
    assert.equal(stored.activeTurn, undefined);
    assert.deepEqual(stored.terminalTurns, [{ turnId: 't1', outcome: 'indeterminate' }]);
  });

  test('a model that hangs and ignores its signal is still stopped by the deadline', async () => {
    const model = {
      async *stream() {
        yield { type: 'text', text: 'started' };
        await never();
      },
    };
    const memory = recordingMemory();
    const storage = countingStorage(pkg);
    const definition = defineChat({ id: 'demo', revision: 1, model, memory });
    const handler = createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => storage, timeoutMs: 100 });
    const turn = await readTurn(pkg, await handler(chatRequest(submitEvent())));
    assert.deepEqual(turn.last.payload, inStream(E.timeout));
    assert.equal(assistantText(memory.messages), 'started');
    assert.equal((await storage.stored('s1')).activeTurn, undefined);
  });

  test('a tool that hangs is stopped by a client abort; the call is saved as it stood', async () => {
    const lookup = {
      name: 'lookup',
      description: 'hangs',
      parameters: { type: 'object' },
      aborted: false,
      execute(_args, { signal }) {
        signal.addEventListener('abort', () => { lookup.aborted = true; });
        return never();
      },
    };
    const { handler, storage, memory } = demoSetup(pkg, { chat: { tools: [lookup] } });
    const client = new AbortController();
    const response = await handler(chatRequest(submitEvent({ input: '/tool q' }), { signal: client.signal }));
    const turn = await readTurn(pkg, response, {
      onLine: (event) => {
        const running = event.payload.messages?.some((m) => m.toolCalls?.some((c) => c.status === 'running'));
        if (running) client.abort();
      },
    });
    assert.deepEqual(turn.last.payload, inStream(E.cancelled));
    assert.equal(lookup.aborted, true, "the tool's signal was aborted");
    assert.equal((await storage.stored('s1')).activeTurn, undefined);
    const calls = memory.messages.flatMap((m) => m.toolCalls ?? []);
    assert.deepEqual(calls.map((c) => c.name), ['lookup']);
  });

  check('499 for a request whose signal was aborted before the handler saw it', {
    request: () => chatRequest(submitEvent(), { signal: AbortSignal.abort() }),
  }, E.cancelled);
});

describe('the host clock and ids', () => {
  test('now() and createId() drive emittedAt, createdAt, ids and the lease', async () => {
    const now = Date.parse('2026-07-11T03:00:00.000Z');
    let n = 0;
    const { handler, storage } = demoSetup(pkg, { options: { now: () => now, createId: () => `id${(n += 1)}` } });
    const turn = await readTurn(pkg, await handler(chatRequest(submitEvent())));
    assert.deepEqual(turn.faults, []);
    const eventIds = turn.events.map((e) => e.eventId);
    assert.ok(eventIds.every((id) => /^id\d+$/.test(id)), eventIds.join());
    assert.equal(new Set(eventIds).size, eventIds.length, 'event ids are fresh');
    assert.ok(turn.events.every((e) => e.emittedAt === '2026-07-11T03:00:00.000Z'));
    assert.ok(turn.last.payload.messages.every((m) => m.createdAt === '2026-07-11T03:00:00.000Z'));
    const claim = storage.saves.find((s) => s.snapshot.activeTurn);
    assert.deepEqual(claim.snapshot.activeTurn, { turnId: 't1', expiresAt: now + 30_000 + 3 * 5_000 });
    assert.equal(claim.expectedCursor, undefined, 'a new session is created only if absent');
    assert.equal(claim.snapshot.cursor, 1);
  });

  test('leaseMs = timeoutMs + 3 × cleanupTimeoutMs for custom options', async () => {
    const now = 1_000_000;
    const { handler, storage } = demoSetup(pkg, { options: { now: () => now, timeoutMs: 2_000, cleanupTimeoutMs: 100 } });
    await readTurn(pkg, await handler(chatRequest(submitEvent())));
    assert.equal(storage.saves.find((s) => s.snapshot.activeTurn).snapshot.activeTurn.expiresAt, now + 2_300);
  });
});

describe('signals handed to the ports', () => {
  /**
   * Storage that honours its signal the way a fetch-based store does: a call made with an
   * aborted signal fails at once.
   */
  function signalHonouringStorage() {
    const inner = countingStorage(pkg);
    const storage = {
      signals: [],
      load: (id, signal) => {
        storage.signals.push({ op: 'load', given: signal instanceof AbortSignal, aborted: signal?.aborted });
        if (signal?.aborted) throw signal.reason;
        return inner.load(id);
      },
      save: (snapshot, expected, signal) => {
        storage.signals.push({ op: 'save', given: signal instanceof AbortSignal, aborted: signal?.aborted });
        if (signal?.aborted) throw signal.reason;
        return inner.save(snapshot, expected);
      },
      stored: (id) => inner.load(id),
    };
    return storage;
  }

  test('memory.load gets the deadline signal; memory.save a live one, even after an abort', async () => {
    const seen = [];
    const memory = {
      async load(options) {
        seen.push({ op: 'load', given: options?.signal instanceof AbortSignal, aborted: options?.signal?.aborted });
        return [];
      },
      async save(_messages, options) {
        seen.push({ op: 'save', given: options?.signal instanceof AbortSignal, aborted: options?.signal?.aborted });
      },
    };
    const { handler } = demoSetup(pkg, { memory, chunkDelayMs: 5 });
    const client = new AbortController();
    const response = await handler(chatRequest(submitEvent({ input: '/words 100' }), { signal: client.signal }));
    await readTurn(pkg, response, { onLine: (_e, n) => n === 2 && client.abort() });
    assert.deepEqual(seen, [
      { op: 'load', given: true, aborted: false },
      { op: 'save', given: true, aborted: false }, // the user's message, before the answer
      { op: 'save', given: true, aborted: false }, // the turn, after the abort
    ]);
  });

  test('a storage that honours its signal still gets the lease released after a client abort', async () => {
    const storage = signalHonouringStorage();
    const { handler } = demoSetup(pkg, { storage, chunkDelayMs: 5 });
    const client = new AbortController();
    const response = await handler(chatRequest(submitEvent({ input: '/words 100' }), { signal: client.signal }));
    const turn = await readTurn(pkg, response, { onLine: (_e, n) => n === 2 && client.abort() });
    assert.deepEqual(turn.last.payload, inStream(E.cancelled));
    assert.equal((await storage.stored('s1')).activeTurn, undefined, 'the release save was not handed an aborted signal');
    const next = await handler(chatRequest(submitEvent({ turnId: 't2' })));
    assert.equal(next.status, 200);
    await readTurn(pkg, next);
  });

  test('a storage that honours its signal gets the lease back when the deadline hits memory.load', async () => {
    const storage = signalHonouringStorage();
    const memory = { ...recordingMemory(), load: never };
    const { response } = await run({ memory, options: { timeoutMs: 50, sessionStorage: () => storage } });
    checkErrorResponse(await errorOf(response), E.timeout);
    const stored = await storage.stored('s1');
    assert.equal(stored.activeTurn, undefined, 'the abandoning save was not handed an aborted signal');
  });
});

describe('a slow reader still gets the final snapshot before a closing diagnostic', () => {
  // The answer was complete (or stopped) and saved; the closing diagnostic must follow the
  // final snapshot, not replace it, or the reader never sees what was saved.
  test('failing memory save: the complete answer, then SERVER_INTERNAL', async () => {
    const memory = recordingMemory();
    let saved;
    let saves = 0;
    memory.save = async (messages) => {
      saves += 1;
      if (saves === 1) return; // the user's message, before the answer
      saved = structuredClone(messages);
      throw new Error('down');
    };
    const { handler } = demoSetup(pkg, { memory, chunkDelayMs: 1 });
    const response = await handler(chatRequest(submitEvent({ input: '/words 40' })));
    const turn = await readTurn(pkg, response, { delayMs: 10 });
    assert.deepEqual(turn.faults, []);
    assert.deepEqual(turn.last.payload, inStream(E.internal));
    const final = turn.snapshots.at(-1).payload;
    assert.equal(final.status, 'complete');
    assert.equal(assistantText(final.messages), words(40));
    assert.deepEqual(final.messages, saved);
    checkIncreasing(turn.events.map((e) => e.sequence));
  });

  test('deadline: the stopped state as saved, then SERVER_TIMEOUT', async () => {
    const { handler, memory } = demoSetup(pkg, { chunkDelayMs: 1, options: { timeoutMs: 120 } });
    const response = await handler(chatRequest(submitEvent({ input: '/words 5000' })));
    const turn = await readTurn(pkg, response, { delayMs: 25 });
    assert.deepEqual(turn.last.payload, inStream(E.timeout));
    assert.deepEqual(turn.snapshots.at(-1).payload.messages, memory.messages, 'the last snapshot is what was saved');
    checkIncreasing(turn.events.map((e) => e.sequence));
  });
});

describe('ordering of the end of a turn', () => {
  test('a successful response closes only after the memory save and the release', async () => {
    const order = [];
    let open;
    const gate = new Promise((resolve) => { open = resolve; });
    const memory = recordingMemory();
    let saves = 0;
    memory.save = async () => {
      saves += 1;
      if (saves === 1) return order.push("user's message saved");
      order.push('memory.save started');
      await gate;
      order.push('memory.save resolved');
    };
    const inner = countingStorage(pkg);
    const storage = {
      load: (id) => inner.load(id),
      save: async (snapshot, expected) => {
        const ok = await inner.save(snapshot, expected);
        order.push(snapshot.activeTurn ? 'claim saved' : 'release saved');
        return ok;
      },
    };
    const { handler } = demoSetup(pkg, { memory, storage });
    const response = await handler(chatRequest(submitEvent()));
    const reading = readTurn(pkg, response).then((turn) => {
      order.push('stream done');
      return turn;
    });
    while (!order.includes('memory.save started')) await sleep(1);
    order.push('gate opened');
    open();
    const turn = await reading;
    assert.deepEqual(order, ['claim saved', "user's message saved", 'memory.save started', 'gate opened', 'memory.save resolved', 'release saved', 'stream done']);
    assert.equal(turn.last.payload.status, 'complete');
    assert.equal(turn.diagnostics.length, 0);
  });
});

describe('an abort that lands while the claim is being written', () => {
  test('499, and the claim that still went through is released, not left to lapse', async () => {
    const inner = countingStorage(pkg);
    let open;
    const gate = new Promise((resolve) => { open = resolve; });
    const client = new AbortController();
    const storage = {
      load: (id) => inner.load(id),
      save: async (snapshot, expected) => {
        if (snapshot.activeTurn?.turnId === 't1') {
          client.abort(); // the client leaves while the claim is in flight ...
          await gate; // ... and the store writes it anyway, a moment later
        }
        return inner.save(snapshot, expected);
      },
    };
    const { handler } = demoSetup(pkg, { storage });
    const pending = handler(chatRequest(submitEvent(), { signal: client.signal }));
    await sleep(0);
    open();
    checkErrorResponse(await errorOf(await pending), E.cancelled);
    const stored = await inner.stored('s1');
    assert.equal(stored.cursor, 2, 'claim, then its release');
    assert.equal(stored.activeTurn, undefined, 'no orphaned lease');
    assert.equal(stored.terminalTurns, undefined, 'the turn id stays free for a retry');
    const next = await handler(chatRequest(submitEvent({ turnId: 't2' })));
    assert.equal(next.status, 200);
    await readTurn(pkg, next);
  });
});

describe('definition and session edge cases', () => {
  test('initialMessages seed an empty memory and come first in every snapshot', async () => {
    const system = { id: 'sys-1', role: 'system', content: 'Be brief.', status: 'complete', createdAt: '2026-07-11T03:00:00.000Z' };
    const { handler, memory } = demoSetup(pkg, { chat: { initialMessages: [system] } });
    const turn = await readTurn(pkg, await handler(chatRequest(submitEvent())));
    for (const s of turn.snapshots) assert.deepEqual(s.payload.messages[0], system);
    assert.deepEqual(memory.messages.map((m) => m.role), ['system', 'user', 'assistant']);
  });

  test('a cursor too large to derive safe sequences from is a 500, and the session is left free', async () => {
    const cursor = 2 ** 33;
    const { response, storage } = await run({ seed: envelope({ cursor }) });
    checkErrorResponse(await errorOf(response), E.internal);
    const stored = await storage.stored('s1');
    assert.equal(stored.activeTurn, undefined);
  });
});

describe('behind node:http (toNodeHandler)', () => {
  test('a client that disconnects mid-turn stops it; the lease is released and the next turn runs', async () => {
    const { createServer, request: httpRequest } = await import('node:http');
    const { handler, storage, memory } = demoSetup(pkg, { chunkDelayMs: 5 });
    const server = createServer(pkg.toNodeHandler(handler));
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address();
    try {
      const post = (event) =>
        new Promise((resolve, reject) => {
          const req = httpRequest({ host: '127.0.0.1', port, path: '/api/chat', method: 'POST', headers: { 'content-type': 'application/json' } }, resolve);
          req.on('error', reject);
          req.end(JSON.stringify(event));
        });
      const first = await post(submitEvent({ turnId: 't1', input: '/words 500' }));
      assert.equal(first.statusCode, 200);
      let lines = 0;
      await new Promise((resolve) => {
        first.on('data', (chunk) => {
          lines += chunk.toString().split('\n').length - 1;
          if (lines >= 2) {
            first.destroy(); // the client goes away mid-answer
            resolve();
          }
        });
      });
      const released = await storage.released('t1');
      assert.equal(released.activeTurn, undefined);
      const partial = assistantText(memory.messages);
      assert.ok(partial.startsWith('w1') && partial.length < words(500).length, partial.slice(0, 40));
      const second = await post(submitEvent({ turnId: 't2', input: 'still there?' }));
      assert.equal(second.statusCode, 200);
      let body = '';
      for await (const chunk of second) body += chunk;
      const last = JSON.parse(body.trimEnd().split('\n').at(-1));
      assert.equal(assistantText(last.payload.messages), 'echo: still there?');
    } finally {
      server.closeAllConnections?.();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
