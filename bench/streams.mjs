// Benchmark (a script, not a test): the session stream Worker on local workerd against the
// Node reference server @durable-streams/server (in-memory and file-backed), on loopback.
//
//   node bench/streams.mjs            (needs pkg/ built: npm run build)
//
// Per server: 2,000 small JSON appends one at a time (each awaited), the same 2,000 through the
// batching IdempotentProducer of @durable-streams/client, and a catch-up read of everything.
// Prints appends/s (read-back: messages/s) and the ratios turnkeep / reference. Each server runs
// in its own process; this process only drives HTTP. turnkeep runs three ways: the workerd binary
// from a generated config (no dev tooling in front), Miniflare, and wrangler dev (whose reloading
// proxy adds about 3 ms per request). Every append is durable on both sides before it is
// acknowledged: workerd commits SQLite (one fsync per append), the file-backed reference writes
// its segment file and LMDB (three fdatasync per append, counted with strace on this machine).
// Environment: BENCH_APPENDS, BENCH_ROUNDS, BENCH_BATCH_BYTES.
import { spawn } from 'node:child_process';
import { DurableStream, IdempotentProducer } from '@durable-streams/client';
import { ROOT, removeDir, startMiniflare, startWorker, startWorkerd, tempDir } from '../tests/streams-conformance/harness.mjs';

const APPENDS = Number(process.env.BENCH_APPENDS ?? 2000);
const WARMUP = 200;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/**
 * The batching producer: batches of at most 4 KiB (about 45 of these messages), up to 5 in
 * flight. With the client's defaults (1 MiB batches, 5 ms linger) all 2,000 appends leave in a
 * single request and the figure measures the linger timer, not the server.
 */
const PRODUCER = { epoch: 0, maxBatchBytes: Number(process.env.BENCH_BATCH_BYTES ?? 4096), lingerMs: 1, maxInFlight: 5 };

/** Starts the reference server in a child process; resolves with its URL and a stop(). */
async function startReference(dataDir) {
  const script = `
    import { DurableStreamTestServer } from '@durable-streams/server';
    const server = new DurableStreamTestServer({ host: '127.0.0.1', port: 0, longPollTimeout: 3000,
      ${dataDir ? `dataDir: ${JSON.stringify(dataDir)},` : ''} });
    console.log('URL ' + await server.start());
    process.on('SIGTERM', async () => { await server.stop(); process.exit(0); });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /URL (\S+)/.exec(out);
      if (m) resolve(m[1].replace(/\/$/, ''));
    });
    child.once('exit', () => reject(new Error(`reference server exited: ${out}`)));
  });
  return { baseUrl: url, stop: async () => { child.kill('SIGTERM'); await exited; } };
}

const message = (i) => JSON.stringify({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: `word ${i} ` });

async function createStream(baseUrl, name) {
  return DurableStream.create({ url: `${baseUrl}/v1/stream/${name}`, contentType: 'application/json' });
}

/** Appends one at a time, each acknowledged before the next is sent. */
async function sequential(baseUrl, name, count) {
  await createStream(baseUrl, name);
  const url = `${baseUrl}/v1/stream/${name}`;
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: message(i) });
    if (r.status !== 204 && r.status !== 200) throw new Error(`append ${i}: HTTP ${r.status}`);
  }
  return count / ((performance.now() - started) / 1000);
}

/** The client's batching, idempotent producer: fire-and-forget appends, then flush. */
async function batched(baseUrl, name, count) {
  const handle = await createStream(baseUrl, name);
  let failure;
  const producer = new IdempotentProducer(handle, 'bench-writer', { ...PRODUCER, onError: (e) => { failure = e; } });
  const started = performance.now();
  for (let i = 0; i < count; i++) producer.append(message(i));
  await producer.flush();
  const rate = count / ((performance.now() - started) / 1000);
  await producer.detach();
  if (failure) throw failure;
  return rate;
}

/** Reads the whole stream back with catch-up GETs; returns messages/s and checks the count. */
async function readBack(baseUrl, name, expected) {
  const url = `${baseUrl}/v1/stream/${name}`;
  const started = performance.now();
  let offset = '-1';
  let items = 0;
  for (;;) {
    const r = await fetch(`${url}?offset=${encodeURIComponent(offset)}`);
    const batch = await r.json();
    items += batch.length;
    offset = r.headers.get('stream-next-offset');
    if (r.headers.get('stream-up-to-date') === 'true') break;
  }
  if (items !== expected) throw new Error(`read back ${items} messages, expected ${expected}`);
  return items / ((performance.now() - started) / 1000);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n) => `${Math.round(n).toLocaleString('en-US')}/s`.padStart(14);

/** One round of the three workloads on one server. */
async function round(server, index) {
  const tag = `${Date.now()}-${index}`;
  server.runs.sequential.push(await sequential(server.baseUrl, `seq-${tag}`, APPENDS));
  server.runs.batched.push(await batched(server.baseUrl, `batch-${tag}`, APPENDS));
  server.runs.read.push(await readBack(server.baseUrl, `seq-${tag}`, APPENDS));
}

async function main() {
  const persist = tempDir('turnkeep-bench-');
  const vars = { STREAMS_PUBLIC: '1', STREAMS_LONG_POLL_MS: '3000' };
  // All servers run at once and the rounds alternate between them, so a busy moment on this
  // shared machine (disk flushes, other processes) hits every server alike.
  const starters = [
    ['turnkeep (workerd)', () => startWorkerd({ persistDir: `${persist}/workerd`, vars })],
    ['turnkeep (workerd via Miniflare)', () => startMiniflare({ persistDir: `${persist}/miniflare`, vars })],
    ['turnkeep (wrangler dev)', () => startWorker({ persistDir: `${persist}/wrangler`, vars })],
    ['reference, file-backed (fsync)', () => startReference(`${persist}/reference`)],
    ['reference, in-memory', () => startReference(null)],
  ];
  const servers = [];
  try {
    for (const [label, start] of starters) {
      const server = await start();
      servers.push({ label, ...server, runs: { sequential: [], batched: [], read: [] } });
      await sequential(server.baseUrl, `warmup-${Date.now()}`, WARMUP);
    }
    for (let i = 0; i < ROUNDS; i++) {
      for (const server of servers) await round(server, i);
    }
  } finally {
    for (const server of servers) await server.stop();
    removeDir(persist);
  }
  console.log(`${APPENDS} small JSON appends per run, median of ${ROUNDS} interleaved rounds, loopback`);
  console.log(`batching producer: batches <= ${PRODUCER.maxBatchBytes} B, linger ${PRODUCER.lingerMs} ms, ${PRODUCER.maxInFlight} in flight\n`);
  console.log(`${'server'.padEnd(34)} ${'one at a time'.padStart(14)} ${'batching'.padStart(14)} ${'read-back'.padStart(14)}`);
  const results = servers.map(({ label, runs }) => {
    const r = { label, sequential: median(runs.sequential), batched: median(runs.batched), read: median(runs.read) };
    console.log(`${label.padEnd(34)} ${fmt(r.sequential)} ${fmt(r.batched)} ${fmt(r.read)}`);
    return r;
  });
  const [ours, viaMiniflare, dev, file, memory] = results;
  const ratio = (a, b) => `${(a / b).toFixed(2)}x`.padStart(14);
  const line = (label, a, b) =>
    console.log(`${label.padEnd(34)} ${ratio(a.sequential, b.sequential)} ${ratio(a.batched, b.batched)} ${ratio(a.read, b.read)}`);
  console.log('');
  line('workerd / reference file-backed', ours, file);
  line('workerd / reference in-memory', ours, memory);
  line('Miniflare / reference file-backed', viaMiniflare, file);
  line('wrangler dev / reference file', dev, file);
}

await main();
