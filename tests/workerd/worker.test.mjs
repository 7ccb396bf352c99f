// The demo Worker in workerd (Miniflare 4, configured from wrangler.toml): routes, demo auth,
// one turn per session under a burst of concurrent sends, a client that disconnects mid-answer,
// and tenants that share a session id.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';

import { filesUnder, getSession, ndjson, postTurn, removeDir, startWorker, submitBody, tempDir } from './harness.mjs';

let worker;
let state;

before(async () => {
  state = tempDir('turnkeep-worker-');
  worker = await startWorker({ persistDir: state });
});
after(async () => {
  await worker?.stop();
  if (state) removeDir(state);
});

/** The SQLite files of Durable Object instances (workerd names them by object id). */
const objectFiles = (dir) => filesUnder(dir).filter((f) => /[0-9a-f]{64}\.sqlite$/.test(f));

const lastSnapshot = (lines) => lines.filter((l) => l.event === 'server.turn.snapshot').at(-1);

test('GET / is the demo page; unknown routes are 404 and wrong methods 405, as JSON diagnostics', async () => {
  const page = await fetch(`${worker.url}/`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type'), /^text\/html/);
  assert.match(await page.text(), /<title>turnkeep/);
  const cases = [
    ['/nope', 'GET', 404, 'NOT_FOUND'],
    ['/', 'POST', 405, 'REQUEST_METHOD_NOT_ALLOWED'],
    ['/api/sessions/s1', 'DELETE', 405, 'REQUEST_METHOD_NOT_ALLOWED'],
  ];
  for (const [path, method, status, code] of cases) {
    const response = await fetch(`${worker.url}${path}`, { method, headers: { authorization: 'Bearer t' } });
    assert.equal(response.status, status, `${method} ${path}`);
    assert.equal((await response.json()).error.code, code);
  }
  const badId = await fetch(`${worker.url}/api/sessions/${encodeURIComponent('no/slash')}`, { headers: { authorization: 'Bearer t' } });
  assert.equal(badId.status, 400);
  assert.equal((await badId.json()).error.code, 'REQUEST_INVALID_SESSION_ID');
});

test('the Durable Streams routes are mounted (and refuse a request without the streams token)', async () => {
  const stream = await fetch(`${worker.url}/v1/stream/mounted-check`, { method: 'PUT' });
  assert.equal(stream.status, 401);
  assert.match(stream.headers.get('www-authenticate'), /turnkeep streams/);
  await stream.arrayBuffer();
  const proxy = await fetch(`${worker.url}/api/chat/stream/s1`);
  assert.equal(proxy.status, 401);
  await proxy.arrayBuffer();
});

test('a request without a valid Bearer tenant gets 401 and creates no Durable Object', async () => {
  const own = tempDir('turnkeep-auth-');
  const isolated = await startWorker({ persistDir: own });
  try {
    const attempts = [
      postTurn(isolated.url, undefined, 'auth-s', 'hello'),
      postTurn(isolated.url, 'not a safe id', 'auth-s', 'hello'),
      postTurn(isolated.url, 'bad/tenant', 'auth-s', 'hello'),
      fetch(`${isolated.url}/api/sessions/auth-s`),
      fetch(`${isolated.url}/api/sessions/auth-s`, { headers: { authorization: 'Basic YTpi' } }),
    ];
    for (const response of await Promise.all(attempts)) {
      assert.equal(response.status, 401);
      assert.match(response.headers.get('www-authenticate'), /^Bearer/);
      assert.equal((await response.json()).error.code, 'AUTH_REQUIRED');
    }
    assert.deepEqual(objectFiles(own), []);
    // Control: an authenticated turn does create the session's object (the check can fail).
    const ok = await postTurn(isolated.url, 'auth-tenant', 'auth-s', 'hello');
    assert.equal(ok.status, 200);
    await ok.text();
    assert.equal(objectFiles(own).length, 2, 'the session object and the session stream object');
  } finally {
    await isolated.stop();
    removeDir(own);
  }
});

test('20 concurrent sends on one session: one 200 stream, 19 × 409, one answer saved', async () => {
  const responses = await Promise.all(
    Array.from({ length: 20 }, (_, i) => postTurn(worker.url, 'race-tenant', 'race', `attempt ${i}`)),
  );
  const winners = responses.filter((r) => r.status === 200);
  const losers = responses.filter((r) => r.status === 409);
  assert.equal(winners.length, 1);
  assert.equal(losers.length, 19);
  for (const loser of losers) assert.equal((await loser.json()).error.code, 'SESSION_BUSY');
  const final = lastSnapshot(await ndjson(winners[0]));
  assert.equal(final.payload.status, 'complete');

  const { messages, session } = await getSession(worker.url, 'race-tenant', 'race');
  assert.equal(messages.filter((m) => m.role === 'assistant').length, 1);
  assert.equal(messages.filter((m) => m.role === 'user').length, 1);
  assert.deepEqual(messages, final.payload.messages);
  assert.equal(session.activeTurn, null);
  assert.equal(session.terminalTurns.length, 1);
  assert.equal(session.terminalTurns[0].outcome, 'completed');
});

/** Reads `response` until its text matches `pattern`; returns the reader to go on with. */
async function readUntil(response, pattern) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!pattern.test(text)) {
    const { value, done } = await reader.read();
    assert.ok(!done, 'the stream ended before the answer started');
    text += decoder.decode(value, { stream: true });
  }
  return { reader, decoder, text };
}

/** Polls the session view until `done(view)` or `ms` pass. */
async function waitForView(tenant, sessionId, done, ms) {
  const start = Date.now();
  let view = await getSession(worker.url, tenant, sessionId);
  while (!done(view) && Date.now() - start < ms) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    view = await getSession(worker.url, tenant, sessionId);
  }
  return view;
}

test('a client that disconnects mid-answer leaves the turn running: the stream holds the whole answer, then the lease is freed', async () => {
  const controller = new AbortController();
  // 60 words at 20 ms each: about 1.2 s. The client leaves after the first words.
  const response = await postTurn(worker.url, 'gone-tenant', 'gone', '/words 60', { signal: controller.signal });
  assert.equal(response.status, 200);
  await readUntil(response, /"content":"w1 w2 w3/);
  controller.abort();

  const view = await waitForView('gone-tenant', 'gone', (v) => v.session.activeTurn === null, 10_000);
  assert.equal(view.session.activeTurn, null, 'the lease was released when the turn ended');
  assert.equal(view.session.terminalTurns.at(-1).outcome, 'completed');
  const answer = view.messages.find((m) => m.role === 'assistant');
  assert.match(answer.content, / w60$/, 'the turn ran to its end without its client');
  assert.deepEqual(view.streamMessages, view.messages, 'the session stream projects to the saved messages');
  assert.ok(view.offset, 'the stream has an offset to continue from');
  assert.ok(view.renderParts.some((p) => p.type === 'text' && p.text === answer.content));

  const next = await postTurn(worker.url, 'gone-tenant', 'gone', 'still there?');
  assert.equal(next.status, 200);
  const final = lastSnapshot(await ndjson(next));
  assert.equal(final.payload.messages.length, 4);
  assert.equal(final.payload.messages[3].content, 'echo: still there?');
});

test('an explicit stop from another request ends the turn early; the stream of its sender ends as a normal turn', async () => {
  const turnId = `stop-${Date.now()}`;
  const headers = { 'content-type': 'application/json', authorization: 'Bearer stop-tenant' };
  const response = await fetch(`${worker.url}/api/chat`, { method: 'POST', headers, body: submitBody('stopped', '/words 2000', turnId) });
  assert.equal(response.status, 200);
  const { reader, decoder } = await readUntil(response, /"content":"w1 w2 w3/);
  const stopEvent = { ...JSON.parse(submitBody('stopped', 'x', turnId)), event: 'client.turn.stop', payload: {} };
  const stop = await fetch(`${worker.url}/api/chat`, { method: 'POST', headers, body: JSON.stringify(stopEvent) });
  assert.equal(stop.status, 202);
  assert.deepEqual((await stop.json()).stop, { version: 1, turnId, state: 'stopping' });
  let rest = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    rest += decoder.decode(value, { stream: true });
  }
  const last = JSON.parse(rest.trim().split('\n').at(-1));
  assert.equal(last.event, 'server.turn.snapshot', 'no diagnostic: a requested stop ends like a normal turn');
  assert.equal(last.payload.status, 'complete');
  const words = last.payload.messages[1].content.split(' ').length;
  assert.ok(words < 2000, `stopped early (${words} words)`);
  const view = await waitForView('stop-tenant', 'stopped', (v) => v.session.activeTurn === null, 5_000);
  assert.equal(view.session.activeTurn, null);
  assert.deepEqual(view.streamMessages, view.messages);
  const again = await fetch(`${worker.url}/api/chat`, { method: 'POST', headers, body: JSON.stringify(stopEvent) });
  assert.equal(again.status, 200);
  assert.deepEqual((await again.json()).stop, { version: 1, turnId, state: 'ended', outcome: 'completed' });
  const unknown = await fetch(`${worker.url}/api/chat`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ ...stopEvent, turnId: 'never-ran' }),
  });
  assert.equal(unknown.status, 404);
  assert.equal((await unknown.json()).error.code, 'TURN_NOT_RUNNING');
});

test('two tenants with the same session id never see each other', async () => {
  const alice = await postTurn(worker.url, 'alice', 'shared', 'alice secret');
  const aliceLines = await ndjson(alice);
  const bob = await postTurn(worker.url, 'bob', 'shared', 'bob words');
  assert.equal(bob.status, 200);
  const bobLines = await ndjson(bob);
  assert.doesNotMatch(JSON.stringify(bobLines), /alice secret/);
  assert.deepEqual(lastSnapshot(bobLines).payload.messages.map((m) => m.content), ['bob words', 'echo: bob words']);
  assert.deepEqual(lastSnapshot(aliceLines).payload.messages.map((m) => m.content), ['alice secret', 'echo: alice secret']);

  const aliceView = await getSession(worker.url, 'alice', 'shared');
  const bobView = await getSession(worker.url, 'bob', 'shared');
  assert.deepEqual(aliceView.messages.map((m) => m.content), ['alice secret', 'echo: alice secret']);
  assert.deepEqual(bobView.messages.map((m) => m.content), ['bob words', 'echo: bob words']);
  assert.notEqual(aliceView.session.terminalTurns[0].turnId, bobView.session.terminalTurns[0].turnId);
});

test('the demo tool runs and its call is part of the saved history', async () => {
  const response = await postTurn(worker.url, 'tools', 'tool-s', '/tool cats');
  const final = lastSnapshot(await ndjson(response));
  const { messages } = await getSession(worker.url, 'tools', 'tool-s');
  assert.deepEqual(messages, final.payload.messages);
  const call = messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.name === 'lookup');
  assert.deepEqual(call.args, { query: 'cats' });
  assert.equal(call.result, 'result for cats');
  assert.equal(messages.at(-1).content, 'found: result for cats');
});

test('with OPENAI_BASE_URL set, the Worker streams from that OpenAI-compatible endpoint (key and model sent)', async () => {
  const seen = [];
  const upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      seen.push({ url: req.url, authorization: req.headers.authorization, body: JSON.parse(body) });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const word of ['Hello', ' from', ' upstream']) {
        res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: word } }] })}\n\n`);
      }
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const bindings = {
    OPENAI_BASE_URL: `http://127.0.0.1:${upstream.address().port}/v1`,
    OPENAI_API_KEY: 'sk-test-key',
    OPENAI_MODEL: 'tiny-model',
  };
  const real = await startWorker({ bindings });
  try {
    const response = await postTurn(real.url, 'openai-tenant', 'openai-s', 'Say hello');
    assert.equal(response.status, 200);
    const final = lastSnapshot(await ndjson(response));
    assert.equal(final.payload.status, 'complete');
    assert.equal(final.payload.messages.at(-1).content, 'Hello from upstream');
    assert.equal(seen.length, 1);
    assert.equal(seen[0].url, '/v1/chat/completions');
    assert.equal(seen[0].authorization, 'Bearer sk-test-key');
    assert.equal(seen[0].body.model, 'tiny-model');
    assert.equal(seen[0].body.stream, true);
    assert.deepEqual(seen[0].body.messages.at(-1), { role: 'user', content: 'Say hello' });
  } finally {
    await real.stop();
    await new Promise((resolve) => upstream.close(resolve));
  }
});
