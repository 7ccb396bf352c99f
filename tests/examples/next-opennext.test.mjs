// examples/next-opennext: a Next.js app on Cloudflare through OpenNext (@opennextjs/cloudflare),
// with turnkeep's Durable Objects mounted in OpenNext's custom Worker entry (worker.mjs). Built
// the way its README says (`opennextjs-cloudflare build`: next build, then OpenNext's bundle),
// with turnkeep installed from the packed tarball, and served by `wrangler dev` in workerd. The
// chat scenarios every example passes, then what it must show on top: the Next page rendered in
// workerd, a reload mid-answer resumes in Chromium, a restart keeps the history, and the size of
// the bundle `wrangler deploy` would upload.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

import { chatScenarios } from './scenarios.mjs';
import { checkRefusedSendKeepsText, checkReloadMidAnswer, checkStopKeepsAnswerSoFar } from './page-checks.mjs';
import { clean, EXAMPLES, installTarball, kB, packTurnkeep, printSizes, sizeOf, timed } from './harness.mjs';
import { ndjson, postTurn } from '../support/http-chat.mjs';
import { removeDir, tempDir } from '../support/temp-dir.mjs';
import { OFFLINE_ENV, startWranglerDev } from '../support/wrangler-dev.mjs';

const dir = join(EXAMPLES, 'next-opennext');
const env = { ...OFFLINE_ENV, NEXT_TELEMETRY_DISABLED: '1' };
/** Cloudflare's limit on a Worker's size on the free plan, gzip (the paid plans': 10 MiB). */
const WORKER_GZIP_BYTES_MAX = 3 * 1024 * 1024;
const SNAPSHOT = 'server.turn.snapshot';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const lastSnapshot = (lines) => lines.filter((l) => l.event === SNAPSHOT).at(-1);
let work;
let server;

const start = () => startWranglerDev({ cwd: dir, persistDir: join(work, 'state') });

before(async () => {
  work = tempDir('turnkeep-next-opennext-');
  installTarball(dir, packTurnkeep(work));
  clean(dir, ['.next', '.open-next', '.wrangler']);
  const seconds = timed(join(dir, 'node_modules/.bin/opennextjs-cloudflare'), ['build'], { cwd: dir, env });
  console.log(`[examples] next-opennext: opennextjs-cloudflare build ${seconds.toFixed(1)} s`);
  server = await start();
});
after(async () => {
  await server?.stop();
  if (work) removeDir(work);
});

const url = () => server.url;

chatScenarios(url, { clientLeaveStopsTurn: false });

test('the page: / redirects to a fresh session, whose page Next renders in workerd', async () => {
  const fresh = await fetch(`${url()}/`, { redirect: 'manual' });
  assert.equal(fresh.status, 307, 'Next\'s redirect()');
  const location = new URL(fresh.headers.get('location'), url());
  assert.match(location.search, /^\?session=s-[0-9a-f]{8}$/);
  await fresh.arrayBuffer();
  const page = await fetch(`${url()}/${location.search}`);
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.match(html, /<h1>turnkeep on Cloudflare \(Next\.js, OpenNext\)<\/h1>/);
  assert.match(html, /data-ready="0"/, 'server-rendered, before the browser connects');
  const script = /src="(\/_next\/static\/[^"]+\.js)"/.exec(html)?.[1];
  assert.ok(script, 'the page loads its scripts from /_next/static/');
  const asset = await fetch(`${url()}${script}`);
  assert.equal(asset.status, 200, `${script} is served from the assets`);
  await asset.arrayBuffer();
});

test('in Chromium: a reload mid-answer shows the answer so far at once, then the rest, every word once', async (t) => {
  await checkReloadMidAnswer(t, url(), 'section[data-ready="1"]');
});

test('in Chromium: a send refused while the answer runs shows the code and keeps the typed text', async (t) => {
  await checkRefusedSendKeepsText(t, url(), 'section[data-ready="1"]');
});

test('in Chromium: Stop ends the answer where it is, keeps it, and a reload shows it', async (t) => {
  await checkStopKeepsAnswerSoFar(t, url(), 'section[data-ready="1"]');
});

test('a restart of the server keeps the history, and the next turn runs on it', async () => {
  const first = lastSnapshot(await ndjson(await postTurn(url(), 'keeper', 'keep-s', 'remember me')));
  assert.equal(first.payload.status, 'complete');
  await server.stop();
  server = await start();
  const response = await fetch(`${url()}/api/chat/sessions/keep-s`, { headers: { authorization: 'Bearer keeper' } });
  assert.equal(response.status, 200);
  const snapshot = await response.json();
  assert.deepEqual(snapshot.messages.map((m) => m.content), ['remember me', 'echo: remember me']);
  const next = lastSnapshot(await ndjson(await postTurn(url(), 'keeper', 'keep-s', 'and now?')));
  assert.deepEqual(next.payload.messages.map((m) => m.content), ['remember me', 'echo: remember me', 'and now?', 'echo: and now?']);
});

test('the Worker wrangler would deploy (Next server and turnkeep) is under the free plan\'s 3 MiB (gzip)', () => {
  const out = join(work, 'deploy');
  timed(join(dir, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', out], { cwd: dir, env });
  const files = readdirSync(out, { recursive: true }).map((f) => join(out, f));
  const wasm = files.filter((f) => f.endsWith('.wasm'));
  // The chat server (turnkeep's pkg/) and the Durable Objects (pkg-worker/), once each.
  assert.equal(wasm.length, 2, `wasm files: ${wasm.join(', ')}`);
  const js = sizeOf(files.filter((f) => /\.m?js$/.test(f)));
  const wasmSize = sizeOf(wasm);
  printSizes('next-opennext Worker bundle', js, wasmSize);
  const gzip = js.gzip + wasmSize.gzip;
  console.log(`[examples] next-opennext: ${kB(gzip)} gzip in all, of ${kB(WORKER_GZIP_BYTES_MAX)} allowed`);
  assert.ok(gzip < WORKER_GZIP_BYTES_MAX, `${gzip} bytes gzip`);
});
