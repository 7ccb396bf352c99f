// Benchmark of createChatHandler (a script, not a test): `node bench/chat-handler.mjs [turns]`.
// Needs pkg/ (bash scripts/build.sh). Prints three tables, all measured in this one run:
//
// 1. Per-turn handler overhead: the real handler (demo model, chunkDelayMs 0, in-memory CAS
//    storage) against a baseline handler that streams the very same NDJSON lines, precomputed,
//    through the same kind of pull stream, with no boundary logic at all. Both are timed from
//    `handler(request)` to the end of the body, interleaved turn by turn; medians and the ratio.
// 2. Coalescing: snapshots emitted vs the model's state changes (one per chunk) for readers of
//    different speeds against a model producing a chunk every 1 ms.
// 3. Session storage writes per turn for a plain turn, a tool turn and a confirmation turn.
import { performance } from 'node:perf_hooks';

import * as pkg from '../js/node.mjs';
import { chatRequest, countingStorage, readTurn, sleep, submitEvent } from '../tests/support/chat-harness.mjs';

const TURNS = Number(process.argv[2] ?? 500);
const WARMUP_TURNS = 50;
const INPUT = 'benchmark the turn handler please';

/** Memory that keeps nothing, so every turn has the same size. */
const constantMemory = () => ({ saves: 0, load: async () => [], async save() { this.saves += 1; } });

function realHandler({ chunkDelayMs = 0 } = {}) {
  const storage = countingStorage(pkg);
  const memory = constantMemory();
  const definition = pkg.defineChat({
    id: 'bench',
    revision: 1,
    model: pkg.createDemoModel({ chunkDelayMs }),
    memory,
    tools: [
      { name: 'lookup', description: 'Looks up.', parameters: { type: 'object' }, execute: async ({ query }) => `result for ${query}` },
      { name: 'transfer', description: 'Moves money.', parameters: { type: 'object' }, requiresConfirmation: true, execute: async () => 'done' },
    ],
  });
  const handler = pkg.createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => storage });
  return { handler, storage, memory };
}

/** The same lines through a highWaterMark-0 pull stream, with the same headers; nothing else. */
function baselineHandler(lines) {
  const encoded = lines.map((line) => new TextEncoder().encode(`${line}\n`));
  return async () => {
    let i = 0;
    const body = new ReadableStream(
      {
        pull(controller) {
          if (i < encoded.length) controller.enqueue(encoded[i++]);
          else controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, {
      status: 200,
      headers: { 'content-type': 'application/x-ndjson; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' },
    });
  };
}

/** Time of one turn: request built, handler called, body read to the end. */
async function timeTurn(handler, n) {
  const t0 = performance.now();
  const response = await handler(chatRequest(submitEvent({ sessionId: `s${n}`, turnId: 't1', input: INPUT })));
  const reader = response.body.getReader();
  let bytes = 0;
  let lines = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    for (const b of value) if (b === 10) lines += 1;
  }
  const ms = performance.now() - t0;
  if (response.status !== 200) throw new Error(`turn ${n}: status ${response.status}`);
  return { ms, bytes, lines };
}

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function table(title, header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padStart(widths[i])).join(' | ')} |`;
  console.log(`\n${title}`);
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(r));
}

async function overhead() {
  const real = realHandler();
  // Precompute the baseline's lines from one real turn (a fast reader, as in the timing loop).
  const sample = await readTurn(pkg, await real.handler(chatRequest(submitEvent({ sessionId: 'sample', input: INPUT }))));
  if (sample.faults.length > 0) throw new Error(sample.faults.join('; '));
  const baseline = baselineHandler(sample.text.trimEnd().split('\n'));
  const times = { real: [], baseline: [] };
  let realBytes = 0;
  let baselineBytes = 0;
  let realLines = 0;
  for (let n = 0; n < WARMUP_TURNS + TURNS; n += 1) {
    const r = await timeTurn(real.handler, n);
    const b = await timeTurn(baseline, n);
    if (n >= WARMUP_TURNS) {
      times.real.push(r.ms);
      times.baseline.push(b.ms);
      realBytes += r.bytes;
      realLines += r.lines;
      baselineBytes += b.bytes;
    }
  }
  const sr = [...times.real].sort((a, b) => a - b);
  const sb = [...times.baseline].sort((a, b) => a - b);
  const us = (ms) => (ms * 1000).toFixed(0);
  table(
    `1. Per-turn time, ${TURNS} turns each (after ${WARMUP_TURNS} warm-up), demo model chunkDelayMs 0, interleaved`,
    ['handler', 'median µs', 'p90 µs', 'bytes/turn', 'lines/turn'],
    [
      ['createChatHandler', us(quantile(sr, 0.5)), us(quantile(sr, 0.9)), Math.round(realBytes / TURNS), (realLines / TURNS).toFixed(2)],
      ['baseline (same lines, no logic)', us(quantile(sb, 0.5)), us(quantile(sb, 0.9)), Math.round(baselineBytes / TURNS), sample.events.length],
    ],
  );
  const ratio = quantile(sr, 0.5) / quantile(sb, 0.5);
  console.log(`   ratio of medians (handler / baseline): ${ratio.toFixed(1)}×;  overhead per turn: ${us(quantile(sr, 0.5) - quantile(sb, 0.5))} µs`);
  const writes = real.storage.saves.length / (WARMUP_TURNS + TURNS + 1);
  return { writes, memorySaves: real.memory.saves / (WARMUP_TURNS + TURNS + 1) };
}

async function coalescing() {
  const chunks = 200;
  const rows = [];
  for (const readDelayMs of [0, 2, 10, 50]) {
    const { handler, storage } = realHandler({ chunkDelayMs: 1 });
    const response = await handler(chatRequest(submitEvent({ sessionId: 'slow', turnId: 't1', input: `/words ${chunks}` })));
    const turn = await readTurn(pkg, response, { delayMs: readDelayMs });
    if (turn.faults.length > 0) throw new Error(turn.faults.join('; '));
    const complete = turn.last.payload.status === 'complete';
    rows.push([readDelayMs, chunks, turn.snapshots.length, (turn.snapshots.length / chunks).toFixed(3), complete ? 'yes' : 'NO', storage.saves.length]);
  }
  table(
    '2. Snapshots emitted vs state changes (each model chunk is one; start and finish add a few), model at 1 chunk per ms (/words 200)',
    ['reader wait ms/read', 'model chunks', 'snapshots', 'snapshots/chunk', 'last complete', 'storage writes'],
    rows,
  );
}

async function writesPerTurn(plain) {
  const rows = [['plain (echo), mean over the timing run', plain.writes.toFixed(2), plain.memorySaves.toFixed(2)]];
  for (const [name, input] of [['tool loop (/tool Q)', '/tool Q'], ['confirmation (/confirm 5)', '/confirm 5'], ['model failure (/fail)', '/fail']]) {
    const { handler, storage, memory } = realHandler();
    const turn = await readTurn(pkg, await handler(chatRequest(submitEvent({ input }))));
    if (turn.faults.length > 0) throw new Error(turn.faults.join('; '));
    rows.push([name, storage.saves.length, memory.saves]);
  }
  table('3. Writes per turn', ['turn', 'session storage writes', 'memory saves'], rows);
}

console.log(`createChatHandler benchmark — Node ${process.version}, ${TURNS} turns`);
const plain = await overhead();
await coalescing();
await writesPerTurn(plain);
await sleep(0);
