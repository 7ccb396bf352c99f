// createChatStreamProxy in Node, called with Web Requests, in front of a real loopback upstream
// (tests/support/upstream-stream.mjs): targets (static, per request, denials), what is forwarded
// and what is not, the body passed through as it streams, the client's abort reaching the
// upstream, and every upstream failure turned into a versioned diagnostic with nothing leaked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { createServer } from 'node:http';

import { createChatStreamProxy, toNodeHandler } from '../../js/node.mjs';
import { eventually, SECRET, startUpstream } from '../support/upstream-stream.mjs';

let upstream;
before(async () => {
  upstream = await startUpstream();
});
after(() => upstream?.stop());

const CLIENT = 'http://app.example/api/chat/stream/s1';
const get = (query = '', init = {}) => new Request(`${CLIENT}${query}`, init);

async function diagnostic(response, status, code) {
  assert.equal(response.status, status, code);
  assert.match(response.headers.get('content-type'), /^application\/json/);
  const text = await response.text();
  assert.ok(!text.includes(SECRET), `no upstream detail in ${text}`);
  const body = JSON.parse(text);
  assert.equal(body.error.version, 1);
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  assert.equal(typeof body.error.retryable, 'boolean');
  return body.error;
}

test('a static target: query kept, protocol headers only, identity asked, server credentials added', async () => {
  const proxy = createChatStreamProxy({
    target: { url: `${upstream.url}/echo?fixed=1`, headers: { 'x-target': 'yes' } },
    auth: { authorization: 'Bearer server-streams-token' },
  });
  const response = await proxy(
    get('?offset=0000000000000000_0000000000000042&live=sse&cursor=9', {
      headers: {
        authorization: 'Bearer browser-tenant',
        cookie: 'session=browser',
        'if-none-match': '"e1"',
        'accept-encoding': 'gzip, br',
        'x-forwarded-for': '10.0.0.1',
      },
    }),
  );
  assert.equal(response.status, 200);
  const seen = await response.json();
  const url = new URL(seen.url, 'http://upstream');
  assert.equal(url.pathname, '/echo');
  assert.deepEqual([...url.searchParams], [
    ['fixed', '1'],
    ['offset', '0000000000000000_0000000000000042'],
    ['live', 'sse'],
    ['cursor', '9'],
  ]);
  assert.equal(seen.headers.authorization, 'Bearer server-streams-token', 'the server credentials, not the browser token');
  assert.equal(seen.headers['accept-encoding'], 'identity');
  assert.equal(seen.headers['if-none-match'], '"e1"');
  assert.equal(seen.headers['x-target'], 'yes');
  assert.equal(seen.headers.cookie, undefined);
  assert.equal(seen.headers['x-forwarded-for'], undefined);
});

test('a socket read keeps its upgrade upstream; no other request carries one', async () => {
  const upgrades = [];
  const proxy = createChatStreamProxy({
    target: {
      url: 'https://streams.internal/v1/stream/s',
      // Node cannot answer 101 (a Response's status is 200-599): what reaches the upstream is
      // the check here; the 101 handed back untouched is tests/workerd/hibernate.test.mjs's.
      fetch: async (request) => (upgrades.push([request.method, request.headers.get('upgrade')]), new Response('{}')),
    },
  });
  const cases = [
    ['GET', { upgrade: 'websocket' }, 'websocket'],
    ['GET', { upgrade: 'WebSocket' }, 'websocket'],
    ['GET', {}, null],
    ['GET', { upgrade: 'h2c' }, null],
    ['HEAD', { upgrade: 'websocket' }, null],
  ];
  for (const [method, headers] of cases) {
    const response = await proxy(new Request('http://app.test/api/chat/stream/s?offset=-1&live=sse', { method, headers }));
    assert.equal(response.status, 200);
  }
  assert.deepEqual(upgrades, cases.map(([method, , upgrade]) => [method, upgrade]));
});

test('a per-request target: the resolver sees the request; null is 403; a Response is answered as is; a throw is 500', async () => {
  const errors = [];
  const proxy = createChatStreamProxy({
    target: (request) => {
      const who = request.headers.get('authorization');
      if (who === 'Bearer nobody') return null;
      if (who === 'Bearer anonymous') return new Response('sign in first', { status: 401 });
      if (who === 'Bearer broken') throw new Error(`resolver exploded: ${SECRET}`);
      return `${upstream.url}/echo`;
    },
    onError: (report) => errors.push(report),
  });
  const as = (tenant) => get('', { headers: { authorization: `Bearer ${tenant}` } });
  assert.equal((await proxy(as('acme'))).status, 200);
  await diagnostic(await proxy(as('nobody')), 403, 'STREAM_FORBIDDEN');
  const denied = await proxy(as('anonymous'));
  assert.equal(denied.status, 401);
  assert.equal(await denied.text(), 'sign in first');
  await diagnostic(await proxy(as('broken')), 500, 'STREAM_PROXY_INTERNAL');
  assert.equal(errors.length, 1);
  assert.equal(errors[0].code, 'STREAM_PROXY_INTERNAL');
  assert.match(errors[0].cause.message, /resolver exploded/, 'the operator gets what was thrown');
});

test('a bare Request or anything with .req; writing methods are 405 without writes; bad options throw', async () => {
  const proxy = createChatStreamProxy({ target: `${upstream.url}/echo` });
  assert.equal((await proxy({ req: get(), params: { sessionId: 's1' } })).status, 200);
  await diagnostic(await proxy({ nope: true }), 500, 'STREAM_PROXY_INTERNAL');
  const before = upstream.requests.length;
  for (const method of ['POST', 'PUT', 'DELETE']) {
    const refused = await proxy(get('', { method, ...(method === 'POST' ? { body: '[]' } : {}) }));
    await diagnostic(refused, 405, 'STREAM_READ_ONLY');
    assert.equal(refused.headers.get('allow'), 'GET, HEAD');
  }
  assert.equal(upstream.requests.length, before, 'a refused write never reaches the upstream');
  const head = await proxy(get('', { method: 'HEAD' }));
  assert.equal(head.status, 200);
  assert.equal(await head.text(), '');
  for (const options of [{}, { target: 42 }, { target: 'not a url' }, { target: 'ftp://x/y' }, { target: { url: 'http://x' }, auth: 7 }, { target: 'http://x', fetch: 'no' }]) {
    assert.throws(() => createChatStreamProxy(options), (error) => error.code === 'STREAM_PROXY_INVALID_CONFIG', JSON.stringify(options));
  }
});

test('with writes, an authorized POST body is passed to the upstream', async () => {
  const proxy = createChatStreamProxy({ target: `${upstream.url}/echo`, writes: { authorize: () => true } });
  const response = await proxy(
    get('', { method: 'POST', headers: { 'content-type': 'application/json', 'producer-id': 'p1', 'producer-epoch': '0', 'producer-seq': '3' }, body: '[{"a":1}]' }),
  );
  const seen = await response.json();
  assert.equal(seen.method, 'POST');
  assert.equal(seen.body, '[{"a":1}]');
  assert.equal(seen.headers['producer-seq'], '3');
  assert.equal(seen.headers['content-type'], 'application/json');
});

test('the body streams through unbuffered, and the client\'s abort tears the upstream fetch down', async () => {
  const proxy = createChatStreamProxy({ target: `${upstream.url}/slow` });
  const client = new AbortController();
  const response = await proxy(get('?offset=-1&live=sse', { signal: client.signal }));
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('stream-next-offset'), 'o1');
  assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
  const reader = response.body.getReader();
  const { value } = await reader.read(); // arrives while the upstream still holds the rest
  assert.equal(new TextDecoder().decode(value), 'event: data\ndata:["first"]\n\n');
  const entry = upstream.requests.at(-1);
  assert.equal(entry.finished, false);
  client.abort();
  await eventually(() => entry.closedEarly, 5_000, 'the upstream to see the client go');
  upstream.release();
});

test('headers that would misdescribe the re-framed body are dropped', async () => {
  const proxy = createChatStreamProxy({ target: `${upstream.url}/gzip` });
  const response = await proxy(get());
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-encoding'), null);
  assert.equal(response.headers.get('content-length'), null);
  assert.equal(response.headers.get('set-cookie'), null);
  assert.equal(response.headers.get('stream-next-offset'), 'o2');
  assert.deepEqual(await response.json(), ['compressed but not for the client']);
});

test('upstream failures become versioned diagnostics; nothing of the upstream body is passed on', async () => {
  const errors = [];
  const proxy = createChatStreamProxy({
    target: (request) => `${upstream.url}${new URL(request.url).pathname.replace('/api/chat/stream', '')}${new URL(request.url).search}`,
    onError: (report) => errors.push(report),
  });
  const at = (path) => proxy(new Request(`http://app.example/api/chat/stream${path}`));
  const cases = [
    ['/status/400', 400, 'STREAM_REQUEST_INVALID'],
    ['/status/401', 502, 'STREAM_UPSTREAM_REFUSED'],
    ['/status/403', 502, 'STREAM_UPSTREAM_REFUSED'],
    ['/status/404', 404, 'STREAM_NOT_FOUND'],
    ['/status/409', 409, 'STREAM_CONFLICT'],
    ['/status/410', 410, 'STREAM_GONE'],
    ['/status/413', 413, 'STREAM_TOO_LARGE'],
    ['/status/429', 429, 'STREAM_BUSY'],
    ['/status/418', 502, 'STREAM_UPSTREAM_REFUSED'],
    ['/status/500', 502, 'STREAM_UPSTREAM_FAILED'],
    ['/status/503', 502, 'STREAM_UPSTREAM_FAILED'],
  ];
  for (const [path, status, code] of cases) {
    const response = await at(path);
    await diagnostic(response, status, code);
    assert.equal(response.headers.get('x-upstream-debug'), null, path);
    assert.equal(response.headers.get('stream-next-offset'), 'o3', `${path}: protocol headers kept`);
  }
  const fenced = await at('/status/403?epoch');
  await diagnostic(fenced, 403, 'STREAM_PRODUCER_FENCED');
  assert.equal(fenced.headers.get('producer-epoch'), '7');

  const unreachable = createChatStreamProxy({ target: 'http://127.0.0.1:9/nothing', onError: (r) => errors.push(r) });
  await diagnostic(await unreachable(get()), 502, 'STREAM_UPSTREAM_UNREACHABLE');
  assert.equal(errors.at(-1).code, 'STREAM_UPSTREAM_UNREACHABLE');
  assert.ok(errors.at(-1).cause, 'the operator gets the fetch error');
});

test('a client that is gone before the upstream answers gets 499, not an upstream error', async () => {
  const client = new AbortController();
  client.abort();
  const proxy = createChatStreamProxy({ target: `${upstream.url}/echo` });
  await diagnostic(await proxy(get('', { signal: client.signal })), 499, 'REQUEST_CANCELLED');
});

test('over HTTP (toNodeHandler): a client that disconnects mid-stream closes the upstream connection', async () => {
  const proxy = createChatStreamProxy({ target: `${upstream.url}/slow` });
  const server = createServer(toNodeHandler(proxy));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const client = new AbortController();
    const response = await fetch(`http://127.0.0.1:${server.address().port}/api/chat/stream/s1?live=sse`, { signal: client.signal });
    const reader = response.body.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), 'event: data\ndata:["first"]\n\n');
    const entry = upstream.requests.at(-1);
    assert.equal(entry.closedEarly, false);
    client.abort();
    await eventually(() => entry.closedEarly, 5_000, 'the upstream to see the client go');
  } finally {
    upstream.release();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
