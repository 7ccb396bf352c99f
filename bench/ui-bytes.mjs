// Bytes on the wire for one turn (a script, not a test): `node bench/ui-bytes.mjs [chunks...]`.
// Needs pkg/ (bash scripts/build.sh). The same demo turn (`/words N`: N chunks, one every
// millisecond, `BENCH_CHUNK_DELAY_MS` to change it) answered by createChatHandler (AgentsKit's NDJSON snapshots: every line the whole
// conversation) and by createUIMessageChatHandler (the AI SDK's UI message stream: one delta
// per event), each read whole by a reader that keeps up, in this one run. The UI stream grows
// linearly with the answer; the snapshots, with its square (until a coalescing policy bounds
// them: issue 28). The AG-UI column is the same turn posted as a RunAgentInput (what
// `@ag-ui/client`'s HttpAgent sends) to createUIMessageChatHandler with a session log: the run's
// AG-UI events, followed in the log.
import * as pkg from '../js/node.mjs';
import { submitEvent } from '../tests/support/chat-harness.mjs';

const SIZES = process.argv.slice(2).map(Number).filter((n) => n > 0);
const CHUNKS = SIZES.length > 0 ? SIZES : [3, 200, 2000];
const DELAY_MS = Number(process.env.BENCH_CHUNK_DELAY_MS ?? 1);

function handlers() {
  const storage = pkg.createMemorySessionStorage();
  const definition = () =>
    pkg.defineChat({ id: 'bench', revision: 1, model: pkg.createDemoModel({ chunkDelayMs: DELAY_MS }), memory: pkg.createMemoryChatMemory() });
  const options = { resolveDefinition: definition, sessionStorage: () => storage };
  const logs = new Map();
  const sessionLog = (_context, id) => logs.get(id) ?? logs.set(id, pkg.createMemorySessionLog()).get(id);
  return {
    turns: pkg.createChatHandler(options),
    ui: pkg.createUIMessageChatHandler(options),
    agui: pkg.createUIMessageChatHandler({ ...options, sessionLog }),
  };
}

/** Reads `response`'s body as it comes: bytes, and lines (NDJSON) or events (SSE). */
async function measure(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  const lines = text.split('\n').filter((l) => l.trim() !== '').length;
  const events = text.split('\n\n').filter((e) => e.startsWith('data:')).length;
  return { bytes: Buffer.byteLength(text), lines, events };
}

const { turns, ui, agui } = handlers();
console.log('| chunks | NDJSON snapshots (lines, bytes) | UI message stream (events, bytes) | AG-UI events (events, bytes) | snapshots ÷ UI bytes | AG-UI ÷ UI bytes |');
console.log('|---|---|---|---|---|---|');
for (const [i, n] of CHUNKS.entries()) {
  const input = n === 3 ? 'one two' : `/words ${n}`;
  const turn = submitEvent({ sessionId: `bench-a-${i}`, turnId: `t-${i}`, input });
  const ndjson = await measure(
    await turns(new Request('http://bench/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(turn) })),
  );
  const body = { id: `bench-b-${i}`, trigger: 'submit-message', messages: [{ id: `u-${i}`, role: 'user', parts: [{ type: 'text', text: input }] }] };
  const sse = await measure(
    await ui(new Request('http://bench/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })),
  );
  const run = { threadId: `bench-c-${i}`, runId: `run-${i}`, messages: [{ id: `u-${i}`, role: 'user', content: input }], tools: [], context: [], state: {}, forwardedProps: {} };
  const events = await measure(
    await agui(new Request('http://bench/api/chat', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(run) }), { waitUntil() {} }),
  );
  const kb = (b) => `${(b / 1000).toFixed(1)} kB`;
  console.log(`| ${n} | ${ndjson.lines}, ${kb(ndjson.bytes)} | ${sse.events}, ${kb(sse.bytes)} | ${events.events}, ${kb(events.bytes)} | ${(ndjson.bytes / sse.bytes).toFixed(1)} | ${(events.bytes / sse.bytes).toFixed(2)} |`);
}
