// Benchmark of a whole chat turn (a script, not a test): `node bench/turn.mjs [turns]`.
// Needs pkg/ and the test build pkg-worker-test/ (bash scripts/build.sh). Everything below is measured in this one process, the
// handlers interleaved turn by turn, a new session per turn, the same JS echo model (an
// AgentsKit-style adapter for the baseline, a `stream()` model for turnkeep; one async generator
// behind both), the same in-memory CAS storage (JSON text) and a memory that keeps nothing.
//
// 1. Per turn, 3-chunk and 200-chunk turns: turnkeep's createChatHandler against the TypeScript
//    baseline (bench/baseline/chat-handler.ts: AgentsKit's handler as the wire facts describe it,
//    one CAS save per snapshot) and against a handler that only streams turnkeep's bytes (the
//    same lines, precomputed: the cost of the bytes themselves) and the host floor (the same
//    host calls, model and bytes with no logic: what any handler doing this job pays in the
//    host's objects). Medians and p90, ratios.
//    With TURNKEEP_BASE_PKG=<dir of another pkg/ build> that build runs interleaved too (A/B).
//    With AGENTSKIT_SERVER=<bundle> (bench/agentskit/build.sh) AgentsKit Chat's own handler does too.
// 2. Server work per chunk on the 200-chunk turn beyond the bytes written (and beyond the model).
// 3. Snapshots: states offered to the reader vs lines emitted, messages encoded vs reused.
// 4. Memory per 1,000 turns: JS heap growth (after GC) and wasm linear memory, per handler.
// 5. With a session log (createMemorySessionLog): cost per chunk, log calls per chunk.
// 6. Host objects per turn (timers, AbortControllers, abort listeners), per handler.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { transformSync } from 'esbuild';

import * as pkg from '../js/node.mjs';
import * as glue from '../pkg/turnkeep.js';
import { chatRequest, submitEvent } from '../tests/support/chat-harness.mjs';
import { rng } from '../tests/support/rng.mjs';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

const TURNS = Number(process.argv[2] ?? 400);
const WARMUP = 50;
const HEAP_TURNS = 1_000;
const SHORT = { name: '3-chunk', input: 'hello world', chunks: 3 };
const LONG = { name: '200-chunk', input: '/words 200', chunks: 200 };

// ---- the shared model, storage and memory

/** The echo model's text chunks for an input: `/words N` → `w1 … wN`, else `echo: <input>`. */
function echoChunks(input) {
  const words = /^\/words (\d+)$/.exec(input);
  if (words) return Array.from({ length: Number(words[1]) }, (_, i) => (i === 0 ? 'w1' : ` w${i + 1}`));
  return ['echo:', ...input.split(' ').map((w) => ` ${w}`)];
}

const lastUserText = (messages) => messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';

async function* echo(input, field) {
  for (const text of echoChunks(input)) {
    await Promise.resolve(); // a model yields asynchronously
    yield { type: 'text', [field]: text };
  }
}

const turnkeepModel = { stream: (request) => echo(lastUserText(request.messages), 'text') };
const agentskitAdapter = { createSource: (request) => ({ stream: () => echo(lastUserText(request.messages), 'content') }) };

/** CAS storage over JSON text, as a host would keep it (both handlers read text back). */
function casStorage() {
  const rows = new Map();
  return {
    rows,
    saves: 0,
    async load(sessionId) {
      return rows.get(sessionId);
    },
    async save(snapshot, expectedCursor) {
      this.saves += 1;
      const text = typeof snapshot === 'string' ? snapshot : JSON.stringify(snapshot);
      const { sessionId, cursor } = JSON.parse(text);
      const stored = rows.get(sessionId);
      const current = stored === undefined ? undefined : JSON.parse(stored).cursor;
      if ((expectedCursor ?? undefined) !== current) return false;
      if (cursor === undefined) return false;
      rows.set(sessionId, text);
      return true;
    },
  };
}

const forgetfulMemory = () => ({ load: async () => [], save: async () => {} });

// ---- the handlers

function turnkeepHandler(api, { sessionLog } = {}) {
  const storage = casStorage();
  const definition = api.defineChat({ id: 'bench', revision: 1, model: turnkeepModel, memory: forgetfulMemory() });
  const handler = api.createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => storage, sessionLog });
  return { handler, storage };
}

async function tsBaselineFactory() {
  const source = readFileSync(new URL('./baseline/chat-handler.ts', import.meta.url), 'utf8');
  const { code } = transformSync(source, { loader: 'ts', format: 'esm', target: 'node20' });
  return (await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`)).createChatHandler;
}

/** The TS baseline, or (given `createChatHandler`) AgentsKit's own handler, on the same ports. */
async function baselineHandler(createChatHandler) {
  createChatHandler ??= await tsBaselineFactory();
  const storage = casStorage();
  const definition = { id: 'bench', revision: 1, chat: { adapter: agentskitAdapter, memory: forgetfulMemory() } };
  return { handler: createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => storage }), storage };
}

/** Streams the given lines and nothing else: the cost of the bytes themselves. */
function bytesHandler(lines) {
  const encoded = lines.map((line) => new TextEncoder().encode(`${line}\n`));
  const handler = async () => {
    let i = 0;
    const body = new ReadableStream(
      { pull: (c) => (i < encoded.length ? c.enqueue(encoded[i++]) : c.close()) },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: 200, headers: { 'content-type': 'application/x-ndjson; charset=utf-8' } });
  };
  return { handler, storage: casStorage() };
}

/**
 * The host floor: what any handler doing this job costs in the host's own objects, with no logic
 * of its own: the body read and parsed, a deadline (an AbortController and a timer), the session
 * loaded and claimed, the history loaded, the model iterated, the given lines streamed through a
 * pull stream as the model yields (one per state, precomputed), the messages saved and the lease
 * released. Nothing is validated, encoded or decided. No handler can be faster than this here.
 */
function hostFloorHandler(lines, input) {
  const encoded = lines.map((line) => new TextEncoder().encode(`${line}\n`));
  const storage = casStorage();
  const memory = forgetfulMemory();
  const handler = async (request) => {
    const event = JSON.parse(await request.text());
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), 30_000);
    const { sessionId } = event;
    await storage.load(sessionId);
    await storage.save(`{"sessionId":"${sessionId}","cursor":1}`, undefined);
    await memory.load(sessionId, { signal: deadline.signal });
    const chunks = echo(input, 'text')[Symbol.asyncIterator]();
    let i = 0;
    const body = new ReadableStream(
      {
        async pull(c) {
          if (i > 0 && i < encoded.length - 1) await chunks.next();
          if (i < encoded.length) return c.enqueue(encoded[i++]);
          await memory.save(sessionId, [], { signal: deadline.signal });
          await storage.save(`{"sessionId":"${sessionId}","cursor":2}`, 1);
          clearTimeout(timer);
          c.close();
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: 200, headers: { 'content-type': 'application/x-ndjson; charset=utf-8' } });
  };
  return { handler, storage };
}

// ---- timing

let sessionCounter = 0;

/** A submit of `input` to a new session. */
function nextRequest(input) {
  sessionCounter += 1;
  return chatRequest(submitEvent({ sessionId: `s${sessionCounter}`, turnId: 't1', input }));
}

/** One turn from `handler(request)` to the end of the body; a new session each time. */
async function timeTurn(handler, input) {
  const request = nextRequest(input);
  const t0 = performance.now();
  const response = await handler(request);
  const reader = response.body.getReader();
  let bytes = 0;
  const parts = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    parts.push(value);
  }
  const us = (performance.now() - t0) * 1000;
  if (response.status !== 200) throw new Error(`status ${response.status}`);
  return { us, bytes, parts };
}

const linesOf = (parts) => Buffer.concat(parts).toString('utf8').trimEnd().split('\n');
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: quantile(s, 0.5), p90: quantile(s, 0.9) };
};

function table(title, header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padStart(widths[i])).join(' | ')} |`;
  console.log(`\n${title}`);
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(r));
}

/**
 * Runs every handler once per round, in an order shuffled each round; returns times per handler.
 * Not a rotation: a rotation keeps each handler behind the same neighbour, and a turn pays for
 * the garbage the turn before it left (an A/A run of two copies of one build, rotated, had the
 * copy behind AgentsKit's handler 2–5% slower than the one behind the host floor).
 */
async function interleaved(handlers, input, rounds) {
  const times = handlers.map(() => []);
  const bytes = handlers.map(() => 0);
  const random = rng(0x7e4a);
  const order = handlers.map((_, i) => i);
  for (let n = 0; n < WARMUP + rounds; n += 1) {
    random.shuffle(order);
    for (const i of order) {
      const r = await timeTurn(handlers[i].handler, input);
      if (n >= WARMUP) {
        times[i].push(r.us);
        bytes[i] += r.bytes;
      }
    }
  }
  return handlers.map((h, i) => ({ name: h.name, ...stats(times[i]), bytes: bytes[i] / rounds }));
}

async function modelOnlyUs(input, rounds) {
  const times = [];
  for (let n = 0; n < WARMUP + rounds; n += 1) {
    const t0 = performance.now();
    for await (const _ of echo(input, 'text'));
    if (n >= WARMUP) times.push((performance.now() - t0) * 1000);
  }
  return stats(times).median;
}

// ---- memory

async function heapPerThousand(make, input) {
  const { handler, storage } = await make();
  for (let n = 0; n < WARMUP; n += 1) await timeTurn(handler, input);
  storage.rows.clear();
  gc();
  gc();
  const wasmBefore = wasmMemoryBytes();
  const heapBefore = process.memoryUsage().heapUsed;
  for (let n = 0; n < HEAP_TURNS; n += 1) await timeTurn(handler, input);
  const kept = storage.rows.size;
  storage.rows.clear(); // what the sessions keep is the host's; the handler's own growth remains
  await new Promise((resolve) => setTimeout(resolve, 10));
  gc();
  gc();
  return {
    heapKb: (process.memoryUsage().heapUsed - heapBefore) / 1024,
    wasmKb: (wasmMemoryBytes() - wasmBefore) / 1024,
    kept,
  };
}

function wasmMemoryBytes() {
  // The glue is initialised by js/node.mjs already; initSync then returns its exports.
  return glue.initSync().memory.buffer.byteLength;
}

// ---- main

console.log(`turn benchmark — Node ${process.version}, ${TURNS} turns per row after ${WARMUP} warm-up, interleaved`);
const base = process.env.TURNKEEP_BASE_PKG;
let baseApi;
if (base) {
  const baseGlue = await import(new URL(`file://${base}/turnkeep.js`).href);
  baseGlue.initSync({ module: readFileSync(`${base}/turnkeep_bg.wasm`) });
  baseApi = { ...baseGlue, defineChat: pkg.defineChat };
}

// AGENTSKIT_SERVER=<bundle of bench/agentskit/build.sh>: AgentsKit Chat's own handler runs
// interleaved too (its packages are not on npm).
const agentskit = process.env.AGENTSKIT_SERVER
  ? (await import(new URL(`file://${process.env.AGENTSKIT_SERVER}`).href)).createChatHandler
  : undefined;

const results = {};
for (const turn of [SHORT, LONG]) {
  const tk = turnkeepHandler(pkg);
  const sample = await timeTurn(tk.handler, turn.input);
  const lines = linesOf(sample.parts);
  turn.lines = lines;
  const last = JSON.parse(lines.at(-1));
  if (last.payload.status !== 'complete') throw new Error(`${turn.name}: last line ${lines.at(-1)}`);
  const handlers = [
    { name: 'turnkeep', ...tk },
    { name: 'TS baseline (AgentsKit job)', ...(await baselineHandler()) },
    { name: 'bytes only (same lines)', ...bytesHandler(lines) },
    { name: 'host floor (host calls + bytes)', ...hostFloorHandler(lines, turn.input) },
  ];
  if (baseApi) handlers.push({ name: `turnkeep @ ${base}`, ...turnkeepHandler(baseApi) });
  if (agentskit) handlers.push({ name: "AgentsKit's handler", ...(await baselineHandler(agentskit)) });
  const rows = await interleaved(handlers, turn.input, TURNS);
  results[turn.name] = Object.fromEntries(rows.map((r) => [r.name, r]));
  const tkRow = rows[0];
  table(
    `1. ${turn.name} turn (${turn.input}), µs from handler(request) to the end of the body`,
    ['handler', 'median µs', 'p90 µs', 'bytes/turn', 'baseline ÷ this (median)'],
    rows.map((r) => [r.name, r.median.toFixed(0), r.p90.toFixed(0), Math.round(r.bytes), (rows[1].median / r.median).toFixed(2)]),
  );
  console.log(`   turnkeep is ${(rows[1].median / tkRow.median).toFixed(2)}× faster than the TS baseline (median), ${(rows[1].p90 / tkRow.p90).toFixed(2)}× at p90; lines per turn: ${lines.length}`);
  const ak = rows.find((r) => r.name === "AgentsKit's handler");
  if (ak) console.log(`   turnkeep is ${(ak.median / tkRow.median).toFixed(2)}× faster than AgentsKit's handler (median), ${(ak.p90 / tkRow.p90).toFixed(2)}× at p90; 2× means ≤ ${(ak.median / 2).toFixed(0)} µs`);
  console.log(`   2× the baseline means ≤ ${(rows[1].median / 2).toFixed(0)} µs; the host floor alone takes ${rows[3].median.toFixed(0)} µs, leaving ${(rows[1].median / 2 - rows[3].median).toFixed(0)} µs for the handler's own work (turnkeep's own work now: ${(tkRow.median - rows[3].median).toFixed(0)} µs)`);
}

const model200 = await modelOnlyUs(LONG.input, TURNS);
const model3 = await modelOnlyUs(SHORT.input, TURNS);
const r3 = results[SHORT.name];
const r200 = results[LONG.name];
const beyondBytes = (r200.turnkeep.median - r200['bytes only (same lines)'].median - (r3.turnkeep.median - r3['bytes only (same lines)'].median)) / (LONG.chunks - SHORT.chunks);
const modelPerChunk = (model200 - model3) / (LONG.chunks - SHORT.chunks);
table(
  '2. Server work per chunk on the 200-chunk turn beyond the bytes written: ((tk200 − bytes200) − (tk3 − bytes3)) / 197',
  ['per chunk', 'µs'],
  [
    ['turnkeep, beyond the bytes', beyondBytes.toFixed(2)],
    ['the echo model alone (async generator)', modelPerChunk.toFixed(2)],
    ['turnkeep, beyond the bytes and the model', (beyondBytes - modelPerChunk).toFixed(2)],
  ],
);

// 3. Snapshot counts over one fresh turn of each length. The counter is in the test build only
// (pkg-worker-test/; the npm wasm has none), so this runs `turnkeep` over that build: counts, not
// times, are read here.
const { testBuildApi: counted } = await import('../tests/support/test-hooks.mjs');
const counts = () => counted.__snapshotCountsForBench();
const rows3 = [];
for (const turn of [SHORT, LONG]) {
  const { handler } = turnkeepHandler(counted);
  const before = counts();
  const r = await timeTurn(handler, turn.input);
  const after = counts();
  const d = (k) => after[k] - before[k];
  rows3.push([turn.name, turn.chunks, d('statesOffered'), d('linesEmitted'), linesOf(r.parts).length, d('messagesEncoded'), d('messagesReused')]);
}
table(
  '3. Snapshots of one turn (a reader that reads as fast as it can): lines are built only when pulled, so built = emitted',
  ['turn', 'model chunks', 'states offered', 'lines built/emitted', 'lines read', 'messages encoded', 'messages reused'],
  rows3,
);

const memoryRows = [];
for (const turn of [SHORT, LONG]) {
  const tk = await heapPerThousand(() => turnkeepHandler(pkg), turn.input);
  const ts = await heapPerThousand(baselineHandler, turn.input);
  memoryRows.push([turn.name, 'turnkeep', tk.heapKb.toFixed(0), tk.wasmKb.toFixed(0), tk.kept]);
  memoryRows.push([turn.name, 'TS baseline', ts.heapKb.toFixed(0), '—', ts.kept]);
}
table(
  `4. Memory per ${HEAP_TURNS} turns (after GC; the storage's sessions dropped before measuring)`,
  ['turn', 'handler', 'JS heap growth KiB', 'wasm memory growth KiB', 'sessions stored'],
  memoryRows,
);

// 5. With a session log.
function countingLog(inner) {
  const calls = { appends: 0, reads: 0, chunksRead: 0 };
  return {
    calls,
    log: {
      append: (chunks, options) => {
        calls.appends += 1;
        return inner.append(chunks, options);
      },
      read: async (options) => {
        calls.reads += 1;
        const r = await inner.read(options);
        calls.chunksRead += r.chunks.length;
        return r;
      },
    },
  };
}
const logRows = [];
for (const turn of [SHORT, LONG]) {
  const made = [];
  const withLog = turnkeepHandler(pkg, {
    sessionLog: () => {
      const l = countingLog(pkg.createMemorySessionLog());
      made.push(l.calls);
      return l.log;
    },
  });
  const without = turnkeepHandler(pkg);
  const rows = await interleaved([{ name: 'log', ...withLog }, { name: 'no log', ...without }], turn.input, Math.min(TURNS, 200));
  const sum = (k) => made.reduce((a, c) => a + c[k], 0) / made.length;
  logRows.push([turn.name, rows[1].median.toFixed(0), rows[0].median.toFixed(0), ((rows[0].median - rows[1].median) / turn.chunks).toFixed(1), sum('appends').toFixed(1), sum('reads').toFixed(1), sum('chunksRead').toFixed(1)]);
}
table(
  '5. With a session log (createMemorySessionLog through a counting JS wrapper): the publisher appends, the stop watcher reads',
  ['turn', 'no log µs', 'log µs', 'log µs per chunk', 'appends/turn', 'reads/turn', 'chunks read back/turn'],
  logRows,
);

// 6. Host objects per turn: fixed costs a short turn pays in the host's own objects (an
// AbortController is 9–13 µs in Node 20's CPU profile, docs/figures.md). Counted by wrapping the
// globals the handlers (and wasm-bindgen's glue, which looks them up at each call) reach, after
// every timing above; the requests are built before the wrapping, so theirs are not counted.
async function hostObjectsPerTurn(make, input, turns = 50) {
  const { handler } = await make();
  const counts = { timers: 0, abortControllers: 0, abortListeners: 0 };
  const saved = { setTimeout: globalThis.setTimeout, AbortController: globalThis.AbortController, add: EventTarget.prototype.addEventListener };
  for (let n = 0; n < 5; n += 1) await timeTurn(handler, input);
  const requests = [];
  for (let n = 0; n < turns; n += 1) requests.push(nextRequest(input));
  globalThis.setTimeout = (...args) => ((counts.timers += 1), saved.setTimeout(...args));
  globalThis.AbortController = class extends saved.AbortController {
    constructor() {
      super();
      counts.abortControllers += 1;
    }
  };
  EventTarget.prototype.addEventListener = function (type, ...rest) {
    if (type === 'abort') counts.abortListeners += 1;
    return saved.add.call(this, type, ...rest);
  };
  try {
    for (const request of requests) {
      const response = await handler(request);
      const reader = response.body.getReader();
      while (!(await reader.read()).done);
    }
  } finally {
    globalThis.setTimeout = saved.setTimeout;
    globalThis.AbortController = saved.AbortController;
    EventTarget.prototype.addEventListener = saved.add;
  }
  return Object.values(counts).map((c) => (c / turns).toFixed(1));
}
const objectRows = [];
for (const turn of [SHORT, LONG]) {
  objectRows.push([turn.name, 'turnkeep', ...(await hostObjectsPerTurn(() => turnkeepHandler(pkg), turn.input))]);
  objectRows.push([turn.name, 'TS baseline', ...(await hostObjectsPerTurn(baselineHandler, turn.input))]);
  if (agentskit) objectRows.push([turn.name, "AgentsKit's handler", ...(await hostObjectsPerTurn(() => baselineHandler(agentskit), turn.input))]);
  objectRows.push([turn.name, 'host floor', ...(await hostObjectsPerTurn(() => hostFloorHandler(turn.lines, turn.input), turn.input))]);
}
table(
  '6. Host objects a turn creates (the request excluded)',
  ['turn', 'handler', 'timers', 'AbortControllers', 'abort listeners'],
  objectRows,
);
