// Benchmark of durable chat (a script, not a test): `node bench/durable-chat.mjs [turns] [runs]`.
// Needs pkg/ (bash scripts/build.sh). Prints two tables, each measured side by side in this run:
//
// 1. Per-turn cost of createChatHandler (demo model, chunkDelayMs 0, in-memory CAS storage), from
//    `handler(request)` to the end of the body and of the turn's background work (`waitUntil`),
//    without a session log, with the in-memory log, and with the Durable Streams log against the
//    reference server (@durable-streams/server, in this process, so its CPU counts too). The three
//    are interleaved turn by turn; each turn is a new session (a new log / stream). Medians.
// 2. Projection of one 10,000-chunk log (TanStack 0.58 dialect: echoes, text deltas, tool calls
//    with results, runs): turnkeep's wasm `projectChatSnapshot(chunks)` and `ChatProjection`
//    (fed chunk by chunk) against @tanstack/ai's own StreamProcessor (processChunk each, then
//    finalizeStream and getMessages). Interleaved runs, medians, ratios.
//
// `BENCH_ONLY=<reader>` (`wasm` or `tanstack`) projects the log once with that reader and exits,
// for whole-process A/B timing: farm-bench -- env BENCH_ONLY=wasm node bench/durable-chat.mjs
// --vs 'env BENCH_ONLY=tanstack node bench/durable-chat.mjs' (each run then also pays its start-up,
// building the log and, for wasm, loading the module).
import { performance } from 'node:perf_hooks';
import { DurableStreamTestServer } from '@durable-streams/server';
import { StreamProcessor } from '@tanstack/ai';

import * as pkg from '../js/node.mjs';
import { chatRequest, submitEvent } from '../tests/support/chat-harness.mjs';

const TURNS = Number(process.argv[2] ?? 300);
const RUNS = Number(process.argv[3] ?? 15);
const WARMUP_TURNS = 30;
const LOG_CHUNKS = 10_000;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (x) => `${x.toFixed(3)} ms`;

// ---- 1. per-turn cost

/** Memory that keeps nothing, so every turn has the same size. */
const constantMemory = () => ({ load: async () => [], save: async () => {} });

function handlerWith(sessionLog) {
  const storage = pkg.createMemorySessionStorage();
  const definition = pkg.defineChat({ id: 'bench', revision: 1, model: pkg.createDemoModel({ chunkDelayMs: 0 }), memory: constantMemory() });
  return pkg.createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => storage, sessionLog });
}

let turnCounter = 0;
async function timeTurn(handler) {
  const sessionId = `bench-${++turnCounter}`;
  const request = chatRequest(submitEvent({ sessionId, turnId: `t-${turnCounter}`, input: 'benchmark the turn handler please' }));
  const kept = [];
  const start = performance.now();
  const response = await handler(request, { waitUntil: (p) => kept.push(p) });
  await response.arrayBuffer();
  await Promise.all(kept);
  return performance.now() - start;
}

async function perTurn() {
  const server = new DurableStreamTestServer({ host: '127.0.0.1', port: 0, longPollTimeout: 1000 });
  const base = (await server.start()).replace(/\/$/, '');
  const variants = [
    ['no session log', handlerWith(undefined)],
    ['memory log', handlerWith(() => pkg.createMemorySessionLog())],
    ['Durable Streams log (reference server)', handlerWith((_, sessionId) => pkg.createDurableStreamsLog({ url: `${base}/v1/stream/chat/${sessionId}` }))],
  ];
  const times = variants.map(() => []);
  for (let turn = 0; turn < WARMUP_TURNS + TURNS; turn++) {
    for (let v = 0; v < variants.length; v++) {
      const t = await timeTurn(variants[v][1]);
      if (turn >= WARMUP_TURNS) times[v].push(t);
    }
  }
  await server.stop();
  const base0 = median(times[0]);
  console.log(`\n1. Per-turn cost of createChatHandler (${TURNS} turns each, interleaved, medians)`);
  console.log('| variant | median per turn | vs no log |\n|---|---|---|');
  variants.forEach(([name], v) => console.log(`| ${name} | ${ms(median(times[v]))} | ×${(median(times[v]) / base0).toFixed(2)} |`));
}

// ---- 2. projecting a 10,000-chunk log

/** A TanStack 0.58-dialect log of `count` chunks: turns of echo, text, a tool call and result. */
function tanstackLog(count) {
  const out = [];
  for (let turn = 0; out.length < count; turn++) {
    const user = `user-${turn}`;
    const asst = `asst-${turn}`;
    const call = `call_${turn}`;
    const ts = 1_783_000_000_000 + turn;
    out.push({ type: 'TEXT_MESSAGE_START', messageId: user, role: 'user', model: 'client', timestamp: ts });
    out.push({ type: 'TEXT_MESSAGE_CONTENT', messageId: user, delta: `question ${turn}`, model: 'client', timestamp: ts });
    out.push({ type: 'TEXT_MESSAGE_END', messageId: user, model: 'client', timestamp: ts });
    out.push({ type: 'RUN_STARTED', runId: `run-${turn}`, threadId: 'thread', timestamp: ts });
    out.push({ type: 'TEXT_MESSAGE_START', messageId: asst, role: 'assistant', timestamp: ts });
    for (let w = 0; w < 12; w++) out.push({ type: 'TEXT_MESSAGE_CONTENT', messageId: asst, delta: ` word${w}`, timestamp: ts });
    out.push({ type: 'TOOL_CALL_START', toolCallId: call, toolCallName: 'lookup', toolName: 'lookup', parentMessageId: asst, timestamp: ts });
    out.push({ type: 'TOOL_CALL_ARGS', toolCallId: call, delta: '{"q":', timestamp: ts });
    out.push({ type: 'TOOL_CALL_ARGS', toolCallId: call, delta: `"${turn}"}`, timestamp: ts });
    out.push({ type: 'TOOL_CALL_END', toolCallId: call, input: { q: String(turn) }, timestamp: ts });
    out.push({ type: 'TEXT_MESSAGE_END', messageId: asst, timestamp: ts });
    out.push({ type: 'TOOL_CALL_RESULT', messageId: asst, toolCallId: call, content: `{"hit":${turn}}`, role: 'tool', timestamp: ts });
    out.push({ type: 'RUN_FINISHED', runId: `run-${turn}`, threadId: 'thread', timestamp: ts, metadata: { tanstack: { finishReason: 'stop' } } });
  }
  return out.slice(0, count);
}

/** The readers compared: `[name, () => messages projected]`. */
function readers(chunks) {
  return [
    ['turnkeep projectChatSnapshot (wasm)', () => pkg.projectChatSnapshot(chunks).messages.length],
    [
      'turnkeep ChatProjection, chunk by chunk (wasm)',
      () => {
        const p = new pkg.ChatProjection();
        for (const chunk of chunks) p.feed(chunk);
        const n = p.snapshot().messages.length;
        p.free();
        return n;
      },
    ],
    [
      '@tanstack/ai StreamProcessor (JS)',
      () => {
        const p = new StreamProcessor();
        for (const chunk of chunks) p.processChunk(chunk);
        p.finalizeStream();
        return p.getMessages().length;
      },
    ],
  ];
}

function projection() {
  const candidates = readers(tanstackLog(LOG_CHUNKS));
  const times = candidates.map(() => []);
  const sizes = candidates.map(() => 0);
  for (let run = 0; run < RUNS + 2; run++) {
    candidates.forEach(([, fn], i) => {
      const start = performance.now();
      sizes[i] = fn();
      if (run >= 2) times[i].push(performance.now() - start);
    });
  }
  const tanstack = median(times[2]);
  console.log(`\n2. Projecting one ${LOG_CHUNKS}-chunk log (${RUNS} runs each, interleaved, medians)`);
  console.log('| reader | messages | median | vs StreamProcessor |\n|---|---|---|---|');
  candidates.forEach(([name], i) =>
    console.log(`| ${name} | ${sizes[i]} | ${ms(median(times[i]))} | ×${(median(times[i]) / tanstack).toFixed(2)} |`),
  );
  console.log('(messages: turnkeep counts each tool result as a `tool` message; TanStack keeps it as a part.)');
}

const only = process.env.BENCH_ONLY;
if (only) {
  const reader = { wasm: 0, tanstack: 2 }[only];
  if (reader === undefined) throw new Error('BENCH_ONLY must be wasm or tanstack');
  console.log(readers(tanstackLog(LOG_CHUNKS))[reader][1]());
} else {
  console.log(`node ${process.version}, turnkeep ${pkg.version()}`);
  await perTurn();
  projection();
}
