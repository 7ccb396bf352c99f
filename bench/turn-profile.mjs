// Runs turnkeep's handler alone, for a CPU profile of where a turn's time goes:
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/turn-profile.mjs [turns] [chunks]
// then `node bench/profile-top.mjs /tmp/prof/*.cpuprofile` prints self time by function.
// Same echo model, storage and memory as bench/turn.mjs (a new session per turn).
import * as pkg from '../js/node.mjs';
import { chatRequest, submitEvent } from '../tests/support/chat-harness.mjs';

const TURNS = Number(process.argv[2] ?? 500);
const CHUNKS = Number(process.argv[3] ?? 200);

async function* echo(n) {
  for (let i = 1; i <= n; i++) {
    await Promise.resolve();
    yield { type: 'text', text: i === 1 ? 'w1' : ` w${i}` };
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
const definition = pkg.defineChat({
  id: 'bench',
  revision: 1,
  model: { stream: () => echo(CHUNKS) },
  memory: { load: async () => [], save: async () => {} },
});
const handler = pkg.createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => storage });
const t0 = performance.now();
for (let n = 0; n < TURNS; n++) {
  const response = await handler(chatRequest(submitEvent({ sessionId: `s${n}`, turnId: 't1', input: 'go' })));
  const reader = response.body.getReader();
  while (!(await reader.read()).done);
}
console.log(`${TURNS} turns of ${CHUNKS} chunks: ${(((performance.now() - t0) * 1000) / TURNS).toFixed(0)} µs per turn`);
