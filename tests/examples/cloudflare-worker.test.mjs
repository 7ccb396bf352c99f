// examples/cloudflare-worker: a user's own Worker on turnkeep's Durable Objects
// (`turnkeep/cloudflare`), with its own wrangler.toml, served by `wrangler dev` in workerd with
// turnkeep installed from the packed tarball. The chat scenarios every example passes, then
// what the Durable Objects add: a turn outlives its client, the page, the live log, the
// history across a restart of the server, and the bundle `wrangler deploy` would upload.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

import { chatScenarios } from './scenarios.mjs';
import { checkRefusedSendKeepsText, checkReloadMidAnswer, checkStopKeepsAnswerSoFar } from './page-checks.mjs';
import { clean, EXAMPLES, installTarball, kB, packTurnkeep, printSizes, sizeOf, timed } from './harness.mjs';
import { ndjson, postTurn, readUntil } from '../support/http-chat.mjs';
import { removeDir, tempDir } from '../support/temp-dir.mjs';
import { OFFLINE_ENV, startWranglerDev } from '../support/wrangler-dev.mjs';

const dir = join(EXAMPLES, 'cloudflare-worker');
/** Cloudflare's limit on a Worker's size on the free plan, gzip (the paid plans': 10 MiB). */
const WORKER_GZIP_BYTES_MAX = 3 * 1024 * 1024;
const SNAPSHOT = 'server.turn.snapshot';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let work;
let server;

const start = () => startWranglerDev({ cwd: dir, persistDir: join(work, 'state') });

before(async () => {
  work = tempDir('turnkeep-cloudflare-worker-');
  installTarball(dir, packTurnkeep(work));
  clean(dir, ['.wrangler', 'public']);
  timed('npm', ['run', 'build'], { cwd: dir }); // the page's client, copied from the installed package
  server = await start();
});
after(async () => {
  await server?.stop();
  if (work) removeDir(work);
});

const url = () => server.url;
const as = (user) => ({ authorization: `Bearer ${user}` });

/** GET /api/chat/sessions/:id as `user`: the session log's projection. */
async function snapshotOf(user, sessionId) {
  const response = await fetch(`${url()}/api/chat/sessions/${sessionId}`, { headers: as(user) });
  assert.equal(response.status, 200, await response.clone().text());
  return response.json();
}

chatScenarios(url, { clientLeaveStopsTurn: false });

test('a client that leaves mid-answer does not stop the turn: the whole answer is saved in the log', async () => {
  const controller = new AbortController();
  const response = await postTurn(url(), 'leaver', 'leave-s', '/words 60', { signal: controller.signal });
  assert.equal(response.status, 200);
  await readUntil(response, /"content":"w1 w2 w3/);
  controller.abort();
  const deadline = Date.now() + 15_000;
  let snapshot;
  do {
    await sleep(100);
    snapshot = await snapshotOf('leaver', 'leave-s');
  } while (snapshot.activeRunId !== null && Date.now() < deadline);
  assert.equal(snapshot.activeRunId, null, 'the turn never ended');
  assert.deepEqual(snapshot.messages.map((m) => m.role), ['user', 'assistant']);
  assert.match(snapshot.messages[1].content, / w60$/);
});

test('the live stream route serves the session log; another user reads nothing of it', async () => {
  const lines = await ndjson(await postTurn(url(), 'reader', 'live-s', 'hello log'));
  assert.equal(lines.at(-1).payload.status, 'complete');
  const response = await fetch(`${url()}/api/chat/stream/live-s?offset=-1`, { headers: as('reader') });
  assert.equal(response.status, 200);
  const chunks = await response.json();
  assert.ok(chunks.some((c) => c.type === 'RUN_FINISHED'), JSON.stringify(chunks.map((c) => c.type)));
  assert.ok(response.headers.get('stream-next-offset'), 'the read says where to continue');
  // Another tenant's stream of the same session id is another object: empty (or not there).
  const other = await fetch(`${url()}/api/chat/stream/live-s?offset=-1`, { headers: as('intruder') });
  const body = await other.text();
  assert.ok(other.status === 404 || !body.includes('hello log'), `${other.status} ${body}`);
  const anonymous = await fetch(`${url()}/api/chat/stream/live-s?offset=-1`);
  assert.equal(anonymous.status, 401);
  await anonymous.arrayBuffer();
});

/** A `client.turn.stop` or `client.confirmation.resolve` event of `sessionId`, as the page's client would send it. */
function event(sessionId, turnId, name, payload) {
  return JSON.stringify({
    protocol: 'agentskit.chat.turn', version: 1, eventId: `e-${name}-${Math.random().toString(36).slice(2)}`, sessionId, turnId,
    sequence: 0, emittedAt: new Date().toISOString(), event: name, payload,
  });
}
const postEvent = (user, body) => fetch(`${url()}/api/chat`, { method: 'POST', headers: { ...as(user), 'content-type': 'application/json' }, body });

test('a stop sent by another request ends the running turn early, and its answer is saved', async () => {
  const turnId = `stop-${Date.now()}`;
  const response = await fetch(`${url()}/api/chat`, {
    method: 'POST',
    headers: { ...as('stopper'), 'content-type': 'application/json' },
    body: event('stop-s', turnId, 'client.turn.submit', { input: '/words 2000' }),
  });
  assert.equal(response.status, 200);
  const sent = ndjson(response);
  await sleep(300);
  const stop = await postEvent('stopper', event('stop-s', turnId, 'client.turn.stop', {}));
  assert.equal(stop.status, 202);
  assert.deepEqual((await stop.json()).stop, { version: 1, turnId, state: 'stopping' });
  const last = lastSnapshot(await sent);
  assert.equal(last.payload.status, 'complete');
  const words = last.payload.messages[1].content.split(' ').length;
  assert.ok(words < 2000, `stopped early (${words} words)`);
});

test('an approval: the turn waits for a person, five racing decisions run the tool once', async () => {
  const lines = await ndjson(await postTurn(url(), 'payer', 'pay-s', '/confirm 250'));
  const record = lastSnapshot(lines).payload.confirmations[0];
  assert.equal(record.status, 'pending');
  await sleep(200); // the release stores the record just after the stream ends
  const answers = await Promise.all(['approve', 'reject', 'approve', 'approve', 'reject'].map(async (decision) => {
    const response = await postEvent('payer', event('pay-s', record.token, 'client.confirmation.resolve', { token: record.token, decision }));
    return response.headers.get('content-type').startsWith('application/x-ndjson') ? { streamed: await ndjson(response) } : { status: response.status, body: await response.json() };
  }));
  const winners = answers.filter((a) => a.streamed);
  assert.equal(winners.length, 1, JSON.stringify(answers.map((a) => a.body ?? 'stream')));
  const final = lastSnapshot(winners[0].streamed).payload;
  const results = final.messages.filter((m) => m.role === 'tool');
  assert.equal(results.length, 1);
  const approved = final.confirmations[0].status === 'approved';
  assert.equal(results[0].content, approved ? 'transferred 250' : 'A person rejected this tool call.');
  for (const loser of answers.filter((a) => !a.streamed)) assert.equal(loser.status, 200, JSON.stringify(loser.body));
});

test('the AI SDK routes are mounted: GET /api/ui/chat/:id/messages lists the conversation', async () => {
  await ndjson(await postTurn(url(), 'ui', 'ui-s', 'hello ui'));
  const response = await fetch(`${url()}/api/ui/chat/ui-s/messages`, { headers: as('ui') });
  assert.equal(response.status, 200);
  const { messages } = await response.json();
  assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant']);
});

test('the page: / redirects to a fresh session, which is served as HTML', async () => {
  const fresh = await fetch(`${url()}/`, { redirect: 'manual' });
  assert.equal(fresh.status, 302);
  const location = new URL(fresh.headers.get('location'));
  assert.match(location.search, /^\?session=s-[0-9a-f]{8}$/);
  const page = await fetch(`${url()}/${location.search}`);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<form>/);
});

test('in Chromium: a reload mid-answer shows the answer so far at once, then the rest, every word once', async (t) => {
  await checkReloadMidAnswer(t, url(), 'body[data-ready="1"]');
});

test('in Chromium: a send refused while the answer runs shows the code and keeps the typed text', async (t) => {
  await checkRefusedSendKeepsText(t, url(), 'body[data-ready="1"]');
});

test('in Chromium: Stop ends the answer where it is, keeps it, and a reload shows it', async (t) => {
  await checkStopKeepsAnswerSoFar(t, url(), 'body[data-ready="1"]');
});

test('a restart of the server keeps the history, and the next turn runs on it', async () => {
  const first = lastSnapshot(await ndjson(await postTurn(url(), 'keeper', 'keep-s', 'remember me')));
  assert.equal(first.payload.status, 'complete');
  await server.stop();
  server = await start();
  const snapshot = await snapshotOf('keeper', 'keep-s');
  assert.deepEqual(snapshot.messages.map((m) => m.content), ['remember me', 'echo: remember me']);
  const next = lastSnapshot(await ndjson(await postTurn(url(), 'keeper', 'keep-s', 'and now?')));
  assert.deepEqual(next.payload.messages.map((m) => m.content), ['remember me', 'echo: remember me', 'and now?', 'echo: and now?']);
});

test('the Worker wrangler would deploy is under the free plan\'s 3 MiB (gzip)', () => {
  const out = join(work, 'deploy');
  timed(join(dir, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', out], { cwd: dir, env: OFFLINE_ENV });
  const files = readdirSync(out, { recursive: true }).map((f) => join(out, f));
  const wasm = files.filter((f) => f.endsWith('.wasm'));
  // The chat server (turnkeep's pkg/) and the Durable Objects (pkg-worker/).
  assert.equal(wasm.length, 2, `wasm files: ${wasm.join(', ')}`);
  const js = sizeOf(files.filter((f) => /\.m?js$/.test(f)));
  const wasmSize = sizeOf(wasm);
  printSizes('cloudflare-worker Worker bundle', js, wasmSize);
  const gzip = js.gzip + wasmSize.gzip;
  console.log(`[examples] cloudflare-worker: ${kB(gzip)} gzip in all, of ${kB(WORKER_GZIP_BYTES_MAX)} allowed`);
  assert.ok(gzip < WORKER_GZIP_BYTES_MAX, `${gzip} bytes gzip`);
});

function lastSnapshot(lines) {
  return lines.filter((l) => l.event === SNAPSHOT).at(-1);
}
