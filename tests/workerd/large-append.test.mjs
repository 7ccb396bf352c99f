// An append larger than the protocol allows is refused with a 413 the client can read: the
// Worker reads (and drops) the body before it answers (streams::route, `drain_body`). Answering
// from Content-Length alone while the client was still sending made workerd close the
// connection under it: measured on this machine, 16 of 20 such POSTs got ECONNRESET instead of
// the 413 (the Durable Streams suite's "should handle large payload appropriately" flaked so
// under load). Served by the workerd binary itself, so no proxy in front buffers the body.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { serveWorkerd } from '../support/workerd-serve.mjs';
import { removeDir, tempDir } from './harness.mjs';

const ATTEMPTS = 8;
const state = tempDir('turnkeep-large-');
let server;

before(async () => {
  server = await serveWorkerd({ persistDir: state, vars: { STREAMS_PUBLIC: '1' } });
});
after(async () => {
  await server?.stop();
  removeDir(state);
});

test('a 10 MiB append is answered 413 every time, never a reset connection', async () => {
  const url = `${server.baseUrl}/v1/stream/large-append`;
  const created = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } });
  assert.equal(created.status, 201);
  const body = new Uint8Array(10 * 1024 * 1024);
  for (let i = 0; i < ATTEMPTS; i++) {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body });
    assert.equal(response.status, 413, `attempt ${i + 1}`);
    assert.equal((await response.json()).error.code, 'streams.v1.append_too_large');
  }
  const head = await fetch(url, { method: 'HEAD' });
  assert.equal(head.headers.get('stream-next-offset'), '0000000000000000_0000000000000000', 'nothing was stored');
});
