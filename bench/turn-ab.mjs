// A/B of two pkg/ builds in one process (a script, not a test), for a change to the wasm side:
//   cp -r pkg /tmp/pkg-old   # before the change; then rebuild pkg/ (bash scripts/build.sh)
//   node bench/turn-ab.mjs pkg /tmp/pkg-old [pairs]
// Each build is its own wasm instance behind its own createChatHandler; turns alternate A B / B A
// (a new session per turn, the echo model of bench/turn.mjs, CAS storage over JSON text), so the
// machine's drift falls on both. Prints per-turn medians and the median of the pair ratios A/B
// for 3-chunk and 200-chunk turns (below 1: A is faster).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

import { defineChat } from '../js/node.mjs';
import { chatRequest, submitEvent } from '../tests/support/chat-harness.mjs';

const [dirA, dirB] = process.argv.slice(2, 4);
if (!dirA || !dirB) throw new Error('usage: node bench/turn-ab.mjs PKG_DIR_A PKG_DIR_B [pairs]');
const PAIRS = Number(process.argv[4] ?? 200);
const WARMUP = 30;

async function load(dir) {
  const glue = await import(`${pathToFileURL(resolve(dir, 'turnkeep.js')).href}?${dir}`);
  glue.initSync({ module: readFileSync(resolve(dir, 'turnkeep_bg.wasm')) });
  return glue;
}

async function* echo(chunks) {
  for (let i = 1; i <= chunks; i++) {
    await Promise.resolve(); // a model yields asynchronously
    yield { type: 'text', text: i === 1 ? 'w1' : ` w${i}` };
  }
}

function casStorage() {
  const rows = new Map();
  return {
    load: async (sessionId) => rows.get(sessionId),
    async save(snapshot, expectedCursor) {
      const text = typeof snapshot === 'string' ? snapshot : JSON.stringify(snapshot);
      const { sessionId } = JSON.parse(text);
      const stored = rows.get(sessionId);
      if ((expectedCursor ?? undefined) !== (stored === undefined ? undefined : JSON.parse(stored).cursor)) return false;
      rows.set(sessionId, text);
      return true;
    },
  };
}

function handlerOf(glue, chunks) {
  const memory = { load: async () => [], save: async () => {} };
  const definition = defineChat({ id: 'bench', revision: 1, model: { stream: () => echo(chunks) }, memory });
  const storage = casStorage();
  return glue.createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => storage });
}

let sessions = 0;
async function turnUs(handler) {
  const t0 = performance.now();
  const response = await handler(chatRequest(submitEvent({ sessionId: `s${sessions++}`, turnId: 't1', input: 'go' })));
  const reader = response.body.getReader();
  while (!(await reader.read()).done);
  return (performance.now() - t0) * 1000;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const [glueA, glueB] = [await load(dirA), await load(dirB)];
console.log(`A = ${dirA}, B = ${dirB}, Node ${process.version}`);
for (const chunks of [3, 200]) {
  const a = handlerOf(glueA, chunks);
  const b = handlerOf(glueB, chunks);
  const pairs = chunks === 3 ? PAIRS * 4 : PAIRS;
  for (let i = 0; i < WARMUP; i++) await Promise.all([turnUs(a), turnUs(b)]);
  const times = { a: [], b: [], ratio: [] };
  for (let i = 0; i < pairs; i++) {
    const first = i % 2 === 0 ? a : b;
    const [t1, t2] = [await turnUs(first), await turnUs(first === a ? b : a)];
    const [ta, tb] = first === a ? [t1, t2] : [t2, t1];
    times.a.push(ta);
    times.b.push(tb);
    times.ratio.push(ta / tb);
  }
  console.log(
    `${String(chunks).padStart(3)}-chunk turn: A ${median(times.a).toFixed(0)} µs, B ${median(times.b).toFixed(0)} µs (medians), ` +
      `A/B ${median(times.ratio).toFixed(3)} (median of ${pairs} pair ratios)`,
  );
}
