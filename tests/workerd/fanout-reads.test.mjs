// The live readers of one stream share the work of an append (issue 14, point 4): an append
// wakes every waiting reader (SSE responses and long-polls), and each of them answers from the
// rows the object already holds (src/cloudflare/streams/recent.rs), not from its own SQLite read.
// The Worker's test build is served by the workerd binary with TEST_HOOKS=1, and `GET /__test/stream-io/<name>`
// reports what the stream object's statements cost SQLite (its cursors' rowsRead/rowsWritten).
// The same appends run with one reader of each kind and with many: the rows read per append must
// not grow with the readers. The last test shows the count can see a read at all (a reader
// behind the rows kept in memory reads storage).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { serveWorkerd } from '../support/workerd-serve.mjs';
import { TEST_HOOKS_WORKER } from '../support/wrangler-dev.mjs';
import { removeDir, tempDir } from './harness.mjs';

const APPENDS = 8;
const MANY = 24; // readers of each kind (the limits admit more; 2 × 24 keeps the test quick)
const DELIVERY_MS_MAX = 15_000;
const state = tempDir('turnkeep-fanout-reads-');
let server;

before(async () => {
  server = await serveWorkerd({
    persistDir: state,
    entry: TEST_HOOKS_WORKER,
    vars: { STREAMS_PUBLIC: '1', TEST_HOOKS: '1', STREAMS_LONG_POLL_MS: '3000' },
  });
});
after(async () => {
  await server?.stop();
  removeDir(state);
});

const streamUrl = (name) => `${server.baseUrl}/v1/stream/${name}`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The stream object's SQL counts: `{ statements, rowsRead, rowsWritten }`. */
async function io(name) {
  const response = await fetch(`${server.baseUrl}/__test/stream-io/${name}`);
  assert.equal(response.status, 200, 'the test hook answers (TEST_HOOKS=1, the test build)');
  return response.json();
}

async function create(name, headers = { 'content-type': 'application/json' }) {
  const response = await fetch(streamUrl(name), { method: 'PUT', headers });
  assert.equal(response.status, 201);
  return response.headers.get('stream-next-offset');
}

/** A live SSE reader; `seen.offset` follows its control events. Resolves once attached. */
async function sseReader(name, signal) {
  const response = await fetch(`${streamUrl(name)}?offset=now&live=sse`, { signal });
  assert.equal(response.status, 200);
  const seen = { offset: null };
  (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const bytes of response.body) {
      buffer += decoder.decode(bytes, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (event.startsWith('event: control')) seen.offset = JSON.parse(event.slice(event.indexOf('data:') + 5)).streamNextOffset;
      }
    }
  })().catch(() => {}); // aborted at the end
  return seen;
}

/** A long-poll reader from `offset`, polling again after every answer, until aborted. */
function longPollReader(name, offset, signal) {
  const seen = { offset };
  (async () => {
    while (!signal.aborted) {
      const response = await fetch(`${streamUrl(name)}?offset=${seen.offset}&live=long-poll`, { signal });
      await response.arrayBuffer();
      assert.ok(response.status === 200 || response.status === 204, `long-poll: HTTP ${response.status}`);
      seen.offset = response.headers.get('stream-next-offset');
    }
  })().catch(() => {});
  return seen;
}

/**
 * `perKind` SSE and `perKind` long-poll readers on a new stream, then APPENDS appends one at a
 * time, each until every reader has it. Returns the stream's SQL counts over the appends.
 */
async function appendsWithReaders(name, perKind, headers) {
  const tail = await create(name, headers);
  const stop = new AbortController();
  const readers = await Promise.all(Array.from({ length: perKind }, () => sseReader(name, stop.signal)));
  for (let i = 0; i < perKind; i++) readers.push(longPollReader(name, tail, stop.signal));
  await sleep(300); // the long-polls reach the object and wait (one that arrives late reads too)
  const start = await io(name);
  try {
    for (let i = 0; i < APPENDS; i++) {
      const response = await fetch(streamUrl(name), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ i, text: `append ${i}` }),
      });
      assert.equal(response.status, 204);
      const next = response.headers.get('stream-next-offset');
      const deadline = Date.now() + DELIVERY_MS_MAX;
      while (readers.some((r) => r.offset !== next)) {
        assert.ok(Date.now() < deadline, `append ${i}: ${readers.filter((r) => r.offset !== next).length} readers never got it`);
        await sleep(2);
      }
    }
    const end = await io(name);
    return {
      rowsRead: (end.rowsRead - start.rowsRead) / APPENDS,
      rowsWritten: (end.rowsWritten - start.rowsWritten) / APPENDS,
      statements: (end.statements - start.statements) / APPENDS,
    };
  } finally {
    stop.abort();
  }
}

/**
 * Rows read and statements per append, 1+1 readers against MANY+MANY: they must not grow, but for
 * `slack` (a bound that does not depend on the readers). Re-reading per reader adds ~2 × MANY.
 */
async function checkShared(t, tag, headers, slack = 0) {
  const one = await appendsWithReaders(`${tag}-1`, 1, headers);
  const many = await appendsWithReaders(`${tag}-${MANY}`, MANY, headers);
  const figures = `per append: 1+1 readers ${JSON.stringify(one)}, ${MANY}+${MANY} readers ${JSON.stringify(many)}`;
  t.diagnostic(figures);
  assert.ok(one.rowsWritten >= 1, `the counts see the appends' writes (${figures})`);
  assert.ok(many.rowsRead <= one.rowsRead + slack, `rows read grew with the readers (${figures})`);
  assert.ok(many.statements <= one.statements + slack, `statements grew with the readers (${figures})`);
}

test('the readers an append wakes (SSE and long-poll) share its rows: SQLite rows read per append do not grow with the readers', (t) =>
  checkShared(t, 'plain'));

test('... nor on a sliding-TTL stream, which every read renews (the renewal is not written per reader)', (t) =>
  // Slack 1: on a loaded machine a reader may come back more than STREAM_TTL_RENEWAL_UNSAVED_MS_MAX
  // after the append, and that renewal is saved once for all the readers then.
  checkShared(t, 'ttl', { 'content-type': 'application/json', 'stream-ttl': '3600' }, 1));

test('a reader behind the rows kept in memory reads them from storage, and the count shows it', async () => {
  const name = 'behind';
  await create(name, { 'content-type': 'application/octet-stream' });
  const row = new Uint8Array(120 * 1024).fill(7); // 3 rows: more than the 256 KiB kept in memory
  for (let i = 0; i < 3; i++) {
    const response = await fetch(streamUrl(name), { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: row });
    assert.equal(response.status, 204);
  }
  const start = await io(name);
  const read = await fetch(`${streamUrl(name)}?offset=-1`);
  assert.equal(read.status, 200);
  assert.equal((await read.arrayBuffer()).byteLength, 3 * row.length);
  const end = await io(name);
  assert.ok(end.rowsRead - start.rowsRead >= 3, `a catch-up from the start read ${end.rowsRead - start.rowsRead} rows`);
});
