// toNodeHandler against real sockets: a node:http server on 127.0.0.1 with a small Web handler,
// driven by fetch and by raw node:http clients (which can pause and disconnect).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import { createHash } from 'node:crypto';
import { once } from 'node:events';

import { toNodeHandler } from '../../js/node-bridge.mjs';

/// Starts a server for `handler`; returns its base URL. Closed when the test ends.
async function serve(t, handler, options) {
  const server = createServer(toNodeHandler(handler, options));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${server.address().port}`;
}

/// Fails the test with `what` if `promise` has not settled after `ms` (a guard against a hang,
/// not a timing assertion).
function settleWithin(promise, ms, what) {
  let timer;
  const guard = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  return Promise.race([promise, guard]).finally(() => clearTimeout(timer));
}

/// Deterministic bytes: block i is filled with (i % 251).
function block(i, size) {
  return new Uint8Array(size).fill(i % 251);
}

async function echo(request) {
  const body = request.method === 'GET' || request.method === 'HEAD' ? '' : await request.text();
  const headers = new Headers({
    'content-type': 'application/json',
    'x-echo-method': request.method,
  });
  headers.append('set-cookie', 'a=1; Path=/');
  headers.append('set-cookie', 'b=2; Path=/');
  return new Response(
    JSON.stringify({
      method: request.method,
      url: request.url,
      custom: request.headers.get('x-custom'),
      multi: request.headers.get('x-multi'),
      body,
      signalIsAbortSignal: request.signal instanceof AbortSignal,
    }),
    { status: 201, statusText: 'Made', headers },
  );
}

test('status, headers, url and body make the round trip', async (t) => {
  const base = await serve(t, echo);
  const res = await fetch(`${base}/api/chat?x=1`, {
    method: 'POST',
    headers: [['x-custom', 'hello'], ['x-multi', 'one'], ['x-multi', 'two'], ['content-type', 'text/plain']],
    body: 'héllo body',
  });
  assert.equal(res.status, 201);
  assert.equal(res.statusText, 'Made');
  assert.equal(res.headers.get('x-echo-method'), 'POST');
  assert.deepEqual(res.headers.getSetCookie(), ['a=1; Path=/', 'b=2; Path=/']);
  const got = await res.json();
  assert.deepEqual(got, {
    method: 'POST',
    url: `${base}/api/chat?x=1`,
    custom: 'hello',
    multi: 'one, two',
    body: 'héllo body',
    signalIsAbortSignal: true,
  });
});

test('GET carries no body and HEAD sends no body', async (t) => {
  const base = await serve(t, echo);
  const get = await fetch(`${base}/x`);
  assert.equal((await get.json()).body, '');
  const head = await fetch(`${base}/x`, { method: 'HEAD' });
  assert.equal(head.status, 201);
  assert.equal(await head.text(), '');
});

test('a large request body streams in whole', async (t) => {
  const base = await serve(t, async (request) => {
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const chunk of request.body) {
      hash.update(chunk);
      bytes += chunk.byteLength;
    }
    return Response.json({ bytes, sha256: hash.digest('hex') });
  });
  const blocks = 128;
  const size = 65_536;
  const expected = createHash('sha256');
  for (let i = 0; i < blocks; i++) expected.update(block(i, size));
  let i = 0;
  const body = new ReadableStream({
    pull(controller) {
      if (i === blocks) controller.close();
      else controller.enqueue(block(i++, size));
    },
  });
  const res = await fetch(`${base}/upload`, { method: 'POST', body, duplex: 'half' });
  assert.deepEqual(await res.json(), { bytes: blocks * size, sha256: expected.digest('hex') });
});

test('a large streamed response arrives whole and in order', async (t) => {
  const blocks = 256;
  const size = 32_768;
  const base = await serve(t, () => {
    let i = 0;
    return new Response(
      new ReadableStream({
        pull(controller) {
          if (i === blocks) controller.close();
          else controller.enqueue(block(i++, size));
        },
      }),
      { headers: { 'content-type': 'application/octet-stream' } },
    );
  });
  const res = await fetch(`${base}/big`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  assert.equal(bytes.byteLength, blocks * size);
  for (let b = 0; b < blocks; b++) {
    assert.equal(bytes[b * size], b % 251, `block ${b} starts with its own fill`);
    assert.equal(bytes[b * size + size - 1], b % 251, `block ${b} ends with its own fill`);
  }
});

test('a paused client holds the response producer back (backpressure)', async (t) => {
  const size = 65_536;
  const blocks = 2_048; // 128 MiB: far more than socket buffers can absorb
  let pulled = 0;
  const base = await serve(t, () =>
    new Response(
      new ReadableStream({
        pull(controller) {
          if (pulled === blocks) controller.close();
          else controller.enqueue(block(pulled++, size));
        },
      }),
    ),
  );
  const req = httpRequest(`${base}/slow`);
  req.end();
  const [res] = await once(req, 'response');
  await once(res, 'data');
  res.pause();
  t.after(() => req.destroy());
  // Wait until the producer stops being pulled (the bridge is waiting for 'drain').
  let last = -1;
  let stableTicks = 0;
  while (stableTicks < 5) {
    await new Promise((r) => setTimeout(r, 40));
    stableTicks = pulled === last ? stableTicks + 1 : 0;
    last = pulled;
  }
  assert.ok(pulled < blocks / 4, `only a bounded part was produced while paused (${pulled} of ${blocks} blocks)`);
});

test('a client disconnect mid-stream aborts the Request signal and cancels the body', async (t) => {
  let signalAborted;
  const aborted = new Promise((resolve) => (signalAborted = resolve));
  let bodyCancelled;
  const cancelled = new Promise((resolve) => (bodyCancelled = resolve));
  let sent = 0;
  const base = await serve(t, (request) => {
    request.signal.addEventListener('abort', () => signalAborted(request.signal.reason), { once: true });
    return new Response(
      new ReadableStream({
        async pull(controller) {
          await new Promise((r) => setTimeout(r, 5));
          controller.enqueue(new TextEncoder().encode(`chunk ${sent++}\n`));
        },
        cancel(reason) {
          bodyCancelled(reason);
        },
      }),
      { headers: { 'content-type': 'text/plain' } },
    );
  });
  const req = httpRequest(`${base}/forever`);
  req.end();
  const [res] = await once(req, 'response');
  const [first] = await once(res, 'data');
  assert.match(first.toString(), /^chunk 0\n/);
  req.destroy();
  const reason = await settleWithin(aborted, 5_000, 'the Request signal abort');
  assert.equal(reason.name, 'AbortError');
  await settleWithin(cancelled, 5_000, 'the response body cancel');
});

test('a disconnect while the handler is still working aborts its signal', async (t) => {
  let reached;
  const handlerStarted = new Promise((resolve) => (reached = resolve));
  let sawAbort;
  const abortSeen = new Promise((resolve) => (sawAbort = resolve));
  const base = await serve(t, (request) => {
    reached();
    return new Promise((resolve) => {
      request.signal.addEventListener('abort', () => {
        sawAbort(true);
        resolve(new Response('too late'));
      });
    });
  });
  const req = httpRequest(`${base}/wait`, { method: 'POST' });
  req.on('error', () => {});
  req.end('{}');
  await settleWithin(handlerStarted, 5_000, 'the handler call');
  req.destroy();
  assert.equal(await settleWithin(abortSeen, 5_000, 'the abort'), true);
});

test('a handler that stops reading a large body can still answer', async (t) => {
  const base = await serve(t, async (request) => {
    const reader = request.body.getReader();
    const { value } = await reader.read();
    await reader.cancel();
    return new Response(`too large after ${value.byteLength > 0 ? 'some' : 'no'} bytes`, { status: 413 });
  });
  const payload = new Uint8Array(8 * 1024 * 1024).fill(7);
  const res = await fetch(`${base}/limit`, { method: 'POST', body: payload });
  assert.equal(res.status, 413);
  assert.equal(await res.text(), 'too large after some bytes');
});

test('a throwing handler gives a bare 500 and reports the error to onError', async (t) => {
  const seen = [];
  const base = await serve(
    t,
    () => {
      throw new Error('secret internal detail');
    },
    { onError: (e) => seen.push(e.message) },
  );
  const res = await fetch(`${base}/boom`);
  assert.equal(res.status, 500);
  const text = await res.text();
  assert.ok(!text.includes('secret'), 'the error message never reaches the client');
  assert.deepEqual(seen, ['secret internal detail']);
});

test('a handler object with fetch() is accepted; anything else is refused', async (t) => {
  const base = await serve(t, { fetch: (request) => new Response(new URL(request.url).pathname) });
  assert.equal(await (await fetch(`${base}/obj`)).text(), '/obj');
  assert.throws(() => toNodeHandler(42), TypeError);
  assert.throws(() => toNodeHandler({}), TypeError);
});

test('a handler returning a non-Response gives a 500', async (t) => {
  const seen = [];
  const base = await serve(t, () => ({ status: 200 }), { onError: (e) => seen.push(e.name) });
  const res = await fetch(`${base}/odd`);
  assert.equal(res.status, 500);
  assert.deepEqual(seen, ['TypeError']);
});
