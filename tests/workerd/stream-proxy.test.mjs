// The chat-stream proxy in workerd. Mounted by a test Worker in front of a loopback upstream:
// the first bytes reach the client while the upstream still holds the rest (unbuffered), and an
// upstream error reaches the client as a diagnostic only. (A client that goes away is not seen
// by this workerd version once the answer streams: neither `request.signal` nor the body's
// cancel fires, so the upstream read ends when the stream server closes it. The abort path is
// shown end to end in Node, tests/js/stream-proxy.test.mjs.) Mounted by the demo Worker: a wrong tenant gets a
// 401 diagnostic, another tenant's session of the same id is another (empty) stream, and nothing
// leaks. The demo needs no streams token for any of it (`npm start` has none).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { SECRET, startUpstream } from '../support/upstream-stream.mjs';
import { postTurn, root, startWorker } from './harness.mjs';

let upstream;
let proxyWorker;
let demo;

before(async () => {
  upstream = await startUpstream();
  proxyWorker = await startWorker({ scriptPath: `${root}tests/workerd/proxy-worker.mjs`, bindings: { UPSTREAM_URL: upstream.url } });
  demo = await startWorker({ bindings: { DEMO_CHUNK_DELAY_MS: '0' } });
});
after(async () => {
  await proxyWorker?.stop();
  await demo?.stop();
  await upstream?.stop();
});

test('unbuffered: the first event reaches the client while the upstream still holds the rest', async () => {
  const response = await fetch(`${proxyWorker.url}/api/chat/stream/slow?offset=-1&live=sse`, {
    headers: { authorization: 'Bearer browser-tenant', cookie: 'a=b' },
  });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type'), /^text\/event-stream/);
  const reader = response.body.getReader();
  const { value } = await reader.read();
  assert.equal(new TextDecoder().decode(value), 'event: data\ndata:["first"]\n\n');
  const entry = upstream.requests.at(-1);
  assert.equal(entry.finished, false, 'the upstream has not sent the rest yet');
  assert.equal(entry.headers.authorization, 'Bearer server-streams-token');
  assert.equal(entry.headers.cookie, undefined);
  assert.equal(entry.headers['accept-encoding'], 'identity');
  assert.equal(new URL(entry.url, 'http://u').search, '?offset=-1&live=sse');
  upstream.release();
  let rest = '';
  for (let part = await reader.read(); !part.done; part = await reader.read()) rest += new TextDecoder().decode(part.value);
  assert.equal(rest, 'event: data\ndata:["second"]\n\n');
});

test('an upstream error reaches the client as a versioned diagnostic, nothing more', async () => {
  for (const [status, expected, code] of [[500, 502, 'STREAM_UPSTREAM_FAILED'], [401, 502, 'STREAM_UPSTREAM_REFUSED'], [404, 404, 'STREAM_NOT_FOUND']]) {
    const response = await fetch(`${proxyWorker.url}/api/chat/stream/status/${status}`);
    assert.equal(response.status, expected);
    const text = await response.text();
    assert.ok(!text.includes(SECRET));
    assert.equal(response.headers.get('x-upstream-debug'), null);
    assert.deepEqual(Object.keys(JSON.parse(text).error), ['version', 'code', 'message', 'retryable']);
    assert.equal(JSON.parse(text).error.code, code);
  }
});

test("the demo's proxy: a wrong tenant gets a 401 diagnostic; another tenant's session of the same id is empty", async () => {
  const answer = await postTurn(demo.url, 'acme', 'private-s', 'acme secret plans');
  await answer.text();
  const read = (headers) => fetch(`${demo.url}/api/chat/stream/private-s?offset=-1`, { headers });
  const owner = await read({ authorization: 'Bearer acme' });
  assert.equal(owner.status, 200);
  assert.match(await owner.text(), /acme secret plans/);
  for (const headers of [{}, { authorization: 'Bearer not a tenant' }, { authorization: 'Basic YWNtZTpw' }]) {
    const response = await read(headers);
    assert.equal(response.status, 401);
    const text = await response.text();
    assert.doesNotMatch(text, /secret plans/);
    assert.equal(JSON.parse(text).error.code, 'AUTH_REQUIRED');
    assert.equal(JSON.parse(text).error.version, 1);
  }
  // globex's read of its own `private-s` creates globex's (empty) stream: acme's is not in it.
  const other = await read({ authorization: 'Bearer globex' });
  assert.equal(other.status, 200);
  const text = await other.text();
  assert.doesNotMatch(text, /secret plans/);
  assert.deepEqual(JSON.parse(text), []);
  const write = await fetch(`${demo.url}/api/chat/stream/private-s`, { method: 'POST', headers: { authorization: 'Bearer acme' }, body: '[]' });
  assert.equal(write.status, 405, 'browsers never write the log directly');
  assert.equal(write.headers.get('allow'), 'GET, HEAD');
  assert.equal((await write.json()).error.code, 'STREAM_READ_ONLY');
});
