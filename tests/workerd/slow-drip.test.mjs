// A slow-drip (slowloris) request body that outlasts the request deadline gets its registered
// diagnostic when the deadline passes, not when the client finally stops. The chat handler reads
// its body under the request's deadline (CHAT_TIMEOUT_MS, shortened here): a well-formed submit
// dripped a few bytes at a time is answered 408 SERVER_TIMEOUT, and nothing is stored. The
// streams routes read a body within limits::STREAM_BODY_READ_MS_DEFAULT (STREAMS_BODY_MS, shortened
// here): 408 streams.v1.body_timeout, the stream not created, and — the body being read before
// the stream's PUT/DELETE queue — another PUT of the same stream is answered meanwhile.
// (The hostile corpus's drips finish within the deadline; these are built to outlast it.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { serveWorkerd } from '../support/workerd-serve.mjs';
import { problems, send } from '../support/hostile.mjs';
import { removeDir, tempDir } from './harness.mjs';

const TIMEOUT_MS = 1000;
const TENANT = 'drip';
const state = tempDir('turnkeep-slow-drip-');
let server;

before(async () => {
  server = await serveWorkerd({
    persistDir: state,
    vars: { CHAT_TIMEOUT_MS: String(TIMEOUT_MS), STREAMS_BODY_MS: String(TIMEOUT_MS), STREAMS_PUBLIC: '1' },
  });
});
after(async () => {
  await server?.stop();
  removeDir(state);
});

test('a submit dripped past the request deadline is answered 408 SERVER_TIMEOUT at the deadline, and nothing is stored', async () => {
  const entry = {
    name: 'chat: a valid submit dripped past the deadline',
    method: 'POST',
    path: '/api/chat',
    auth: true,
    headers: { 'content-type': 'application/json' },
    body: { submit: { payload: { input: `slow ${'drip '.repeat(40)}` } } },
    // ~260 bytes, 4 every 100 ms: the whole body would take ~6.5 s.
    drip: { chunkBytes: 4, delayMs: 100 },
    expect: [408, 'SERVER_TIMEOUT'],
  };
  const sid = 'drip-1';
  // Without the deadline the whole body would arrive and the turn run (200): the 408 is the deadline's.
  const response = await send(server.baseUrl, entry, { tenant: TENANT, sid });
  assert.deepEqual(problems(entry, response), []);

  const view = await fetch(`${server.baseUrl}/api/sessions/${sid}`, { headers: { authorization: `Bearer ${TENANT}` } });
  const body = await view.json();
  assert.equal(view.status, 200);
  assert.deepEqual([body.messages.length, body.session.cursor], [0, 0], 'nothing stored');
});

test('a stream create dripped past the body deadline is answered 408 streams.v1.body_timeout and holds no other PUT', async () => {
  const entry = {
    name: 'streams: a create dripped past the body deadline',
    method: 'PUT',
    path: '/v1/stream/{{sid}}',
    headers: { 'content-type': 'text/plain' },
    body: { repeat: { unit: 'z', times: 200 } },
    // 200 bytes, 2 every 100 ms: ~10 s for the whole body.
    drip: { chunkBytes: 2, delayMs: 100 },
    expect: [408, 'streams.v1.body_timeout'],
  };
  const order = [];
  const slow = send(server.baseUrl, entry, { sid: 'drip-slow' }).then((r) => {
    order.push('slow');
    return r;
  });
  await new Promise((resolve) => setTimeout(resolve, 200)); // the slow PUT has begun
  const other = await fetch(`${server.baseUrl}/v1/stream/drip-slow`, {
    method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'whole',
  });
  order.push(`other ${other.status}`);
  await other.arrayBuffer();
  const response = await slow;
  assert.deepEqual(problems(entry, response), []);
  assert.deepEqual(order, ['other 201', 'slow'], 'the dripping PUT held the stream\'s queue');
  const read = await fetch(`${server.baseUrl}/v1/stream/drip-slow?offset=-1`);
  assert.equal(await read.text(), 'whole', 'only the other PUT created the stream');
});
