// The live connection's client-side cost on Node, measured side by side in one run (not a test):
// one turn's event stream (TEXT_MESSAGE_CONTENT appends, each `data` + `control` event as the
// SessionStream frames them) read (a) by the connection's rules in wasm (ChatConnectionCore:
// SSE parsing, exactly-once bookkeeping, the replay projection, delivery to 1 or 3 readers) and
// (b) by a bare JS reader that only splits events and JSON.parses them (no rules, no state).
// Then the per-pane work of the demo page: feed a chunk, get the markup (through a whole
// snapshot, or straight from the projection as the page does).
// Run after `npm run build`: node bench/connection.mjs
import { ChatConnectionCore } from '../pkg-client/turnkeep.js';
import { ChatProjection, renderChatMessages } from '../js/client/node.mjs';

const APPENDS = 2_000;
const offset = (n) => `0000000000000000_${String(n).padStart(16, '0')}`;
let text = '';
for (let i = 1; i <= APPENDS; i++) {
  const chunk = { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a1', delta: ` w${i}` };
  text += `event: data\ndata:[${JSON.stringify(chunk)}]\n\n`;
  text += `event: control\ndata:{"streamNextOffset":"${offset(i * 64)}","streamCursor":"1"}\n\n`;
}
const bytes = new TextEncoder().encode(text);
const PIECE = 4096;

function wasmRead(readers) {
  const core = new ChatConnectionCore({ target: 'http://bench.local/stream' }, undefined, 1);
  const ids = [];
  for (let r = 0; r < readers; r++) ids.push(core.subscribe().reader);
  core.response(1, 200, 'text/event-stream', 0);
  let delivered = 0;
  for (let at = 0; at < bytes.length; at += PIECE) {
    for (const action of core.body(1, bytes.subarray(at, at + PIECE))) {
      if (action.type === 'deliver') {
        delivered += action.chunks.length;
        for (const id of action.readers) core.took(id, action.chunks.length);
      }
    }
  }
  core.free();
  if (delivered !== APPENDS) throw new Error(`delivered ${delivered}`);
}

function bareRead() {
  const decoder = new TextDecoder();
  let buffer = '';
  let delivered = 0;
  for (let at = 0; at < bytes.length; at += PIECE) {
    buffer += decoder.decode(bytes.subarray(at, at + PIECE), { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = JSON.parse(event.slice(event.indexOf('data:') + 5));
      if (Array.isArray(data)) delivered += data.length;
    }
  }
  if (delivered !== APPENDS) throw new Error(`delivered ${delivered}`);
}

function pane(viaSnapshot) {
  const projection = new ChatProjection([{ id: 'u1', role: 'user', content: 'q', status: 'complete', createdAt: '2026-07-11T03:00:00.000Z' }]);
  projection.feed({ type: 'TEXT_MESSAGE_START', messageId: 'a1', role: 'assistant' });
  for (let i = 1; i <= 200; i++) {
    projection.feed({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'a1', delta: ` w${i}` });
    if (viaSnapshot) renderChatMessages(projection.snapshot().renderParts);
    else projection.renderMessages();
  }
  projection.free();
}

/** Mean milliseconds per call of `f`, after a warm-up. */
function ms(f, n) {
  for (let i = 0; i < 3; i++) f();
  const start = performance.now();
  for (let i = 0; i < n; i++) f();
  return (performance.now() - start) / n;
}

const rounds = 20;
const wasm1 = ms(() => wasmRead(1), rounds);
const wasm3 = ms(() => wasmRead(3), rounds);
const bare = ms(bareRead, rounds);
const perChunk = (t) => ((t / APPENDS) * 1000).toFixed(2);
console.log(`one turn of ${APPENDS} appends (${(bytes.length / 1024).toFixed(0)} KiB of SSE), ${rounds} rounds each:`);
console.log(`  ChatConnectionCore, 1 reader : ${wasm1.toFixed(2)} ms  (${perChunk(wasm1)} µs/chunk)`);
console.log(`  ChatConnectionCore, 3 readers: ${wasm3.toFixed(2)} ms  (${perChunk(wasm3)} µs/chunk)`);
console.log(`  bare JS split + JSON.parse   : ${bare.toFixed(2)} ms  (${perChunk(bare)} µs/chunk)`);
console.log(`  ratio wasm(1 reader) / bare JS: ${(wasm1 / bare).toFixed(2)}; 3 readers / 1 reader: ${(wasm3 / wasm1).toFixed(2)}`);
const viaSnapshot = ms(() => pane(true), 10);
const direct = ms(() => pane(false), 10);
const each = (t) => ((t / 200) * 1000).toFixed(0);
console.log('a pane redrawing after each of 200 chunks (ChatProjection.feed, then the markup):');
console.log(`  renderChatMessages(projection.snapshot().renderParts): ${viaSnapshot.toFixed(1)} ms (${each(viaSnapshot)} µs/chunk)`);
console.log(`  projection.renderMessages()                          : ${direct.toFixed(1)} ms (${each(direct)} µs/chunk)`);
console.log(`  ratio: ${(viaSnapshot / direct).toFixed(2)}`);
