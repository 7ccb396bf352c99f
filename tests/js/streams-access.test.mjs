// Access control and named limits of the session stream Worker (real workerd, token mode):
// `/v1/stream/*` needs the server-side token; `GET /api/chat/stream/:sessionId` reads the
// tenant's session stream with demo auth (from the Worker's own object: no token involved); over-limit requests get the protocol's status.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { removeDir, startWorker, tempDir } from '../streams-conformance/harness.mjs';

const TOKEN = 'test-streams-token-0123456789';
let dir;
let worker;

before(async () => {
  dir = tempDir();
  worker = await startWorker({ persistDir: dir, vars: { STREAMS_TOKEN: TOKEN, STREAMS_LONG_POLL_MS: '3000' } });
});

after(async () => {
  await worker?.stop();
  if (dir) removeDir(dir);
});

const unique = (label) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
const bearer = (token) => ({ authorization: `Bearer ${token}` });

function stream(name, init = {}, token = TOKEN) {
  const headers = { ...(token === null ? {} : bearer(token)), ...init.headers };
  return fetch(`${worker.baseUrl}/v1/stream/${name}`, { ...init, headers });
}

test('stream routes need the server-side token', async () => {
  const name = unique('auth');
  const cases = [
    ['no token', null, 401],
    ['wrong token', 'not-the-token', 401],
    ['the token', TOKEN, 201],
  ];
  for (const [label, token, status] of cases) {
    const r = await stream(name, { method: 'PUT', headers: { 'content-type': 'text/plain' } }, token);
    assert.equal(r.status, status, label);
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff', `${label}: security headers`);
    await r.body?.cancel();
  }
  const read = await stream(name, { method: 'GET' }, null);
  assert.equal(read.status, 401, 'reads need the token too');
  await read.body?.cancel();
});

test('a CORS preflight is answered without the token', async () => {
  const r = await stream(unique('cors'), {
    method: 'OPTIONS',
    headers: { origin: 'https://example.com', 'access-control-request-method': 'POST' },
  }, null);
  assert.equal(r.status, 204);
  assert.match(r.headers.get('access-control-allow-headers') ?? '', /Producer-Id/);
  assert.equal(r.headers.get('access-control-allow-origin'), '*');
});

test('the chat-stream proxy reads chat/<tenant>/<sessionId> with demo auth', async () => {
  const session = unique('s');
  const created = await stream(`chat/acme/${session}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([{ type: 'TEXT_MESSAGE_START' }, { type: 'TEXT_MESSAGE_END' }]),
  });
  assert.equal(created.status, 201);
  const proxy = (headers, id = session, method = 'GET') =>
    fetch(`${worker.baseUrl}/api/chat/stream/${id}?offset=-1`, { method, headers });

  const ok = await proxy(bearer('acme'));
  assert.equal(ok.status, 200);
  assert.deepEqual(await ok.json(), [{ type: 'TEXT_MESSAGE_START' }, { type: 'TEXT_MESSAGE_END' }]);
  assert.equal(ok.headers.get('stream-up-to-date'), 'true');

  const cases = [
    ['no auth', {}, session, 'GET', 401],
    ['a tenant that is not a SafeId', bearer('../acme'), session, 'GET', 401],
    ['a session id that is not a SafeId', bearer('acme'), 'bad%20id', 'GET', 400],
    ['writes are not proxied', bearer('acme'), session, 'POST', 405],
  ];
  for (const [label, headers, id, method, status] of cases) {
    const r = await proxy(headers, id, method);
    assert.equal(r.status, status, label);
    await r.body?.cancel();
  }
  // Another tenant's session of the same id is its own stream: created empty by its first read.
  const other = await proxy(bearer('globex'));
  assert.equal(other.status, 200, 'another tenant reads its own stream');
  assert.deepEqual(await other.json(), [], 'which holds nothing of acme\'s');
});

test('an append over the byte limit is 413 and the stream keeps working', async () => {
  const name = unique('big');
  const put = await stream(name, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } });
  assert.equal(put.status, 201);
  const big = await stream(name, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream' },
    body: new Uint8Array(1_048_577),
  });
  assert.equal(big.status, 413);
  await big.body?.cancel();
  const small = await stream(name, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream' },
    body: new Uint8Array(1_048_576),
  });
  assert.equal(small.status, 204, 'exactly the limit is accepted');
});

test('a new producer beyond the per-stream table is 429; known producers still write', async () => {
  const name = unique('producers');
  const put = await stream(name, { method: 'PUT', headers: { 'content-type': 'text/plain' } });
  assert.equal(put.status, 201);
  const post = (id, seq = 0) =>
    stream(name, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'producer-id': id, 'producer-epoch': '0', 'producer-seq': String(seq) },
      body: 'x',
    });
  const PRODUCERS_MAX = 1024; // core::limits::STREAM_PRODUCERS_MAX
  for (let first = 0; first < PRODUCERS_MAX; first += 32) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(32, PRODUCERS_MAX - first) }, (_, i) => post(`p${first + i}`)),
    );
    assert.ok(batch.every((r) => r.status === 200), `producers ${first}..: all accepted`);
  }
  const extra = await post('one-too-many');
  assert.equal(extra.status, 429);
  await extra.body?.cancel();
  const known = await post('p7', 1);
  assert.equal(known.status, 200);
});
