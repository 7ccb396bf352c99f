// turnkeep's Durable Objects through the ports `turnkeep/cloudflare` exports, driven inside
// workerd by a small test Worker (storage-worker.mjs): the SessionStorage conformance suite
// against ChatSession's compare-and-set, the SessionLog conformance suite against
// SessionStream's producer fencing, the ChatMemory conformance suite against ChatSession's
// memory fence (each also shown failing a broken adapter over the same objects), and ChatMemory
// rows that stay far below the Durable Object value limit.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { CASES } from '../../js/testing/session-storage-conformance.mjs';
import { CASES as LOG_CASES } from '../../js/testing/session-log-conformance.mjs';
import { CASES as MEMORY_CASES } from '../../js/testing/chat-memory-conformance.mjs';
import { root, startWorker } from './harness.mjs';

const ROW_BYTES_MAX = 262_144; // DO_ROW_BYTES_MAX in src/core/limits.rs
let worker;

before(async () => {
  worker = await startWorker({ scriptPath: `${root}tests/workerd/storage-worker.mjs` });
});
after(() => worker?.stop());

async function call(path, body) {
  const init = body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) };
  const response = await fetch(`${worker.url}${path}`, init);
  return { status: response.status, body: await response.json() };
}

function message(id, role, content) {
  return { id, role, content, status: 'complete', createdAt: '2026-07-11T03:00:00.000Z' };
}

test('the Durable Object adapter passes the SessionStorage conformance suite (32 concurrent savers)', async () => {
  const { status, body } = await call('/conformance?concurrency=32');
  assert.equal(status, 200);
  assert.deepEqual(body.failed, []);
  assert.deepEqual([...body.passed].sort(), Object.values(CASES).sort());
});

test('the suite fails a last-write-wins adapter over the same objects', async () => {
  const { status, body } = await call('/conformance?concurrency=32&broken=1');
  assert.equal(status, 200);
  assert.ok(body.failed.length > 0, `passed: ${body.passed.join('; ')}`);
});

test('the SessionStream adapter passes the SessionLog conformance suite, and a log without producer stamps fails it', async () => {
  const good = await call('/log-conformance');
  assert.equal(good.status, 200);
  assert.deepEqual(good.body.failed, []);
  assert.deepEqual([...good.body.passed].sort(), Object.values(LOG_CASES).sort());
  const broken = await call('/log-conformance?broken=1');
  assert.equal(broken.status, 200);
  assert.ok(broken.body.failed.some((f) => f.name === LOG_CASES.staleEpoch), JSON.stringify(broken.body.failed));
});

test('the Durable Object ChatMemory passes the ChatMemory conformance suite (memory fences), and one that drops the fence fails it', async () => {
  const good = await call('/memory-conformance');
  assert.equal(good.status, 200);
  assert.deepEqual(good.body.failed, []);
  assert.deepEqual(good.body.passed, Object.values(MEMORY_CASES));
  const broken = await call('/memory-conformance?broken=1');
  assert.equal(broken.status, 200);
  assert.deepEqual(broken.body.failed.map((f) => f.name), [MEMORY_CASES.lowerFence]);
});

test('a long history is split over rows far below the value limit and loads back equal', async () => {
  const q = '?tenant=t-long&session=s-long';
  // 3 MiB of mixed 1- to 4-byte characters in one message, plus ordinary ones around it.
  const long = 'héllo wörld €𝄞 '.repeat(140_000);
  const history = [message('m1', 'user', 'hi'), message('m2', 'assistant', long), message('m3', 'user', 'more')];
  assert.equal((await call(`/memory/save${q}`, history)).status, 200);
  assert.deepEqual((await call(`/memory/load${q}`)).body, history);
  const stats = (await call(`/stats${q}`)).body;
  assert.ok(stats.rowBytesMax > 0 && stats.rowBytesMax <= ROW_BYTES_MAX, `largest row ${stats.rowBytesMax} bytes`);
  assert.ok(stats.messageRows >= Math.ceil(Buffer.byteLength(long) / ROW_BYTES_MAX) + 2, `${stats.messageRows} rows`);

  // A shorter history replaces it: the extra positions and their rows are gone.
  const shorter = [message('m1', 'user', 'hi')];
  assert.equal((await call(`/memory/save${q}`, shorter)).status, 200);
  assert.deepEqual((await call(`/memory/load${q}`)).body, shorter);
  assert.equal((await call(`/stats${q}`)).body.messageRows, 1);
});

test('invalid messages are refused with the failing field named, and nothing is stored', async () => {
  const q = '?tenant=t-bad&session=s-bad';
  const good = [message('m1', 'user', 'kept')];
  assert.equal((await call(`/memory/save${q}`, good)).status, 200);
  const cases = [
    [[{ ...message('m2', 'user', 'x'), role: 'robot' }], /role/],
    [[{ ...message('m2', 'user', 'x'), createdAt: 'yesterday' }], /createdAt/],
    [{ not: 'an array' }, /messages/],
  ];
  for (const [bad, names] of cases) {
    const { status, body } = await call(`/memory/save${q}`, bad);
    assert.equal(status, 500);
    assert.match(body.thrown, /ChatSessionStore\.saveMessages/);
    assert.match(body.thrown, names);
  }
  assert.deepEqual((await call(`/memory/load${q}`)).body, good);
});

test('the same session id under two tenants is two Durable Objects', async () => {
  const snapshot = (cursor, turnId) => ({
    protocol: 'agentskit.chat.session', version: 1, sessionId: 'shared', definitionId: 'demo',
    definitionRevision: 1, updatedAt: '2026-07-11T03:00:00.000Z', cursor,
    activeTurn: { turnId, expiresAt: 1 }, confirmations: [],
  });
  assert.equal((await call('/session/save?tenant=iso-a', { snapshot: snapshot(1, 'a') })).body, true);
  // bob's create-if-absent succeeds: alice's record is not visible to him.
  assert.equal((await call('/session/save?tenant=iso-b', { snapshot: snapshot(1, 'b') })).body, true);
  const a = JSON.parse((await call('/session/load?tenant=iso-a&session=shared')).body);
  const b = JSON.parse((await call('/session/load?tenant=iso-b&session=shared')).body);
  assert.equal(a.activeTurn.turnId, 'a');
  assert.equal(b.activeTurn.turnId, 'b');
});

test('createCloudflareChat refuses a context that is not a SafeId without tenant(): no shared tenant', async () => {
  const body = JSON.stringify({
    protocol: 'agentskit.chat.turn', version: 1, eventId: 'e1', sessionId: 's1', turnId: 't1', sequence: 0,
    emittedAt: '2026-07-11T03:00:00.000Z', event: 'client.turn.submit', payload: { input: 'hello' },
  });
  const response = await fetch(`${worker.url}/object-context/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  assert.equal(response.status, 500);
  assert.equal((await response.json()).error.code, 'SERVER_INTERNAL');
  const snapshot = await fetch(`${worker.url}/object-context/chat/sessions/s1`);
  assert.equal(snapshot.status, 500);
  await snapshot.arrayBuffer();
  const faults = (await call('/object-context/faults')).body;
  assert.ok(faults.length >= 2, JSON.stringify(faults));
  for (const fault of faults) {
    assert.equal(fault.code, 'SERVER_INVALID_CONFIG', JSON.stringify(fault));
    assert.match(fault.message, /tenant\(context\)/);
  }
});
