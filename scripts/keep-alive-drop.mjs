#!/usr/bin/env node
// Shows, with no turnkeep code involved, why the storm (tests/support/storm.mjs) resends a
// request whose connection dropped before any answer: workerd drops a keep-alive connection
// whose next request arrived within its 5 s idle limit but waited behind a blocked event loop
// past it (kj's HTTP pipeline timeout) — the request is never read, the client sees the socket
// close. The storm saturates the one workerd process, and the drops it saw (ECONNRESET or
// "other side closed" directly, wrangler dev's 503 "Your worker restarted mid-request" behind its
// proxy) each came on a connection idle since an answer ~5 s before.
//
// `node scripts/keep-alive-drop.mjs`: per case, a first POST, an idle pause, then a request that
// blocks the event loop (on another connection), then a second POST on the first connection.
import { Agent, request as httpRequest } from 'node:http';
import { serveWorkerd } from '../tests/support/workerd-serve.mjs';
import { removeDir, tempDir } from '../tests/support/temp-dir.mjs';

const WORKER = `export default {
  async fetch(request) {
    const url = new URL(request.url);
    await request.arrayBuffer();
    const until = Date.now() + Number(url.searchParams.get('blockMs') ?? 0);
    while (Date.now() < until) {} // a saturated event loop, in one request
    return new Response('ok');
  },
};`;
/** [idle before the second POST, how long the loop is blocked from then]: ms. */
const CASES = [[3000, 0], [3000, 1500], [1000, 2000], [3000, 4000], [4000, 3000]];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One request on `agent` (false: a connection of its own); resolves with the status, rejects when the connection drops. */
function send(url, { method = 'GET', body = '', agent = false } = {}) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const dir = tempDir('turnkeep-keep-alive-');
const served = await serveWorkerd({
  persistDir: dir, entry: 'keep-alive-drop.mjs', overrides: { 'keep-alive-drop.mjs': WORKER }, objects: [], compatibilityFlags: [],
});
try {
  for (const [idleMs, blockMs] of CASES) {
    const connection = new Agent({ keepAlive: true, maxSockets: 1 });
    await send(`${served.baseUrl}/`, { method: 'POST', body: 'first', agent: connection });
    const t0 = performance.now();
    await sleep(idleMs);
    const blocker = send(`${served.baseUrl}/?blockMs=${blockMs}`);
    await sleep(100);
    let outcome;
    try {
      outcome = `answered ${await send(`${served.baseUrl}/`, { method: 'POST', body: 'second', agent: connection })}`;
    } catch (error) {
      outcome = `dropped (${error.code ?? error.message})`;
    }
    await blocker;
    const doneMs = Math.round(performance.now() - t0);
    const loopFreeMs = idleMs + 100 + blockMs;
    console.log(`idle ${idleMs} ms, loop blocked until ${loopFreeMs} ms after the first answer: the second POST was ${outcome} at ${doneMs} ms`);
    connection.destroy();
  }
} finally {
  await served.stop();
  removeDir(dir);
}
