// The hostile-input corpus (tests/fixtures/hostile/corpus.json) against the real Worker in
// workerd: chat, the session view and the other demo routes, the Durable Streams routes and the
// chat-stream route, Ask and the sandbox. Every request gets its registry row as a versioned
// diagnostic with nothing internal in it; after each one the Worker still answers, and nothing
// was stored (the session is empty, the stream absent or unchanged).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { serveWorkerd } from '../support/workerd-serve.mjs';
import { REFUSED_BODY_BYTES, corpus, refusedBodyThenNext, runCorpus } from '../support/hostile.mjs';
import { removeDir, tempDir } from './harness.mjs';

const TOKEN = 'hostile-streams-token';
const TENANT = 'hostile';
const state = tempDir('turnkeep-hostile-');
let server;

before(async () => {
  server = await serveWorkerd({ persistDir: state, vars: { STREAMS_TOKEN: TOKEN } });
});
after(async () => {
  await server?.stop();
  removeDir(state);
});

/** The Worker's routes for each entry: the streams token where the entry does not test it. */
function forWorker(entry) {
  if (!entry.path.startsWith('/v1/stream/') || entry.private) return entry;
  return { ...entry, headers: { ...entry.headers, authorization: `Bearer ${TOKEN}` } };
}

const streamUrl = (sid) => `${server.baseUrl}/v1/stream/${sid}`;
const auth = { authorization: `Bearer ${TOKEN}` };

async function stillUp() {
  const page = await fetch(`${server.baseUrl}/`);
  await page.arrayBuffer();
  return page.status === 200 ? [] : [`the Worker answered GET / with ${page.status}`];
}

async function nothingStored(entry, sid) {
  const out = await stillUp();
  const view = await fetch(`${server.baseUrl}/api/sessions/${sid}`, { headers: { authorization: `Bearer ${TENANT}` } });
  const body = await view.json();
  if (view.status !== 200) out.push(`session view ${view.status}`);
  else if (body.messages.length !== 0 || body.session.cursor !== 0) out.push(`session ${sid} was written: ${JSON.stringify(body.session)}`);
  const head = await fetch(streamUrl(sid), { method: 'HEAD', headers: auth });
  if (entry.setup === 'stream') {
    if (head.headers.get('stream-next-offset') !== '0000000000000000_0000000000000000') out.push(`stream ${sid} was appended to`);
  } else if (head.status !== 404) {
    out.push(`stream ${sid} exists (${head.status})`);
  }
  return out;
}

test(`every hostile request gets its versioned diagnostic, leaks nothing, stores nothing (${corpus.entries.length} requests)`, async () => {
  const entries = corpus.entries.map(forWorker);
  const sid = (i) => `hostile-${i}`;
  for (const [i, entry] of entries.entries()) {
    if (entry.setup !== 'stream') continue;
    const created = await fetch(streamUrl(sid(i)), { method: 'PUT', headers: { ...auth, 'content-type': 'text/plain' } });
    assert.equal(created.status, 201, entry.name);
  }
  const failures = await runCorpus(server.baseUrl, entries, { tenant: TENANT, sid, afterEach: nothingStored });
  assert.deepEqual(failures, []);
});

test(`a refused ${REFUSED_BODY_BYTES / 1048576} MB body leaves the keep-alive connection usable on every route`, async () => {
  assert.deepEqual(await refusedBodyThenNext(server.baseUrl), []);
});
