// createChatConnection in Node against the demo Worker in workerd (Miniflare): the rules of the
// live connection as a client sees them. Readers share one SSE read; cancelling one leaves its
// peers; the last one closes the read; dispose ends readers and sends; a later subscription
// resumes at the cursor with the replay state kept; a reader that joins gets what follows; a
// stream that does not exist yet (on the streams server itself) is polled with a growing delay; SSE reads closed by the server
// (every 300 ms here) and cut mid-event by a flaky network resume with no duplicate and no gap.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';

import { ChatConnectionError, createChatConnection, projectChatSnapshot } from '../../js/client/node.mjs';
import { resolveChatSnapshot } from '../../js/node.mjs';
import { postTurn, removeDir, startWorker, tempDir } from './harness.mjs';

const TOKEN = 'connection-test-token';
let worker;
let state;

before(async () => {
  state = tempDir('turnkeep-connection-');
  worker = await startWorker({
    persistDir: state,
    bindings: { STREAMS_TOKEN: TOKEN, DEMO_CHUNK_DELAY_MS: '10', STREAMS_SSE_MS: '300' },
  });
});
after(async () => {
  await worker?.stop();
  if (state) removeDir(state);
});

let sessions = 0;
const newSession = () => `conn-${process.pid}-${++sessions}`;

/** A fetch that records every request it sends and how each stream read ended. */
function recordingFetch(base = fetch) {
  const reads = [];
  const wrapped = async (request) => {
    const entry = { url: request.url, method: request.method, status: undefined, aborted: false };
    if (request.method === 'GET') reads.push(entry);
    request.signal.addEventListener('abort', () => (entry.aborted = true));
    const response = await base(request);
    entry.status = response.status;
    return response;
  };
  wrapped.reads = reads;
  wrapped.sse = () => reads.filter((r) => new URL(r.url).searchParams.get('live') === 'sse');
  return wrapped;
}

function connect(sessionId, { tenant = 'acme', fetch: fetchImpl, url = worker.url, ...options } = {}) {
  return createChatConnection({
    target: {
      url: `${url}/api/chat/stream/${sessionId}`,
      chatUrl: `${url}/api/chat`,
      sessionId,
      headers: { authorization: `Bearer ${tenant}` },
    },
    fetch: fetchImpl,
    ...options,
  });
}

/** Reads `iterable` into an array until `until(chunk, all)` holds (or the iterable ends). */
async function collect(iterable, until = () => false) {
  const chunks = [];
  for await (const chunk of iterable) {
    chunks.push(chunk);
    if (until(chunk, chunks)) break;
  }
  return chunks;
}

const runFinished = (chunk) => chunk.type === 'RUN_FINISHED' || chunk.type === 'RUN_ERROR';
const text = (chunks) => projectChatSnapshot(chunks).messages.filter((m) => m.role === 'assistant').map((m) => m.content);
const words = (n) => Array.from({ length: n }, (_, i) => `w${i + 1}`).join(' ');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** How often a test asks for the session view while it waits for a turn to end (100 ms apart). */
const VIEW_POLLS_MAX = 300;

test('readers share one SSE read, each gets the whole turn, and send() returns its final snapshot', async () => {
  const id = newSession();
  const recording = recordingFetch();
  const connection = connect(id, { fetch: recording });
  const readers = [1, 2, 3].map(() => collect(connection.subscribe(), runFinished));
  const { snapshot, turnId } = await connection.send('/words 30');
  assert.equal(snapshot.payload.status, 'complete');
  const results = await Promise.all(readers);
  for (const chunks of results) {
    assert.deepEqual(text(chunks), [words(30)]);
    assert.deepEqual(chunks, results[0], 'every reader saw the same chunks');
  }
  assert.equal(results[0][0].type, 'RUN_STARTED');
  assert.equal(results[0][0].runId, turnId);
  // One read at a time: each SSE request started only after the previous one ended (the server
  // closes them every 300 ms); never one per reader.
  const sse = recording.sse();
  assert.ok(sse.length >= 1);
  assert.ok(sse.length < 3 * 4, `${sse.length} reads`);
  connection.dispose();
});

test('cancelling one reader leaves its peers reading; cancelling the last closes the read', async () => {
  const id = newSession();
  const recording = recordingFetch();
  const connection = connect(id, { fetch: recording });
  const quitter = new AbortController();
  const stayer = new AbortController();
  const quitting = collect(connection.subscribe(quitter.signal));
  const staying = collect(connection.subscribe(stayer.signal), runFinished);
  const sending = connection.send('/words 40');
  // The quitter leaves mid-answer.
  await sleep(150);
  quitter.abort();
  const quitterChunks = await quitting;
  const stayerChunks = await staying;
  assert.deepEqual(text(stayerChunks), [words(40)], 'the peer read the whole answer');
  assert.ok(quitterChunks.length < stayerChunks.length, 'the quitter stopped early');
  await sending;
  // The stayer broke out of its loop (its iterator returned): it was the last reader, so the
  // read closed and nothing reads any more.
  await sleep(50);
  assert.ok(recording.sse().at(-1).aborted, 'the last read was aborted when the last reader left');
  const before = recording.sse().length;
  await sleep(700);
  assert.equal(recording.sse().length, before, 'no read starts without a reader');
  connection.dispose();
});

test('a later subscription resumes at the cursor with the replay state; a joining reader gets what follows', async () => {
  const id = newSession();
  const recording = recordingFetch();
  const connection = connect(id, { fetch: recording });
  const first = collect(connection.subscribe(), runFinished);
  await connection.send('first question');
  await first; // its loop broke: no reader left
  const cursor = connection.offset;
  assert.match(cursor, /^\d{16}_\d{16}$/);
  assert.deepEqual(connection.snapshot().messages.map((m) => m.content), ['first question', 'echo: first question']);

  const later = connection.subscribe();
  await sleep(50);
  const resumed = recording.sse().at(-1);
  assert.equal(new URL(resumed.url).searchParams.get('offset'), cursor, 'read again from the cursor');
  // A reader that joins the running subscription mid-turn gets the chunks after it joined.
  const sending = connection.send('/words 40');
  const all = [];
  let joining;
  for await (const chunk of later) {
    all.push(chunk);
    if (!joining && chunk.type === 'TEXT_MESSAGE_CONTENT' && /w\d/.test(chunk.delta)) {
      joining = collect(connection.subscribe(), runFinished);
    }
    if (runFinished(chunk)) break;
  }
  const joined = await joining;
  await sending;
  assert.deepEqual(text(all), [words(40)]);
  assert.equal(all[0].type, 'RUN_STARTED', 'no replay of the first turn');
  assert.ok(joined.length < all.length && joined.length > 0);
  assert.deepEqual(joined, all.slice(all.length - joined.length), 'the joiner got a suffix, in order');
  // The replay state holds both turns.
  assert.deepEqual(connection.snapshot().messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
  connection.dispose();
});

test('with no offset the whole log is replayed, with an offset only the suffix', async () => {
  const id = newSession();
  await (await postTurn(worker.url, 'acme', id, 'one')).text();
  // A server-side seed between the turns, as a page render takes it.
  const seed = await resolveChatSnapshot({
    target: { url: `${worker.url}/v1/stream/chat/acme/${id}`, headers: { authorization: `Bearer ${TOKEN}` } },
  });
  await (await postTurn(worker.url, 'acme', id, 'two')).text();

  const replay = connect(id);
  const all = await collect(replay.subscribe(), (chunk, chunks) => chunks.filter(runFinished).length === 2);
  assert.deepEqual(text(all), ['echo: one', 'echo: two']);
  replay.dispose();

  const suffix = connect(id, { initialOffset: seed.offset, initialMessages: seed.messages });
  const after = await collect(suffix.subscribe(), runFinished);
  assert.deepEqual(text(after), ['echo: two'], 'only what follows the offset');
  assert.equal(after[0].type, 'RUN_STARTED');
  assert.deepEqual(
    suffix.snapshot().messages.map((m) => m.content),
    ['one', 'echo: one', 'two', 'echo: two'],
    'the initial messages and the suffix make the whole conversation',
  );
  suffix.dispose();
});

test('a first subscribe on a stream that does not exist yet polls with a growing delay, then reads it', async () => {
  // Read from the streams server itself: the demo's chat-stream route never answers 404 (a read
  // of a session no turn has written yet creates its empty stream and waits on it live).
  const id = newSession();
  const recording = recordingFetch();
  const connection = createChatConnection({
    target: { url: `${worker.url}/v1/stream/chat/acme/${id}`, sessionId: id, headers: { authorization: `Bearer ${TOKEN}` } },
    fetch: recording,
  });
  const reading = collect(connection.subscribe(), runFinished);
  await sleep(1_600);
  const polls = recording.sse();
  assert.ok(polls.length >= 3 && polls.length <= 8, `${polls.length} polls in 1.6 s (100, 200, 400, 800 ms, jittered)`);
  assert.ok(polls.every((p) => p.status === 404));
  // Another client starts the session (this connection is not told: no nudge).
  await (await postTurn(worker.url, 'acme', id, 'hello')).text();
  const chunks = await reading;
  assert.deepEqual(text(chunks), ['echo: hello']);
  connection.dispose();
});

test('dispose ends every reader and aborts a send in flight; it is idempotent', async () => {
  const id = newSession();
  const connection = connect(id);
  const a = collect(connection.subscribe());
  const b = collect(connection.subscribe());
  const sending = connection.send('/words 200');
  await sleep(200);
  connection.dispose();
  connection.close();
  connection.stop();
  await Promise.all([a, b]); // both iterators ended
  await assert.rejects(sending, (error) => error.name === 'AbortError');
  assert.deepEqual(await collect(connection.subscribe()), [], 'a reader after dispose ends at once');
  await assert.rejects(connection.send('again'), /disposed/);
  // Disconnect is not stop: the turn ran on and finished on the server (polled: a loaded
  // machine runs the 200 words slower).
  const sessionView = async () => (await fetch(`${worker.url}/api/sessions/${id}`, { headers: { authorization: 'Bearer acme' } })).json();
  let view = await sessionView();
  for (let polls = 0; view.session.activeTurn && polls < VIEW_POLLS_MAX; polls += 1) {
    await sleep(100);
    view = await sessionView();
  }
  assert.equal(view.session.activeTurn, null, 'the turn ended');
  assert.equal(view.messages.at(-1).content, words(200));
});

test('SSE reads closed by the server and cut mid-event by the network resume with no duplicate and no gap', async () => {
  const id = newSession();
  const flaky = await startFlakyProxy(new URL(worker.url));
  try {
    const recording = recordingFetch();
    const connection = connect(id, { fetch: recording, url: flaky.url });
    const reading = collect(connection.subscribe(), runFinished);
    await connection.send('/words 120');
    const chunks = await reading;
    assert.deepEqual(text(chunks), [words(120)], 'every word exactly once, in order');
    const deltas = chunks.filter((c) => c.type === 'TEXT_MESSAGE_CONTENT').map((c) => c.delta).join('');
    assert.equal(deltas, `/words 120${words(120)}`);
    assert.ok(flaky.cuts >= 2, `${flaky.cuts} reads were cut mid-event`);
    assert.ok(recording.sse().length >= flaky.cuts + 1, `${recording.sse().length} SSE reads`);
    connection.dispose();
  } finally {
    await flaky.stop();
  }
});

/**
 * A loopback proxy in front of the Worker that cuts every second SSE read's connection in the
 * middle of an event (after its `event: data` line, before the control event), as a dropped
 * network does. Everything else passes through.
 */
async function startFlakyProxy(target) {
  let reads = 0;
  const proxy = {
    cuts: 0,
    url: '',
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
  const server = createServer((req, res) => {
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        const sse = /live=sse/.test(req.url) && answer.statusCode === 200;
        const cut = sse && ++reads % 2 === 0;
        let sent = '';
        answer.on('data', (bytes) => {
          if (!cut) return void res.write(bytes);
          sent += bytes.toString('utf8');
          const at = sent.indexOf('event: control', sent.indexOf('event: data'));
          if (sent.includes('event: data') && at > 0) {
            res.write(sent.slice(0, at)); // the data event, not its control event
            proxy.cuts++;
            answer.destroy();
            res.socket.destroy();
          } else if (!sent.includes('event: data')) {
            res.write(bytes);
            sent = '';
          }
        });
        answer.on('end', () => res.end());
        answer.on('error', () => res.destroy());
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy()); // the client went away (or the answer ended)
    req.pipe(upstream);
  });
  server.keepAliveTimeout = 1;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${server.address().port}`;
  return proxy;
}

test('a refused read and a refused send end with versioned diagnostics', async () => {
  const id = newSession();
  const refused = connect(id, { tenant: 'not a tenant' });
  await assert.rejects(collect(refused.subscribe()), (error) => {
    assert.ok(error instanceof ChatConnectionError);
    assert.equal(error.code, 'STREAM_REFUSED');
    assert.equal(error.status, 401);
    assert.equal(error.diagnostic.version, 1);
    return true;
  });
  await assert.rejects(refused.send('hi'), (error) => error.code === 'AUTH_REQUIRED' && error.status === 401);
  refused.dispose();

  const connection = connect(id);
  const running = connection.send('/words 200');
  await sleep(300);
  await assert.rejects(connection.send('me too'), (error) => {
    assert.equal(error.code, 'SESSION_BUSY');
    assert.equal(error.status, 409);
    assert.equal(error.retryable, true);
    return true;
  });
  // Any client of the session may stop the running turn.
  const other = connect(id);
  const turnId = await waitFor(() => other.snapshot().activeRunId, other);
  const stop = await other.stopTurn(turnId);
  assert.deepEqual(Object.keys(stop).sort(), ['state', 'turnId', 'version']);
  assert.equal(stop.state, 'stopping');
  const { snapshot } = await running;
  assert.equal(snapshot.payload.status, 'complete');
  assert.ok(snapshot.payload.messages.at(-1).content.length < words(200).length, 'stopped early');
  connection.dispose();
  other.dispose();
});

/** Reads `connection` until `value()` is truthy; returns it. */
async function waitFor(value, connection) {
  const controller = new AbortController();
  for await (const _ of connection.subscribe(controller.signal)) {
    if (value()) break;
  }
  return value();
}

test("the seed's target { sessionId, baseUrl } reaches the Worker's routes, asks authorize first, and checks the seed's identity", async () => {
  const id = newSession();
  const asked = [];
  const connection = createChatConnection({
    target: { sessionId: id, baseUrl: worker.url, headers: { authorization: 'Bearer acme' } },
    authorize: (request, sessionId) => (asked.push([request.method, new URL(request.url).pathname, sessionId]), sessionId === id),
    definitionRevision: 1,
  });
  const reader = collect(connection.subscribe(), runFinished);
  const { snapshot } = await connection.send('/words 5');
  assert.equal(snapshot.payload.status, 'complete');
  assert.deepEqual(text(await reader), [words(5)]);
  assert.ok(asked.some(([method, path]) => method === 'GET' && path === `/api/chat/stream/${id}`), JSON.stringify(asked));
  assert.ok(asked.some(([method, path]) => method === 'POST' && path === '/api/chat'), JSON.stringify(asked));
  assert.ok(asked.every(([, , sessionId]) => sessionId === id));
  connection.dispose();
  // A page prepared for this session continues from its seed; one prepared for another refuses it.
  const seed = { ...connection.snapshot(), definitionRevision: 1 };
  const next = createChatConnection({ target: { sessionId: id, baseUrl: worker.url, headers: { authorization: 'Bearer acme' } }, authorize: false, seed, definitionRevision: 1 });
  assert.equal(next.offset, seed.offset);
  next.dispose();
  assert.throws(
    () => createChatConnection({ target: { sessionId: newSession(), baseUrl: worker.url }, authorize: false, seed }),
    (error) => error.code === 'RENDER_FOREIGN_SESSION',
  );
});
