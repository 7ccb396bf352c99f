#!/usr/bin/env node
// Shows, with no turnkeep code involved, why the storm's client (tests/support/storm.mjs) asks
// for uncompressed answers: Node's fetch can leave `response.text()` pending for ever when the
// request's signal aborts while a gzip body is being decoded (nodejs/undici#4089). The storm
// aborts requests on purpose, and the demo Worker's JSON answers (the 409 a busy session gets)
// come gzipped when the client accepts gzip; that hung the storm test in CI twice.
//
// `node scripts/fetch-gzip-abort.mjs [ms]`: for `ms` (default 10 s) per encoding, batches of
// requests to a local server that answers 409 with a small JSON body sent in two writes; each
// client aborts 0–4 ms into `text()`. Prints how the reads ended: `ok`, `rejected`, or `pending`
// (still unsettled TEXT_SETTLE_MS_MAX after the abort: the hang).
import { createServer } from 'node:http';
import { gzipSync } from 'node:zlib';

const BODY = JSON.stringify({ error: { code: 'TURN_BUSY', message: 'a turn is already running'.repeat(3) } });
const BODY_GZIP = gzipSync(BODY);
/** How long an aborted read may stay unsettled before it counts as hung. */
const TEXT_SETTLE_MS_MAX = 3000;
const BATCH = 20;
const durationMs = Number(process.argv[2] ?? 10_000);

const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    const gzip = /gzip/.test(request.headers['accept-encoding'] ?? '');
    const bytes = gzip ? BODY_GZIP : Buffer.from(BODY);
    response.writeHead(409, { 'content-type': 'application/json', ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
    response.write(bytes.subarray(0, 10)); // the gzip header alone, then the rest a moment later
    setTimeout(() => response.end(bytes.subarray(10)), Math.random() * 3);
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/`;

/** One request aborted during `text()`: 'ok' | 'rejected' | 'pending' | 'fetch rejected'. */
async function once(acceptEncoding) {
  const controller = new AbortController();
  let response;
  try {
    response = await fetch(url, { method: 'POST', body: '{}', headers: { 'accept-encoding': acceptEncoding }, signal: controller.signal });
  } catch {
    return 'fetch rejected';
  }
  const abort = setTimeout(() => controller.abort(), Math.random() * 4);
  const read = response.text().then(() => 'ok', () => 'rejected');
  let timer;
  const pending = new Promise((resolve) => { timer = setTimeout(() => resolve('pending'), TEXT_SETTLE_MS_MAX); });
  const outcome = await Promise.race([read, pending]);
  clearTimeout(abort);
  clearTimeout(timer);
  return outcome;
}

for (const acceptEncoding of ['gzip, deflate', 'identity']) {
  const counts = {};
  const until = Date.now() + durationMs;
  while (Date.now() < until) {
    for (const outcome of await Promise.all(Array.from({ length: BATCH }, () => once(acceptEncoding)))) {
      counts[outcome] = (counts[outcome] ?? 0) + 1;
    }
  }
  console.log(`accept-encoding: ${acceptEncoding.padEnd(13)} ${JSON.stringify(counts)}`);
}
// Hung reads keep their sockets: end here rather than wait for them.
process.exit(0);
