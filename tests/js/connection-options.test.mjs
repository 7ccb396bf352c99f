// The client pieces that need no server: createChatConnection's option checks (thrown at once,
// saying what is wrong), its URLs, the projection's seeding and running turn, and the renderer
// (the same markup from a snapshot's render parts and straight from the projection).
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { ChatProjection, createChatConnection, projectChatSnapshot, renderChatHtml, renderChatMessages } from '../../js/client/node.mjs';

test('bad connection options throw at once, naming the option', () => {
  const cases = [
    [undefined, /options must be an object/],
    [{}, /target is required/],
    [{ target: 42 }, /target is required/],
    [{ target: 'relative/url' }, /target must be an absolute http\(s\) URL/],
    [{ target: 'ftp://x/y' }, /target must be an http\(s\) URL/],
    [{ target: { url: 'http://x/s', chatUrl: 7 } }, /target.chatUrl must be a URL string/],
    [{ target: { url: 'http://x/s', sessionId: 'not safe' } }, /target.sessionId must be a SafeId/],
    [{ target: 'http://x/s', initialOffset: 'a&b' }, /initialOffset: an offset is -1, now, or/],
    [{ target: 'http://x/s', initialOffset: 5 }, /initialOffset must be a string/],
    [{ target: 'http://x/s', initialMessages: {} }, /initialMessages must be an array/],
    [{ target: 'http://x/s', initialRunId: 'no spaces allowed' }, /initialRunId must be a SafeId/],
    [{ target: 'http://x/s', fetch: 'nope' }, /fetch must be a function/],
    [{ target: 'http://x/s', webSocket: 'yes' }, /webSocket must be true .*, false, or \(url, headers\) => WebSocket/],
  ];
  for (const [options, message] of cases) {
    assert.throws(() => createChatConnection(options), message, JSON.stringify(options));
  }
});

test('a read-only connection refuses to send; a disposed one too', async () => {
  const connection = createChatConnection({ target: 'http://127.0.0.1:9/stream' });
  await assert.rejects(connection.send('hi'), /sending needs target.chatUrl and target.sessionId/);
  await assert.rejects(connection.stopTurn('t1'), /sending needs/);
  connection.dispose();
  const full = createChatConnection({ target: { url: 'http://127.0.0.1:9/stream', chatUrl: 'http://127.0.0.1:9/chat', sessionId: 's1' } });
  await assert.rejects(full.send('   '), /non-blank/);
  full.dispose();
  await assert.rejects(full.send('hi'), /disposed/);
});

test('the read URL keeps the target query and adds offset and live=sse', async () => {
  const seen = [];
  const connection = createChatConnection({
    target: 'http://streams.example/s/chat?tenant=acme',
    initialOffset: '0000000000000000_0000000000000042',
    fetch: async (request) => {
      seen.push(request.url);
      return new Response('stop', { status: 401 });
    },
  });
  await assert.rejects(async () => {
    for await (const _ of connection.subscribe());
  }, (error) => error.code === 'STREAM_REFUSED' && error.status === 401);
  assert.deepEqual(seen, ['http://streams.example/s/chat?tenant=acme&offset=0000000000000000_0000000000000042&live=sse']);
  assert.equal(connection.offset, '0000000000000000_0000000000000042');
  connection.dispose();
});

test('a socket read goes to the ws: URL of the same read; one that cannot open turns the connection to SSE', async () => {
  const sockets = [];
  const reads = [];
  const connection = createChatConnection({
    target: { url: 'https://streams.example/s/chat?tenant=acme', headers: { authorization: 'Bearer t' } },
    initialOffset: '0000000000000000_0000000000000042',
    // A stand-in for a socket whose handshake was refused: it closes without opening.
    webSocket: (url, headers) => {
      const socket = new EventTarget();
      sockets.push({ url, authorization: headers.get('authorization') });
      socket.close = () => {};
      queueMicrotask(() => socket.dispatchEvent(new Event('close')));
      return socket;
    },
    fetch: async (request) => {
      reads.push(request.url);
      return new Response('stop', { status: 401 });
    },
  });
  await assert.rejects(async () => {
    for await (const _ of connection.subscribe());
  }, (error) => error.code === 'STREAM_REFUSED' && error.status === 401);
  const query = 'tenant=acme&offset=0000000000000000_0000000000000042&live=sse';
  assert.deepEqual(sockets, [{ url: `wss://streams.example/s/chat?${query}`, authorization: 'Bearer t' }]);
  assert.deepEqual(reads, [`https://streams.example/s/chat?${query}`], 'the same read, by SSE');
  connection.dispose();
});

const seed = [
  { id: 'u1', role: 'user', content: '<b>hi</b>', status: 'complete', createdAt: '2026-07-11T03:00:00.000Z' },
  { id: 'a1', role: 'assistant', content: 'half', status: 'streaming', createdAt: '2026-07-11T03:00:00.001Z' },
];

test('a projection seeded mid-turn continues the turn and knows it is running', () => {
  const projection = new ChatProjection(seed, { activeRunId: 't1' });
  assert.equal(projection.activeRunId, 't1');
  projection.feed({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'a1', delta: ' done' });
  projection.feed({ type: 'TEXT_MESSAGE_END', messageId: 'a1' });
  projection.feed({ type: 'RUN_FINISHED', runId: 't1' });
  const snapshot = projection.snapshot();
  assert.equal(snapshot.activeRunId, null);
  assert.deepEqual(snapshot.messages.map((m) => [m.content, m.status]), [['<b>hi</b>', 'complete'], ['half done', 'complete']]);
  assert.throws(() => new ChatProjection({ not: 'a list' }), /initialMessages must be an array/);
  assert.equal(new ChatProjection().snapshot().activeRunId, null);
  assert.equal(projectChatSnapshot([{ type: 'RUN_STARTED', runId: 'r9' }]).activeRunId, 'r9');
});

test('the markup is the same from a snapshot and from the projection, and escaped', () => {
  const projection = new ChatProjection(seed);
  projection.feed({ type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'lookup', parentMessageId: 'a1' });
  projection.feed({ type: 'TOOL_CALL_END', toolCallId: 'c1', input: { q: '<x>' } });
  const { renderParts } = projection.snapshot();
  assert.deepEqual(projection.renderMessages(), renderChatMessages(renderParts));
  const html = renderChatHtml(renderParts);
  assert.equal(html, renderChatMessages(renderParts).map((m) => m.html).join(''));
  assert.match(html, /&lt;b&gt;hi&lt;\/b&gt;/);
  assert.doesNotMatch(html, /<b>/);
  assert.match(html, /<article class="msg assistant streaming" data-message-id="a1">/);
  assert.match(html, /data-tool-call-id="c1" data-status="pending"/);
  assert.throws(() => renderChatHtml('nope'), /renderParts must be an array/);
});
