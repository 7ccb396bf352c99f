// Two Node processes, each `toNodeHandler(createChatHandler(...))` with the demo model
// (examples/durable-node/serve.mjs), serve the same sessions through one real Redis, then
// through one real PostgreSQL: the lease, the history and the session log (every turn is
// published to it) live in the database. Each process uses a different client library, so the
// two also prove that the stored format does not depend on the client.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { submitEvent } from '../support/chat-harness.mjs';
import { startPostgres, startRedis } from '../support/databases.mjs';

const SERVE = fileURLToPath(new URL('../../examples/durable-node/serve.mjs', import.meta.url));
/** How long a server process may take to print its URL. */
const SERVE_READY_MS_MAX = 20_000;
const AUTH = { authorization: 'Bearer tenant-a' };
/** Polls of a session view that waits for something a running turn publishes. */
const VIEW_POLLS_MAX = 100;
const VIEW_POLL_MS = 10;

const databases = {};
/** The two server processes of each store, started once for the file by the first test that needs them. */
const pairs = new Map();
before(async () => {
  [databases.redis, databases.postgres] = await Promise.all([startRedis(), startPostgres()]);
});
after(async () => {
  const started = await Promise.allSettled(pairs.values());
  await Promise.all(started.flatMap((p) => (p.status === 'fulfilled' ? p.value.map((s) => s.stop()) : [])));
  await Promise.all(Object.values(databases).map((db) => db.stop()));
});

const SETUPS = [
  { store: 'redis', urlVar: 'REDIS_URL', clients: ['redis', 'ioredis'] },
  { store: 'postgres', urlVar: 'DATABASE_URL', clients: ['pg', 'postgres'] },
];

for (const { store, urlVar, clients } of SETUPS) {
  test(`${store}: two processes (${clients.join(' + ')}), 20 concurrent sends across both: one 200, 19 × 409 SESSION_BUSY`, async (t) => {
    const [a, b] = await startPair(store, urlVar, clients);
    const sends = Array.from({ length: 20 }, (_, i) => send(i % 2 === 0 ? a : b, 'race', `race-${i}`, '/words 40'));
    const responses = await Promise.all(sends);
    const statuses = responses.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, 1, `statuses: ${statuses}`);
    assert.equal(statuses.filter((s) => s === 409).length, 19, `statuses: ${statuses}`);
    for (const r of responses.filter((r) => r.status === 409)) assert.equal((await r.json()).error.code, 'SESSION_BUSY');
    const winner = responses.find((r) => r.status === 200);
    const last = lastLine(await winner.text());
    assert.equal(last.payload.status, 'complete');
    assert.equal(last.payload.messages.at(-1).content, Array.from({ length: 40 }, (_, i) => `w${i + 1}`).join(' '));
    // Either process reads the same saved turn.
    for (const server of [a, b]) {
      const view = await sessionView(server, 'race');
      assert.equal(view.session.activeTurn, null);
      assert.deepEqual(view.session.terminalTurns.map((x) => x.outcome), ['completed']);
      assert.deepEqual(view.messages, last.payload.messages);
    }
  });

  test(`${store}: a turn started on one process is visible from the other (lease, the log as it streams, then history)`, async (t) => {
    const [a, b] = await startPair(store, urlVar, clients);
    const first = await send(a, 'shared', 'turn-1', 'hello there');
    assert.equal(first.status, 200);
    await first.text();

    const running = await send(a, 'shared', 'turn-2', '/words 60');
    assert.equal(running.status, 200);
    const reader = running.body.getReader();
    await reader.read(); // the turn is under way on A
    const during = await sessionView(b, 'shared');
    assert.equal(during.session.activeTurn?.turnId, 'turn-2', 'B sees the lease A claimed');
    assert.ok(during.session.activeTurn.expiresAt > Date.now(), 'the lease is unexpired');
    assert.deepEqual(during.messages.map((m) => m.content), ['hello there', 'echo: hello there', '/words 60'], "B sees the history and the turn's user message, saved before its answer");
    // …and the turn itself, in the log, as A publishes it (read through B's resolveChatSnapshot).
    const live = await viewUntil(b, 'shared', (view) => view.streamMessages[3]?.content);
    assert.deepEqual(live.streamMessages.slice(0, 3).map((m) => m.content), during.messages.map((m) => m.content), 'the log holds the history and the user message too');
    assert.equal(live.streamMessages[2].content, '/words 60', "the running turn's user message");
    assert.equal(live.streamMessages[3].role, 'assistant');
    assert.match(live.streamMessages[3].content, /^w1( w\d+)*$/, 'its answer so far');
    assert.equal(live.streamMessages[3].status, 'streaming', 'still streaming');
    const busy = await send(b, 'shared', 'turn-3', 'me too');
    assert.equal(busy.status, 409);
    assert.equal((await busy.json()).error.code, 'SESSION_BUSY');
    while (!(await reader.read()).done);

    const afterwards = await sessionView(b, 'shared');
    assert.equal(afterwards.session.activeTurn, null);
    assert.deepEqual(afterwards.session.terminalTurns.map((x) => x.turnId), ['turn-1', 'turn-2']);
    assert.equal(afterwards.messages.length, 4);
    assert.deepEqual(afterwards.streamMessages, afterwards.messages, "B's projection of the log equals the saved messages");
    const next = await send(b, 'shared', 'turn-3', 'and now?');
    assert.equal(next.status, 200, 'B continues the conversation A wrote');
    assert.equal(lastLine(await next.text()).payload.messages.length, 6);
    const fromA = await sessionView(a, 'shared');
    assert.equal(fromA.messages.length, 6);
    assert.deepEqual(fromA.streamMessages, fromA.messages, "A's projection of the log B wrote to equals the saved messages");
  });

  test(`${store}: client.turn.stop sent to one process stops the turn running on the other`, async (t) => {
    const [a, b] = await startPair(store, urlVar, clients);
    const running = await send(a, 'stop', 'turn-1', '/words 1000'); // 15 s of words unless stopped
    assert.equal(running.status, 200);
    const reader = running.body.getReader();
    await reader.read(); // the turn is under way on A
    const stop = await post(b, stopEvent('stop', 'turn-1'));
    assert.equal(stop.status, 202);
    assert.deepEqual((await stop.json()).stop, { version: 1, turnId: 'turn-1', state: 'stopping' });
    let text = '';
    const decoder = new TextDecoder();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true });
    const last = lastLine(text);
    assert.equal(last.event, 'server.turn.snapshot', "A's response ends with a snapshot");
    const answer = last.payload.messages.at(-1).content.split(' ');
    assert.ok(answer.length < 1000, `the turn stopped early (${answer.length} words)`);

    const view = await sessionView(b, 'stop');
    assert.deepEqual(view.session.terminalTurns.map((x) => [x.turnId, x.outcome]), [['turn-1', 'completed']]);
    assert.deepEqual(view.messages, last.payload.messages, 'the partial answer was saved');
    assert.deepEqual(view.streamMessages, view.messages, 'the log projects to the saved messages');
    const again = await post(a, stopEvent('stop', 'turn-1'));
    assert.equal(again.status, 200);
    assert.deepEqual((await again.json()).stop, { version: 1, turnId: 'turn-1', state: 'ended', outcome: 'completed' });
  });
}

/** Two serve.mjs processes on `store`, one per client library (tests use their own session ids). */
function startPair(store, urlVar, clients) {
  if (!pairs.has(store)) {
    const env = (client) => ({ TURNKEEP_STORE: store, [urlVar]: databases[store].url, TURNKEEP_CLIENT: client, DEMO_CHUNK_DELAY_MS: '15' });
    pairs.set(store, Promise.all(clients.map((client) => serveProcess(env(client)))));
  }
  return pairs.get(store);
}

/** Spawns serve.mjs with `env` on a free port; resolves once it printed its URL. */
function serveProcess(env) {
  const child = spawn(process.execPath, [SERVE], { env: { ...process.env, ...env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error('serve.mjs printed no URL')), SERVE_READY_MS_MAX);
    const fail = (error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${error.message}:\n${output}`));
    };
    child.stderr.setEncoding('utf8').on('data', (chunk) => (output += chunk));
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      output += chunk;
      const match = /listening on (\S+)/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      resolve({
        url: match[1],
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', done);
            child.kill('SIGTERM');
          }),
      });
    });
    child.once('exit', (code) => fail(new Error(`serve.mjs exited with ${code}`)));
  });
}

function send(server, sessionId, turnId, input) {
  return post(server, submitEvent({ sessionId, turnId, input }));
}

function post(server, event) {
  return fetch(`${server.url}api/chat`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify(event) });
}

function stopEvent(sessionId, turnId) {
  return { ...submitEvent({ sessionId, turnId }), eventId: `stop-${turnId}`, event: 'client.turn.stop', payload: {} };
}

async function sessionView(server, sessionId) {
  const response = await fetch(`${server.url}api/sessions/${sessionId}`, { headers: AUTH });
  assert.equal(response.status, 200);
  return response.json();
}

/** B's session view once `ready(view)` holds (polled: A publishes as it goes). */
async function viewUntil(server, sessionId, ready) {
  for (let attempt = 0; attempt < VIEW_POLLS_MAX; attempt += 1) {
    const view = await sessionView(server, sessionId);
    if (ready(view)) return view;
    await new Promise((resolve) => setTimeout(resolve, VIEW_POLL_MS));
  }
  throw new Error(`the session view of ${sessionId} never became ready`);
}

function lastLine(ndjson) {
  return JSON.parse(ndjson.trimEnd().split('\n').at(-1));
}
