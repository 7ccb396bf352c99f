// Durable Object state written by another tree's Worker, read by this tree's (a check run by hand,
// not a test: it needs a second checkout with its builds in place):
//
//   node bench/state-compat.mjs OTHER_ROOT
//
// OTHER_ROOT's Worker (e.g. main before the Worker moved to Rust: JS class shells over the same
// tables) runs a turn with a tool call and writes a plain-text stream with an idempotent
// producer, on the workerd binary with a persist dir; it stops, and this tree's Worker serves
// the same dir: the session view must be equal, the stream's bytes and producer state kept, and
// a new turn must continue the session with the stream still projecting to the saved messages.
import { pathToFileURL } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
if (!process.argv[2]) {
  console.error('usage: node bench/state-compat.mjs OTHER_ROOT');
  process.exit(2);
}
const [baseRoot, newRoot] = [resolve(process.argv[2]), resolve(dirname(fileURLToPath(import.meta.url)), '..')];
const { tempDir } = await import(pathToFileURL(join(newRoot, 'tests/support/temp-dir.mjs')).href);
const { submitEvent } = await import(pathToFileURL(join(newRoot, 'tests/support/chat-harness.mjs')).href);
const dir = tempDir('compat-');
const vars = { STREAMS_PUBLIC: '1', DEMO_CHUNK_DELAY_MS: '0' };
async function serve(root) {
  const { serveWorkerd } = await import(pathToFileURL(join(root, 'tests/support/workerd-serve.mjs')).href);
  return serveWorkerd({ persistDir: dir, vars });
}
const auth = { authorization: 'Bearer compat' };
const turn = (url, turnId, input) => fetch(`${url}/api/chat`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(submitEvent({ sessionId: 's1', turnId, input, extra: { emittedAt: new Date().toISOString() } })) }).then((r) => r.text());
const old = await serve(baseRoot);
await turn(old.baseUrl, 'old-1', '/tool cats');
await fetch(`${old.baseUrl}/v1/stream/plain`, { method: 'PUT', headers: { 'content-type': 'text/plain' } });
await fetch(`${old.baseUrl}/v1/stream/plain`, { method: 'POST', headers: { 'content-type': 'text/plain', 'producer-id': 'p', 'producer-epoch': '0', 'producer-seq': '0' }, body: 'hello ' });
const before = await (await fetch(`${old.baseUrl}/api/sessions/s1`, { headers: auth })).json();
await old.stop();
const now = await serve(newRoot);
const after = await (await fetch(`${now.baseUrl}/api/sessions/s1`, { headers: auth })).json();
console.log('session view equal:', JSON.stringify(before) === JSON.stringify(after), after.messages.length, 'messages', after.session.terminalTurns);
const plain = await fetch(`${now.baseUrl}/v1/stream/plain?offset=-1`);
console.log('plain stream:', plain.status, JSON.stringify(await plain.text()));
const dup = await fetch(`${now.baseUrl}/v1/stream/plain`, { method: 'POST', headers: { 'content-type': 'text/plain', 'producer-id': 'p', 'producer-epoch': '0', 'producer-seq': '0' }, body: 'hello ' });
console.log('producer state kept (replayed seq 0 is a duplicate):', dup.status);
await turn(now.baseUrl, 'new-1', 'again');
const next = await (await fetch(`${now.baseUrl}/api/sessions/s1`, { headers: auth })).json();
console.log('a new turn continues the session:', next.messages.length, 'messages', next.session.terminalTurns.map((t) => t.turnId).join(','), 'stream = saved:', JSON.stringify(next.streamMessages) === JSON.stringify(next.messages));
await now.stop();
const ok = JSON.stringify(before) === JSON.stringify(after) && next.messages.length === before.messages.length + 2;
console.log(ok ? 'state compatible' : 'STATE NOT COMPATIBLE');
process.exitCode = ok ? 0 : 1;
