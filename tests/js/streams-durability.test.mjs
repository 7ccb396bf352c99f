// Durability of acknowledged appends (the session stream Worker on the workerd binary): every
// append the server acknowledged is still there after the runtime is killed hard (SIGKILL, no
// shutdown of any kind) and restarted on the same persisted storage. Appends still in flight at
// the kill may or may not have been stored; acknowledged ones must all be, in order.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { join } from 'node:path';
import { removeDir, tempDir } from '../streams-conformance/harness.mjs';
import { serveWorkerd } from '../support/workerd-serve.mjs';

const VARS = { STREAMS_PUBLIC: '1', STREAMS_LONG_POLL_MS: '1000' };
let dir;
let server;

before(async () => {
  dir = tempDir('turnkeep-durability-');
  server = await serveWorkerd({ persistDir: join(dir, 'state'), vars: VARS });
});

after(async () => {
  await server?.stop();
  if (dir) removeDir(dir);
});

/** Kills the runtime with SIGKILL and starts it again on the same storage. */
async function killAndRestart() {
  await server.kill();
  server = await serveWorkerd({ persistDir: join(dir, 'state'), vars: VARS });
}

const url = (name) => `${server.baseUrl}/v1/stream/${name}`;
const post = (name, body, headers = {}) =>
  fetch(url(name), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

async function readAll(name) {
  const r = await fetch(`${url(name)}?offset=-1`);
  assert.equal(r.status, 200, `read ${name}`);
  assert.equal(r.headers.get('stream-up-to-date'), 'true');
  return r.json();
}

test('appends acknowledged before a SIGKILL are all read back after the restart', async () => {
  const name = `durable-${Date.now()}`;
  assert.equal((await fetch(url(name), { method: 'PUT', headers: { 'content-type': 'application/json' } })).status, 201);
  const acked = [];
  for (let i = 0; i < 40; i++) {
    const r = await post(name, JSON.stringify({ i }));
    assert.equal(r.status, 204, `append ${i}`);
    acked.push({ i });
  }
  // More appends in flight while the runtime dies: the kill follows the last ack at once.
  const inFlight = Array.from({ length: 5 }, (_, k) => post(name, JSON.stringify({ late: k })).catch(() => null));
  await killAndRestart();
  await Promise.all(inFlight);

  const items = await readAll(name);
  assert.deepEqual(items.slice(0, acked.length), acked, 'every acknowledged append, in order');
  for (const extra of items.slice(acked.length)) assert.ok('late' in extra, 'nothing but the in-flight appends follows');
});

test('a producer append acknowledged before a SIGKILL keeps its fencing state after the restart', async () => {
  const name = `durable-producer-${Date.now()}`;
  assert.equal((await fetch(url(name), { method: 'PUT', headers: { 'content-type': 'application/json' } })).status, 201);
  const producer = (seq) => ({ 'producer-id': 'p1', 'producer-epoch': '0', 'producer-seq': String(seq) });
  for (let seq = 0; seq < 10; seq++) {
    const r = await post(name, JSON.stringify({ seq }), producer(seq));
    assert.equal(r.status, 200, `producer append ${seq}`);
  }
  await killAndRestart();

  const replay = await post(name, JSON.stringify({ seq: 9 }), producer(9));
  assert.equal(replay.status, 204, 'the last acknowledged seq is a duplicate after the restart');
  const next = await post(name, JSON.stringify({ seq: 10 }), producer(10));
  assert.equal(next.status, 200, 'the next seq is accepted');
  assert.deepEqual(await readAll(name), Array.from({ length: 11 }, (_, seq) => ({ seq })));
});
