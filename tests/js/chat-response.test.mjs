// toChatResponse in Node (the wasm export over real Request/Response): authorization before the
// log is touched, the two modes, producer fencing with a typed ChatProducerError, and what the
// session log then holds (read back through resolveChatSnapshot).
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { ChatProducerError, createMemorySessionLog, resolveChatSnapshot, toChatResponse } from '../../js/node.mjs';

const request = new Request('https://app.test/api/chat/s1', { method: 'POST' });

/** A session log that fails the test if anything calls it. */
const untouchable = () => ({
  calls: 0,
  append() {
    this.calls += 1;
    throw new Error('the log must not be touched');
  },
  read() {
    this.calls += 1;
    throw new Error('the log must not be touched');
  },
});

async function* chunks(list, { failAfter } = {}) {
  let i = 0;
  for (const chunk of list) {
    if (i++ === failAfter) throw new Error('model stream broke');
    await Promise.resolve();
    yield chunk;
  }
}

const ANSWER = [
  { type: 'RUN_STARTED', runId: 'r1', threadId: 's1' },
  { type: 'TEXT_MESSAGE_START', messageId: 'a1', role: 'assistant' },
  { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a1', delta: 'Hi ', content: 'Hi ' },
  { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a1', delta: 'there', content: 'Hi there' },
  { type: 'TEXT_MESSAGE_END', messageId: 'a1' },
  { type: 'RUN_FINISHED', runId: 'r1', threadId: 's1' },
];

const USER = {
  id: 'u1',
  role: 'user',
  parts: [
    { type: 'text', content: 'hello' },
    { type: 'future-part', opaque: { kept: true } },
  ],
  metadata: { origin: 'test' },
};

async function readAll(log) {
  return (await log.read({})).chunks;
}

test('authorize says no: 403 SESSION_FORBIDDEN, and the log is never touched', async () => {
  const log = untouchable();
  const seen = [];
  const response = await toChatResponse({
    target: log,
    request,
    sessionId: 's1',
    authorize: (req, id) => {
      seen.push([req, id]);
      return false;
    },
    newMessages: [USER],
    source: chunks(ANSWER),
  });
  assert.equal(response.status, 403);
  assert.deepEqual(await response.json(), {
    error: { version: 1, code: 'SESSION_FORBIDDEN', message: 'This session is not yours to write.', retryable: false },
  });
  assert.deepEqual(seen, [[request, 's1']]);
  assert.equal(log.calls, 0);
});

test('authorize throws: 500 SERVER_INTERNAL to the client, the cause to onError, the log untouched', async () => {
  const log = untouchable();
  const boom = new Error('auth service down');
  const reported = [];
  const response = await toChatResponse({
    target: log,
    request,
    sessionId: 's1',
    authorize: async () => {
      throw boom;
    },
    onError: (error, info) => reported.push([error, info]),
    source: chunks(ANSWER),
  });
  assert.equal(response.status, 500);
  assert.equal((await response.json()).error.code, 'SERVER_INTERNAL');
  assert.deepEqual(reported, [[boom, { stage: 'authorize', sessionId: 's1' }]]);
  assert.equal(log.calls, 0);
});

test('authorize is required: a missing one is a configuration error; authorize: false opts out explicitly', async () => {
  const log = untouchable();
  await assert.rejects(toChatResponse({ target: log, request, source: chunks([]) }), (e) => e.code === 'SERVER_INVALID_CONFIG' && /authorize is required/.test(e.message));
  await assert.rejects(toChatResponse({ target: log, authorize: () => true }), /request is required/);
  // authorize answers for one session: without sessionId it is a config error, never authorize(request, undefined).
  let asked = 0;
  await assert.rejects(
    toChatResponse({ target: log, request, authorize: () => (asked++, true), source: chunks([]) }),
    (e) => e.code === 'SERVER_INVALID_CONFIG' && /sessionId is required with authorize/.test(e.message),
  );
  assert.equal(asked, 0, 'authorize is not asked about no session');
  assert.equal(log.calls, 0, 'the log is untouched');
  await assert.rejects(toChatResponse({ target: log, authorize: false, mode: 'later' }), /mode must be/);
  await assert.rejects(toChatResponse({ target: log, authorize: false, producer: { id: 'p', epoch: -1 } }), /producer.epoch/);
  await assert.rejects(toChatResponse({ target: 42, authorize: false }), /target must be/);
  assert.equal(log.calls, 0);
  const open = createMemorySessionLog();
  const response = await toChatResponse({ target: open, authorize: false, mode: 'await', source: chunks(ANSWER) });
  assert.equal(response.status, 200);
  assert.equal((await readAll(open)).length, 1 + ANSWER.length);
});

test('await mode: echoes, one native batch, the sanitized chunks; native parts survive into nativeMessages', async () => {
  const log = createMemorySessionLog();
  const response = await toChatResponse({
    target: log,
    request,
    sessionId: 's1',
    authorize: () => true,
    newMessages: [USER],
    source: chunks(ANSWER),
    mode: 'await',
  });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('cache-control'), 'no-store');
  assert.equal(await response.text(), '');
  const stored = await readAll(log);
  assert.deepEqual(
    stored.slice(0, 4).map((c) => c.type),
    ['TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'MESSAGES_SNAPSHOT'],
  );
  assert.equal(stored[0].model, 'client');
  assert.deepEqual(stored[3].messages, [USER]);
  assert.ok(stored.filter((c) => c.type === 'TEXT_MESSAGE_CONTENT').every((c) => !('content' in c)));
  const snapshot = await resolveChatSnapshot({ target: log });
  assert.deepEqual(snapshot.nativeMessages[0], USER);
  assert.deepEqual(snapshot.messages.map((m) => [m.id, m.role, m.content]), [['u1', 'user', 'hello'], ['a1', 'assistant', 'Hi there']]);
});

test('immediate mode: 202 at once, the rest kept alive through waitUntil; a source failure goes to onError', async () => {
  const log = createMemorySessionLog();
  const kept = [];
  const reported = [];
  const response = await toChatResponse({
    target: log,
    authorize: false,
    newMessages: [{ id: 'u2', role: 'user', content: 'plain' }],
    source: chunks(ANSWER, { failAfter: 3 }),
    waitUntil: (promise) => kept.push(promise),
    onError: (error, info) => reported.push([error.message, info.stage]),
  });
  assert.equal(response.status, 202);
  assert.equal(kept.length, 1);
  await kept[0];
  assert.deepEqual(reported, [['model stream broke', 'source']]);
  assert.equal((await readAll(log)).length, 3 + 1 + 3, 'echoes, batch and the 3 chunks before the failure');
});

test('await mode rejects with what the source threw, and with a coded error for a chunk that is not one', async () => {
  const log = createMemorySessionLog();
  await assert.rejects(
    toChatResponse({ target: log, authorize: false, mode: 'await', source: chunks(ANSWER, { failAfter: 1 }) }),
    /model stream broke/,
  );
  await assert.rejects(
    toChatResponse({ target: log, authorize: false, mode: 'await', source: chunks([{ type: 'RUN_STARTED' }, 'text', { type: 'X' }]) }),
    (e) => e.code === 'CHAT_INVALID_CHUNK' && /chunk 1/.test(e.message),
  );
});

test('bad newMessages: 400 REQUEST_INVALID_MESSAGES, the field path to onError, the log untouched', async () => {
  const log = untouchable();
  const reported = [];
  const response = await toChatResponse({
    target: log,
    authorize: false,
    newMessages: [USER, { role: 'robot', content: 'x' }],
    onError: (error, info) => reported.push([error.message, info.stage]),
  });
  assert.equal(response.status, 400);
  assert.equal((await response.json()).error.code, 'REQUEST_INVALID_MESSAGES');
  assert.match(reported[0][0], /newMessages\[1\]\.role/);
  assert.equal(log.calls, 0);
});

test('fenced: a stale epoch rejects with ChatProducerError (kind, currentEpoch) and stores nothing; a replay stores no duplicate', async () => {
  const log = createMemorySessionLog();
  const producer = (epoch) => ({ id: 'chat-turn:s1:t1', epoch });
  const run = (epoch, source = ANSWER) =>
    toChatResponse({ target: log, authorize: false, mode: 'await', newMessages: [USER], source: chunks(source), producer: producer(epoch) });
  assert.equal((await run(2)).status, 200);
  const stored = (await readAll(log)).length;
  assert.equal(stored, 3 + 1 + ANSWER.length);
  assert.equal((await run(2)).status, 200, 'a replay under the same (id, epoch)');
  assert.equal((await readAll(log)).length, stored, 'stored nothing twice');
  const stale = await run(1).then(
    () => assert.fail('a stale epoch must be refused'),
    (e) => e,
  );
  assert.ok(stale instanceof ChatProducerError);
  assert.equal(stale.kind, 'stale-epoch');
  assert.equal(stale.currentEpoch, 2);
  assert.equal((await readAll(log)).length, stored, 'nothing of the stale epoch');
  assert.ok(!(new Error('x') instanceof ChatProducerError));
  assert.ok(new ChatProducerError('mine', { kind: 'retryable' }) instanceof ChatProducerError);
});
