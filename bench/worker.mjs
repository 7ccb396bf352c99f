// Benchmark of the demo Worker (a script, not a test): `node bench/worker.mjs [turns]`.
// Needs pkg/ (bash scripts/build.sh). Runs, in this one process:
//
// - `wrangler dev` (workerd) serving js/cloudflare/worker.mjs: each turn claims and releases
//   its lease in the session's ChatSession Durable Object (SQLite) and saves the messages there;
// - the same handler options on Node through `toNodeHandler` (js/node-bridge.mjs) with the
//   in-memory session storage and chat memory (nothing durable);
//
// both with the demo model at chunkDelayMs 0 and the same demo auth. Two workloads per host:
// `turns` sequential turns on one session (default 200), and the same number of turns spread
// over 8 sessions driven in parallel (each session sequential). Reported: turns/s, and the
// median and p99 time to the first snapshot line (request sent → first NDJSON line received),
// plus the Node/workerd ratio of each figure.
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';

import * as pkg from '../js/node.mjs';
import { submitEvent } from '../tests/support/chat-harness.mjs';
import { removeDir, tempDir } from '../tests/support/temp-dir.mjs';
import { startWranglerDev } from '../tests/support/wrangler-dev.mjs';

const TURNS = Number(process.argv[2] ?? 200);
const PARALLEL_SESSIONS = 8;
const WARMUP_TURNS = 20;
const INPUT = 'benchmark this turn please';
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const run = Date.now().toString(36);

/** The Node twin of the Worker: same auth, definition and handler, in-memory ports. */
function startNodeBridge() {
  const storage = pkg.createMemorySessionStorage();
  const memories = new Map();
  const model = pkg.createDemoModel({ chunkDelayMs: 0 });
  const handler = pkg.createChatHandler({
    authenticate(request) {
      const match = /^Bearer\s+(\S+)$/i.exec(request.headers.get('authorization') ?? '');
      if (match && SAFE_ID.test(match[1])) return { ok: true, context: { tenant: match[1] } };
      return { ok: false, response: new Response('{}', { status: 401 }) };
    },
    resolveDefinition({ tenant }, sessionId) {
      const key = `${tenant}/${sessionId}`;
      if (!memories.has(key)) memories.set(key, pkg.createMemoryChatMemory());
      return pkg.defineChat({ id: 'demo', revision: 1, model, memory: memories.get(key) });
    },
    // Session ids are unique per tenant here, so one store serves every tenant.
    sessionStorage: () => storage,
  });
  const server = createServer(pkg.toNodeHandler(handler));
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({ url: `http://127.0.0.1:${server.address().port}`, stop: () => new Promise((r) => server.close(r)) });
    });
  });
}

let turnCounter = 0;

/** One turn; returns ms to the first NDJSON line. Throws unless it is a complete 200 stream. */
async function turn(url, sessionId) {
  turnCounter += 1;
  const turnId = `t-${run}-${turnCounter}`;
  const body = JSON.stringify(submitEvent({ sessionId, turnId, input: INPUT, extra: { emittedAt: new Date().toISOString() } }));
  const started = performance.now();
  const response = await fetch(`${url}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
    body,
  });
  if (response.status !== 200) throw new Error(`turn answered ${response.status}: ${await response.text()}`);
  const reader = response.body.getReader();
  let firstLineMs;
  let tail = '';
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const text = decoder.decode(value, { stream: true });
    if (firstLineMs === undefined && text.includes('\n')) firstLineMs = performance.now() - started;
    tail = (tail + text).slice(-200);
  }
  if (!/"status":"complete"/.test(tail)) throw new Error(`turn did not complete: ${tail}`);
  return firstLineMs;
}

async function sequential(url, session, turns) {
  const firstLines = [];
  for (let i = 0; i < turns; i += 1) firstLines.push(await turn(url, session));
  return firstLines;
}

async function measure(url, label) {
  await sequential(url, `warmup-${run}-${label}`, WARMUP_TURNS);
  const results = {};
  let started = performance.now();
  let firstLines = await sequential(url, `seq-${run}-${label}`, TURNS);
  results.sequential = summary(firstLines, performance.now() - started);

  const perSession = Math.ceil(TURNS / PARALLEL_SESSIONS);
  started = performance.now();
  const lists = await Promise.all(
    Array.from({ length: PARALLEL_SESSIONS }, (_, i) => sequential(url, `par-${run}-${label}-${i}`, perSession)),
  );
  firstLines = lists.flat();
  results.parallel = summary(firstLines, performance.now() - started);
  return results;
}

function summary(firstLines, elapsedMs) {
  const sorted = [...firstLines].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  return { turns: sorted.length, turnsPerSecond: (sorted.length * 1000) / elapsedMs, medianMs: at(0.5), p99Ms: at(0.99) };
}

const state = tempDir('turnkeep-bench-');
const dev = await startWranglerDev({ persistDir: state, vars: { DEMO_CHUNK_DELAY_MS: '0' } });
const node = await startNodeBridge();
let workerd;
let bridge;
try {
  workerd = await measure(dev.url, 'workerd');
  bridge = await measure(node.url, 'node');
} finally {
  await dev.stop();
  await node.stop();
  removeDir(state);
}

const fmt = (n, digits = 2) => n.toFixed(digits).padStart(9);
console.log(`turnkeep demo Worker benchmark: demo model, chunkDelayMs 0, ${TURNS} turns per workload, node ${process.version}`);
console.log('workerd = wrangler dev 4.86.0 + ChatSession Durable Object (SQLite); node = toNodeHandler + in-memory storage\n');
console.log('workload                       host       turns/s   first line median ms   first line p99 ms');
for (const workload of ['sequential', 'parallel']) {
  const name = workload === 'sequential' ? `sequential, 1 session` : `parallel, ${PARALLEL_SESSIONS} sessions`;
  for (const [host, r] of [['workerd', workerd[workload]], ['node', bridge[workload]]]) {
    console.log(`${name.padEnd(30)} ${host.padEnd(8)} ${fmt(r.turnsPerSecond, 1)} ${fmt(r.medianMs)}              ${fmt(r.p99Ms)}`);
  }
  const w = workerd[workload];
  const n = bridge[workload];
  console.log(`${''.padEnd(30)} ${'ratio'.padEnd(8)} ${fmt(n.turnsPerSecond / w.turnsPerSecond)}x ${fmt(w.medianMs / n.medianMs)}x             ${fmt(w.p99Ms / n.p99Ms)}x   (node faster by)`);
}
