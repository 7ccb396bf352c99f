// The scenarios every example app must pass over real HTTP, against its production server
// (`next start`, the SvelteKit Worker in workerd). Both examples run the same route: demo auth
// (`Authorization: Bearer <user>`), the demo model, in-memory storage.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { ndjson, postTurn, readUntil } from '../support/http-chat.mjs';

const SNAPSHOT = 'server.turn.snapshot';
const NDJSON = 'application/x-ndjson; charset=utf-8';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const lastSnapshot = (lines) => lines.filter((l) => l.event === SNAPSHOT).at(-1);
const assistantText = (messages) => messages.filter((m) => m.role === 'assistant').map((m) => m.content).join('');

/** Reads a response body as it arrives: the snapshot lines of each network read. */
async function readByChunk(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const reads = [];
  let rest = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const lines = (rest + decoder.decode(value, { stream: true })).split('\n');
    rest = lines.pop();
    reads.push(lines.map((line) => JSON.parse(line)));
  }
  assert.equal(rest, '', 'the body ends with a newline');
  return reads.filter((lines) => lines.length > 0);
}

/**
 * Registers the scenarios; `baseUrl()` is the running app's origin. `clientLeaveStopsTurn`:
 * false for an app with a session log, where a turn outlives the client that started it (that
 * app checks what happens instead).
 */
export function chatScenarios(baseUrl, { clientLeaveStopsTurn = true } = {}) {
  test('a turn streams: snapshots arrive while the model writes, the last one is the complete answer', async () => {
    const response = await postTurn(baseUrl(), 'streamer', 'stream-s', '/words 40');
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), NDJSON);
    const reads = await readByChunk(response);
    const events = reads.flat();
    assert.ok(events.every((e) => e.event === SNAPSHOT && e.sessionId === 'stream-s'));
    for (let i = 1; i < events.length; i += 1) assert.ok(events[i].sequence > events[i - 1].sequence, 'sequences increase');
    // 40 words 20 ms apart: a server that buffered the answer would send it in one piece.
    assert.ok(reads.length >= 2, `the answer came in ${reads.length} network read(s)`);
    assert.equal(reads[0][0].payload.status, 'streaming');
    const last = events.at(-1).payload;
    assert.equal(last.status, 'complete');
    assert.equal(assistantText(last.messages), Array.from({ length: 40 }, (_, i) => `w${i + 1}`).join(' '));
  });

  test('20 concurrent sends on one session: one 200 stream and 19 × 409 SESSION_BUSY', async () => {
    // Each turn streams 50 words 20 ms apart (1 s), so all twenty arrive while the winner runs
    // even on a slow machine: a second 200 can only mean a broken lease.
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => postTurn(baseUrl(), 'racer', 'race-s', '/words 50')),
    );
    const winners = responses.filter((r) => r.status === 200);
    const losers = responses.filter((r) => r.status === 409);
    assert.equal(winners.length, 1, `statuses: ${responses.map((r) => r.status).join(' ')}`);
    assert.equal(losers.length, 19);
    for (const loser of losers) {
      assert.deepEqual(await loser.json(), {
        error: { version: 1, code: 'SESSION_BUSY', message: 'Another turn is active for this session.', retryable: true },
      });
    }
    const final = lastSnapshot(await ndjson(winners[0]));
    assert.equal(final.payload.status, 'complete');
    assert.equal(final.payload.messages.length, 2, 'exactly one of the twenty turns ran');
  });

  if (clientLeaveStopsTurn) test('a client that aborts mid-answer frees the lease: the next turn runs at once on the saved history', async () => {
    const controller = new AbortController();
    // 2000 words 20 ms apart take 40 s and the lease lasts 45 s: only the release that the
    // abort triggers frees the session within seconds.
    const response = await postTurn(baseUrl(), 'leaver', 'gone-s', '/words 2000', { signal: controller.signal });
    assert.equal(response.status, 200);
    await readUntil(response, /"content":"w1 w2 w3/);
    controller.abort();

    const leftAt = Date.now();
    let next = await postTurn(baseUrl(), 'leaver', 'gone-s', 'still there?');
    while (next.status === 409 && Date.now() - leftAt < 5_000) {
      await next.arrayBuffer();
      await sleep(50);
      next = await postTurn(baseUrl(), 'leaver', 'gone-s', 'still there?');
    }
    assert.equal(next.status, 200, 'the session was still busy 5 s after the client left');
    const messages = lastSnapshot(await ndjson(next)).payload.messages;
    assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
    assert.match(messages[1].content, /^w1 w2 w3/, 'the partial answer was saved');
    assert.ok(!messages[1].content.includes('w2000'), 'the stopped answer is partial');
    assert.equal(messages[3].content, 'echo: still there?');
  });

  test('bad input gets its diagnostic; a request without credentials gets the host\'s own 401', async () => {
    const post = (body, headers = {}) => fetch(`${baseUrl()}/api/chat`, {
      method: 'POST',
      // Same-origin, as from the app's own page: SvelteKit answers a cross-site POST of a form
      // content type (text/plain) with its own 403 before any route runs.
      headers: { authorization: 'Bearer checker', origin: baseUrl(), 'content-type': 'application/json', ...headers },
      body,
    });
    const cases = [
      [post('{"protocol":'), 400, 'REQUEST_INVALID_JSON', 'Request body is not valid JSON.'],
      [post('{"protocol":"agentskit.chat.turn","version":1}'), 400, 'REQUEST_INVALID_EVENT', 'Request body must be a valid turn submission.'],
      [post('{}', { 'content-type': 'text/plain' }), 415, 'REQUEST_UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json.'],
      [post(JSON.stringify({ pad: 'x'.repeat(70_000) })), 413, 'REQUEST_TOO_LARGE', 'Request body is too large.'],
    ];
    for (const [pending, status, code, message] of cases) {
      const response = await pending;
      assert.equal(response.status, status, code);
      assert.match(response.headers.get('content-type'), /^application\/json/);
      assert.deepEqual(await response.json(), { error: { version: 1, code, message, retryable: false } });
    }
    const anonymous = await postTurn(baseUrl(), undefined, 'anon-s', 'hello');
    assert.equal(anonymous.status, 401);
    assert.deepEqual(await anonymous.json(), { error: 'sign in first' });
  });
}
