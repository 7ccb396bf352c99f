// Runs one handler alone, turn after turn, for a CPU profile of where a turn's time goes and
// for whole-process A/B timing from outside:
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/turn-profile.mjs [turns] [chunks] [turnkeep|log|baseline]
//   node bench/profile-top.mjs /tmp/prof/*.cpuprofile        (self time by function, by area, and
//                                                             what driving the turn costs)
//   farm-bench -n 7 --vs 'node bench/turn-profile.mjs 300 200 baseline' -- node bench/turn-profile.mjs 300 200
// Rust's frames have names only in a build that keeps them: `rm -rf pkg && wasm-bindgen
// target/wasm32-unknown-unknown/release/turnkeep.wasm --target web --out-dir pkg` makes pkg/ one,
// and `rm -rf pkg && bash scripts/build.sh` puts the shipping one back.
// Same echo model, storage and memory as bench/turn.mjs (a new session per turn); `baseline` is
// the TypeScript handler of bench/baseline/chat-handler.ts (AgentsKit's handler job); `log` is
// turnkeep with a session log (createMemorySessionLog, a new one per session).
import { readFileSync } from 'node:fs';

import { transformSync } from 'esbuild';

import * as pkg from '../js/node.mjs';
import { chatRequest, submitEvent } from '../tests/support/chat-harness.mjs';

const TURNS = Number(process.argv[2] ?? 500);
const CHUNKS = Number(process.argv[3] ?? 200);
const WHICH = process.argv[4] ?? 'turnkeep';

async function* echo(n, field) {
  for (let i = 1; i <= n; i++) {
    await Promise.resolve();
    yield { type: 'text', [field]: i === 1 ? 'w1' : ` w${i}` };
  }
}
const rows = new Map();
const storage = {
  load: async (id) => rows.get(id),
  async save(snapshot, expected) {
    const text = typeof snapshot === 'string' ? snapshot : JSON.stringify(snapshot);
    const { sessionId, cursor } = JSON.parse(text);
    const stored = rows.get(sessionId);
    if ((expected ?? undefined) !== (stored === undefined ? undefined : JSON.parse(stored).cursor)) return false;
    rows.set(sessionId, text);
    return true;
  },
};
const memory = { load: async () => [], save: async () => {} };

async function baseline() {
  const source = readFileSync(new URL('./baseline/chat-handler.ts', import.meta.url), 'utf8');
  const { code } = transformSync(source, { loader: 'ts', format: 'esm', target: 'node20' });
  const { createChatHandler } = await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`);
  const adapter = { createSource: () => ({ stream: () => echo(CHUNKS, 'content') }) };
  const definition = { id: 'bench', revision: 1, chat: { adapter, memory } };
  return createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => storage });
}

function turnkeep({ log = false } = {}) {
  const definition = pkg.defineChat({ id: 'bench', revision: 1, model: { stream: () => echo(CHUNKS, 'text') }, memory });
  const sessionLog = log ? () => pkg.createMemorySessionLog() : undefined;
  return pkg.createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => storage, sessionLog });
}

const handler = WHICH === 'baseline' ? await baseline() : turnkeep({ log: WHICH === 'log' });
const t0 = performance.now();
for (let n = 0; n < TURNS; n++) {
  const response = await handler(chatRequest(submitEvent({ sessionId: `s${n}`, turnId: 't1', input: 'go' })));
  const reader = response.body.getReader();
  while (!(await reader.read()).done);
}
console.log(`${WHICH}: ${TURNS} turns of ${CHUNKS} chunks: ${(((performance.now() - t0) * 1000) / TURNS).toFixed(0)} µs per turn`);
