// Microbenchmark (a script, not a test): where the time of one acknowledged append goes on the
// workerd binary. `node bench/append-breakdown.mjs [requests]` (default 2000; needs pkg/).
//
// Each variant is its own tiny Worker served by the workerd binary from a generated config, and
// the same Node client (global fetch, one keep-alive connection) sends small JSON POSTs one at a
// time, each awaited. Steps added one at a time:
//   worker 204            the Worker answers by itself (HTTP + client floor)
//   DO fetch, no storage  Worker -> Durable Object stub.fetch(request) -> 204
//   DO RPC, no storage    Worker -> stub.append(bytes) (JS RPC) -> Worker builds the 204
//   DO fetch + 1 insert   plain sql.exec INSERT (implicit transaction; output gate waits)
//   DO fetch + tx 2 stmt  transactionSync(INSERT + meta UPSERT): what turnkeep's append writes
//   DO RPC + 1 insert     the RPC path with the same single insert
//   turnkeep              the real Worker (js/cloudflare/worker.mjs), POST to a JSON stream
// Prints median and p90 microseconds per request, requests/s, and the workerd process's CPU time
// (user + system, all threads) per request.
//
// Measured here (2-core VM, workerd 1.20260426): worker alone 366 us p50 / 100 us workerd CPU;
// + DO stub.fetch 421/195 (JS RPC 348/175); + one committed insert 601/350 (RPC 558/310); the
// real Worker 716/495. The commit is one WAL write and one fsync (strace: 503 fsync for 500
// appends) that workerd runs after the request's JS turn, holding the reply on the output gate.
// Replacing all of turnkeep's append logic (routing, shell, wasm core, meta row) by a bare
// insert in the real Worker (bench/append-ab.mjs, a throwaway edit) gave 1.25x the rate and
// 0.75x the CPU: that is the most any change to our code could win on this path. Keeping the
// real Worker routing and only baring the object: 0.88x CPU (routing ~30 us, the object's
// shell + wasm core + meta row ~60 us; removing the wasm core alone: 0.90x CPU). The client
// (global fetch) costs ~250 us of each request on top, the same for every server.
import { join } from 'node:path';
import { removeDir, tempDir } from '../tests/support/temp-dir.mjs';
import { timedAppends } from './appends.mjs';
import { serveWorkerd } from '../tests/support/workerd-serve.mjs';

const COUNT = Number(process.argv[2] ?? 2000);
const WARMUP = 200;
// Compatibility flags of the variants, as a capnp list body (`"flag_a", "flag_b"`); none by default.
const BENCH_FLAGS = (process.env.BENCH_FLAGS ?? '').split(',').map((f) => f.trim().replace(/^"|"$/g, '')).filter(Boolean);

const OBJECT_BASE = `
import { DurableObject } from 'cloudflare:workers';
export class Obj extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, data BLOB NOT NULL)');
    ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS meta (k INTEGER PRIMARY KEY, v TEXT NOT NULL)');
    this.n = 0;
  }
  insert(bytes) { this.ctx.storage.sql.exec('INSERT INTO rows (id, data) VALUES (?, ?)', ++this.n, bytes); }
  insertTx(bytes) {
    this.ctx.storage.transactionSync(() => {
      this.insert(bytes);
      this.ctx.storage.sql.exec('INSERT INTO meta (k, v) VALUES (0, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v', JSON.stringify({ tail: this.n }));
    });
  }
  async fetch(request) {
    const bytes = await request.arrayBuffer();
    const mode = new URL(request.url).pathname;
    if (mode === '/insert') this.insert(bytes);
    if (mode === '/tx') this.insertTx(bytes);
    return new Response(null, { status: 204, headers: { 'stream-next-offset': String(this.n) } });
  }
  append(bytes, mode) {
    if (mode === 'insert') this.insert(bytes);
    return String(this.n);
  }
}
`;

const VARIANTS = [
  ['worker 204', `export default { async fetch(r) { await r.arrayBuffer(); return new Response(null, { status: 204 }); } };`, '/'],
  ['DO fetch, no storage', `${OBJECT_BASE}
export default { fetch(r, env) { return env.OBJ.get(env.OBJ.idFromName('a')).fetch(r); } };`, '/none'],
  ['DO RPC, no storage', `${OBJECT_BASE}
export default { async fetch(r, env) {
  const offset = await env.OBJ.get(env.OBJ.idFromName('a')).append(await r.arrayBuffer(), 'none');
  return new Response(null, { status: 204, headers: { 'stream-next-offset': offset } }); } };`, '/'],
  ['DO fetch + 1 insert', `${OBJECT_BASE}
export default { fetch(r, env) { return env.OBJ.get(env.OBJ.idFromName('a')).fetch(r); } };`, '/insert'],
  ['DO fetch + tx 2 stmt', `${OBJECT_BASE}
export default { fetch(r, env) { return env.OBJ.get(env.OBJ.idFromName('a')).fetch(r); } };`, '/tx'],
  ['DO RPC + 1 insert', `${OBJECT_BASE}
export default { async fetch(r, env) {
  const offset = await env.OBJ.get(env.OBJ.idFromName('a')).append(await r.arrayBuffer(), 'insert');
  return new Response(null, { status: 204, headers: { 'stream-next-offset': offset } }); } };`, '/'],
];

/** One variant on the workerd binary: `source` is the whole Worker, binding OBJ to class Obj. */
function serve(source, persistDir) {
  return serveWorkerd({
    persistDir,
    entry: 'main.mjs',
    overrides: { 'main.mjs': source },
    objects: [['OBJ', 'Obj']],
    compatibilityFlags: BENCH_FLAGS,
  });
}

function report(label, r) {
  const us = (ms) => `${Math.round(ms * 1000)}`.padStart(8);
  console.log(`${label.padEnd(26)} ${us(r.p50)} ${us(r.p90)} ${`${Math.round(r.rate)}/s`.padStart(10)} ${us(r.cpu / 1000)}`);
}

const dir = tempDir('turnkeep-breakdown-');
console.log(`${COUNT} sequential POSTs per variant, workerd binary, one keep-alive connection`);
console.log(`${'variant'.padEnd(26)} ${'p50 us'.padStart(8)} ${'p90 us'.padStart(8)} ${'rate'.padStart(10)} ${'CPU us'.padStart(8)}`);
try {
  for (const [i, [label, source, path]] of VARIANTS.entries()) {
    const server = await serve(source, join(dir, String(i)));
    try {
      await timedAppends(server.baseUrl + path, WARMUP);
      report(label, await timedAppends(server.baseUrl + path, COUNT, { pid: server.pid }));
    } finally {
      await server.stop();
    }
  }
  const tk = await serveWorkerd({ persistDir: join(dir, 'turnkeep'), vars: { STREAMS_PUBLIC: '1' } });
  try {
    const url = `${tk.baseUrl}/v1/stream/breakdown`;
    await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/json' } });
    await timedAppends(url, WARMUP);
    report('turnkeep', await timedAppends(url, COUNT, { pid: tk.pid }));
  } finally {
    await tk.stop();
  }
} finally {
  removeDir(dir);
}
