// The session stream Worker on real workerd (wrangler dev), driven by the real Durable Streams
// client (@durable-streams/client, pinned): create, append through an idempotent producer, read
// back, follow live over SSE and long-poll, and resume from a saved offset after the local
// runtime is restarted on the same persisted storage (producer fencing state survives it too).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DurableStream, IdempotentProducer } from '@durable-streams/client';
import { removeDir, startWorker, tempDir } from '../streams-conformance/harness.mjs';

// SSE responses are closed by the server after 2 s here (60 s by default), so a live reader's
// reconnection from its last offset is exercised too.
const VARS = { STREAMS_PUBLIC: '1', STREAMS_LONG_POLL_MS: '1000', STREAMS_SSE_MS: '2000' };
let dir;
let worker;

before(async () => {
  dir = tempDir();
  worker = await startWorker({ persistDir: dir, vars: VARS });
});

after(async () => {
  await worker?.stop();
  if (dir) removeDir(dir);
});

/**
 * Ends a live read by aborting its signal, then waits for the client to settle the read's
 * `closed`. An abort that lands while the client is reconnecting (the server closes SSE every
 * 2 s here) settles it as a rejection with the client's own abort error; anything else fails.
 */
async function endLive(live, controller) {
  controller.abort();
  await live.closed.catch((error) => {
    if (error?.name !== 'FetchBackoffAbortError') throw error;
  });
}

const unique = (label) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
const streamUrl = (name) => `${worker.baseUrl}/v1/stream/${name}`;

test('create, append through an idempotent producer, read back in order', async () => {
  const handle = await DurableStream.create({ url: streamUrl(unique('client-json')), contentType: 'application/json' });
  const producer = new IdempotentProducer(handle, 'writer-1', { epoch: 0, lingerMs: 2 });
  const values = Array.from({ length: 50 }, (_, i) => ({ i, text: `message ${i}` }));
  for (const value of values) producer.append(JSON.stringify(value));
  await producer.flush();
  await producer.detach();

  const read = await handle.stream({ offset: '-1', live: false });
  assert.deepEqual(await read.json(), values);
  const head = await handle.head();
  assert.equal(head.exists, true);
  assert.equal(head.offset, read.offset, 'a full read ends at the tail HEAD reports');
});

test('a live SSE reader receives appends made after it subscribed', async () => {
  const handle = await DurableStream.create({ url: streamUrl(unique('client-sse')), contentType: 'text/plain' });
  await handle.append('before|');
  const controller = new AbortController();
  const live = await handle.stream({ offset: '-1', live: 'sse', signal: controller.signal });
  let seen = '';
  const done = new Promise((resolve) => {
    live.subscribeText(({ text }) => {
      seen += text;
      if (seen.includes('third|')) resolve();
    });
  });
  await handle.append('first|');
  await handle.append('second|');
  await handle.append('third|');
  await done;
  await endLive(live, controller);
  assert.equal(seen, 'before|first|second|third|');
});

test('a live SSE reader keeps following across server-side closes of its connection', async () => {
  const handle = await DurableStream.create({ url: streamUrl(unique('client-sse-reconnect')), contentType: 'application/json' });
  const controller = new AbortController();
  let connections = 0;
  const countingFetch = (input, init) => {
    if (String(input instanceof Request ? input.url : input).includes('live=sse')) connections += 1;
    return fetch(input, init);
  };
  const reader = new DurableStream({ url: handle.url, contentType: 'application/json', fetch: countingFetch });
  const live = await reader.stream({ offset: '-1', live: 'sse', signal: controller.signal });
  const got = [];
  const done = new Promise((resolve) => {
    live.subscribeJson(({ items }) => {
      got.push(...items);
      if (got.length >= 4) resolve();
    });
  });
  for (const n of [1, 2, 3, 4]) {
    await handle.append(JSON.stringify({ n }));
    await new Promise((r) => setTimeout(r, 1500)); // 6 s in all: the server closes the SSE response 2+ times
  }
  await done;
  await endLive(live, controller);
  assert.deepEqual(got, [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }], 'each message once, in order');
  assert.ok(connections >= 3, `the server closed the SSE response and the reader reconnected (${connections} connections)`);
});

test('a long-poll reader receives appends made while it waits', async () => {
  const handle = await DurableStream.create({ url: streamUrl(unique('client-lp')), contentType: 'application/json' });
  const controller = new AbortController();
  const live = await handle.stream({ offset: 'now', live: 'long-poll', signal: controller.signal });
  const got = [];
  const done = new Promise((resolve) => {
    live.subscribeJson(({ items }) => {
      got.push(...items);
      if (got.length >= 3) resolve();
    });
  });
  for (const n of [1, 2, 3]) {
    await new Promise((r) => setTimeout(r, 100));
    await handle.append(JSON.stringify({ n }));
  }
  await done;
  await endLive(live, controller);
  assert.deepEqual(got, [{ n: 1 }, { n: 2 }, { n: 3 }]);
});

test('a reader resumes from its saved offset after the runtime restarts', async () => {
  const url = () => streamUrl('client-resume');
  const handle = await DurableStream.create({ url: url(), contentType: 'text/plain' });
  await handle.append('one|');
  await handle.append('two|');
  const first = await handle.stream({ offset: '-1', live: false });
  assert.equal(await first.text(), 'one|two|');
  const saved = first.offset;
  const fenced = (epoch, seq) =>
    fetch(url(), {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'producer-id': 'w', 'producer-epoch': String(epoch), 'producer-seq': String(seq) },
      body: `w${epoch}.${seq}|`,
    });
  assert.equal((await fenced(1, 0)).status, 200);

  await worker.stop();
  worker = await startWorker({ persistDir: dir, vars: VARS });

  // Producer state survived the restart: the old epoch is still fenced, the replay still deduplicated.
  assert.equal((await fenced(0, 5)).status, 403);
  assert.equal((await fenced(1, 0)).status, 204);

  const again = new DurableStream({ url: url(), contentType: 'text/plain' });
  await again.append('three|');
  const resumed = await again.stream({ offset: saved, live: false });
  assert.equal(await resumed.text(), 'w1.0|three|', 'only what came after the saved offset');
  const whole = await again.stream({ offset: '-1', live: false });
  assert.equal(await whole.text(), 'one|two|w1.0|three|', 'the data before the restart is still there');
});
