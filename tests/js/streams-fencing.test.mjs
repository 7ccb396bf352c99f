// Writer fencing on the session stream Worker (real workerd): once a newer producer epoch has
// written, every append of the older epoch is refused with 403 and nothing of it is stored; a
// replayed (id, epoch, seq) is acknowledged without being stored twice, also when the replays
// race each other.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { removeDir, startWorker, tempDir } from '../streams-conformance/harness.mjs';

let dir;
let worker;

before(async () => {
  dir = tempDir();
  worker = await startWorker({ persistDir: dir, vars: { STREAMS_PUBLIC: '1', STREAMS_LONG_POLL_MS: '3000' } });
});

after(async () => {
  await worker?.stop();
  if (dir) removeDir(dir);
});

const unique = (label) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;

async function create(name) {
  const response = await fetch(`${worker.baseUrl}/v1/stream/${name}`, {
    method: 'PUT',
    headers: { 'content-type': 'text/plain' },
  });
  assert.equal(response.status, 201);
}

function append(name, body, producer) {
  const headers = { 'content-type': 'text/plain' };
  if (producer) {
    headers['producer-id'] = producer.id;
    headers['producer-epoch'] = String(producer.epoch);
    headers['producer-seq'] = String(producer.seq);
  }
  return fetch(`${worker.baseUrl}/v1/stream/${name}`, { method: 'POST', headers, body });
}

async function readAll(name) {
  const response = await fetch(`${worker.baseUrl}/v1/stream/${name}?offset=-1`);
  assert.equal(response.status, 200);
  return response.text();
}

test('an older epoch that keeps writing after a newer one is refused every time, and stores nothing', async () => {
  const name = unique('fence');
  await create(name);
  for (let seq = 0; seq < 3; seq++) {
    const r = await append(name, `old${seq}|`, { id: 'writer', epoch: 0, seq });
    assert.equal(r.status, 200, `old epoch seq ${seq} before the takeover`);
  }
  const takeover = await append(name, 'new0|', { id: 'writer', epoch: 1, seq: 0 });
  assert.equal(takeover.status, 200);
  assert.equal(takeover.headers.get('producer-epoch'), '1');

  // The zombie keeps going with its own next sequence numbers, and also retries an old one.
  for (const seq of [3, 4, 5, 1]) {
    const r = await append(name, `zombie${seq}|`, { id: 'writer', epoch: 0, seq });
    assert.equal(r.status, 403, `zombie seq ${seq}`);
    assert.equal(r.headers.get('producer-epoch'), '1', 'the refusal names the current epoch');
    await r.body?.cancel();
  }
  const next = await append(name, 'new1|', { id: 'writer', epoch: 1, seq: 1 });
  assert.equal(next.status, 200, 'the new epoch is unaffected by the refusals');
  assert.equal(await readAll(name), 'old0|old1|old2|new0|new1|');
});

test('replaying the same (id, epoch, seq) stores nothing twice', async () => {
  const name = unique('replay');
  await create(name);
  const first = await append(name, 'a|', { id: 'p', epoch: 3, seq: 0 });
  assert.equal(first.status, 200);
  const offset = first.headers.get('stream-next-offset');
  for (let i = 0; i < 3; i++) {
    const again = await append(name, 'a|', { id: 'p', epoch: 3, seq: 0 });
    assert.equal(again.status, 204, 'a replay is acknowledged as a duplicate');
    assert.equal(again.headers.get('producer-seq'), '0');
    assert.equal(again.headers.get('stream-next-offset'), offset, 'the tail did not move');
  }
  assert.equal(await readAll(name), 'a|');
});

test('racing replays of one tuple: exactly one is stored', async () => {
  const name = unique('race');
  await create(name);
  const answers = await Promise.all(
    Array.from({ length: 12 }, () => append(name, 'once|', { id: 'racer', epoch: 0, seq: 0 })),
  );
  const statuses = answers.map((r) => r.status).sort();
  assert.deepEqual(statuses, [200, ...Array(11).fill(204)]);
  assert.equal(await readAll(name), 'once|');
});

test('an append that arrives before its predecessor is held until the gap fills; a real gap is 409', async () => {
  const name = unique('gap');
  await create(name);
  const early = append(name, 'second|', { id: 'pipelined', epoch: 0, seq: 1 });
  await new Promise((r) => setTimeout(r, 20)); // seq 1 reaches the object first
  const first = await append(name, 'first|', { id: 'pipelined', epoch: 0, seq: 0 });
  assert.equal(first.status, 200);
  assert.equal((await early).status, 200, 'held, then accepted once seq 0 committed');
  assert.equal(await readAll(name), 'first|second|', 'stored in sequence order');

  const gap = await append(name, 'skipped|', { id: 'pipelined', epoch: 0, seq: 5 });
  assert.equal(gap.status, 409);
  assert.equal(gap.headers.get('producer-expected-seq'), '2');
  assert.equal(gap.headers.get('producer-received-seq'), '5');
  await gap.body?.cancel();
  assert.equal(await readAll(name), 'first|second|', 'nothing of the refused append is stored');
});
