// Benchmark (a script, not a test): the session stream Worker on local workerd against the
// Node reference server @durable-streams/server (in-memory and file-backed), on loopback.
//
//   node bench/streams.mjs            (needs pkg/ built: npm run build)
//
// Per server: 2,000 small JSON appends one at a time (each awaited; once with fetch, once with
// node:http and a keep-alive Agent), the same 2,000 through the batching IdempotentProducer of @durable-streams/client, and a catch-up read of everything.
// Prints appends/s (read-back: messages/s), the server process's CPU time per append, and the
// ratios turnkeep / reference. Each server runs in its own process; this process is the one
// client of all of them: the same global fetch (undici, keep-alive, one connection reused) and
// the same producer settings, so the client's own cost is in every figure alike. It is not
// small: on this 2-core machine fetch spends ~250 us of the ~700 us of one turnkeep append
// (node:http ~60 us; the ratio barely moves between the two), and the batching runs are bounded
// by the client as much as by the servers (workerd is about half busy there), which narrows
// that ratio; the CPU column shows the servers alone.
// turnkeep runs three ways: the workerd binary from a generated config (no dev tooling in front;
// the headline), Miniflare, and wrangler dev (whose reloading proxy adds ~3 ms per request).
//
// Durability is the same promise on both durable sides: an append is on disk before it is
// acknowledged. workerd commits each append's SQLite transaction (WAL, one fsync) and its output
// gate holds the response until that commit is done (tests/js/streams-durability.test.mjs kills
// workerd with SIGKILL after acks and reads everything back); the file-backed reference writes
// its segment file and LMDB (three fdatasync per append, counted with strace on this machine).
// The in-memory reference stores nothing durably and is shown only as a ceiling.
// Where one turnkeep append's time goes: bench/append-breakdown.mjs.
// Environment: BENCH_APPENDS, BENCH_ROUNDS, BENCH_BATCH_BYTES.
import { Agent, request as httpRequest } from 'node:http';
import { DurableStream, IdempotentProducer } from '@durable-streams/client';
import { removeDir, startWorker, tempDir } from '../tests/streams-conformance/harness.mjs';
import { startReference } from './reference-server.mjs';
import { startWorker as startMiniflare } from '../tests/workerd/harness.mjs';
import { message, timedAppends } from './appends.mjs';
import { cpuMs } from './proc-cpu.mjs';
import { serveWorkerd } from '../tests/support/workerd-serve.mjs';

const APPENDS = Number(process.env.BENCH_APPENDS ?? 2000);
const WARMUP = 200;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/**
 * The batching producer: batches of at most 4 KiB (about 45 of these messages), up to 5 in
 * flight. With the client's defaults (1 MiB batches, 5 ms linger) all 2,000 appends leave in a
 * single request and the figure measures the linger timer, not the server.
 */
const PRODUCER = { epoch: 0, maxBatchBytes: Number(process.env.BENCH_BATCH_BYTES ?? 4096), lingerMs: 1, maxInFlight: 5 };

async function createStream(baseUrl, name) {
  return DurableStream.create({ url: `${baseUrl}/v1/stream/${name}`, contentType: 'application/json' });
}

/** Appends one at a time, each acknowledged before the next is sent. */
async function sequential(baseUrl, name, count) {
  await createStream(baseUrl, name);
  return (await timedAppends(`${baseUrl}/v1/stream/${name}`, count)).rate;
}

/**
 * The same one-at-a-time appends through node:http with a keep-alive Agent (one socket): a much
 * cheaper client than fetch (~60 us instead of ~250 us a request here), so more of each figure
 * is the server's own time.
 */
async function sequentialLean(baseUrl, name, count) {
  await createStream(baseUrl, name);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const url = `${baseUrl}/v1/stream/${name}`;
  const post = (body) =>
    new Promise((resolve, reject) => {
      const req = httpRequest(url, {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      }, (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode));
      });
      req.once('error', reject);
      req.end(body);
    });
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const status = await post(message(i));
    if (status !== 204 && status !== 200) throw new Error(`append ${i}: HTTP ${status}`);
  }
  const rate = count / ((performance.now() - started) / 1000);
  agent.destroy();
  return rate;
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

/**
 * Runs `work` and records the server process's CPU time (user + system, all its
 * threads, from /proc) when its pid is known (the workerd binary and the reference servers;
 * Miniflare and wrangler dev run workerd under other processes, so not for those).
 */
async function withCpu(server, kind, work) {
  const before = server.pid ? cpuMs(server.pid) : 0;
  const rate = await work();
  if (server.pid) server.runs[`${kind}Cpu`].push(cpuMs(server.pid) - before);
  return rate;
}

/** One round of the three workloads on one server. */
async function round(server, index) {
  const tag = `${Date.now()}-${index}`;
  server.runs.sequential.push(await withCpu(server, 'sequential', () => sequential(server.baseUrl, `seq-${tag}`, APPENDS)));
  server.runs.lean.push(await sequentialLean(server.baseUrl, `lean-${tag}`, APPENDS));
  server.runs.batched.push(await withCpu(server, 'batched', () => batched(server.baseUrl, `batch-${tag}`, APPENDS)));
  server.runs.read.push(await readBack(server.baseUrl, `seq-${tag}`, APPENDS));
}

async function main() {
  const persist = tempDir('turnkeep-bench-');
  const vars = { STREAMS_PUBLIC: '1', STREAMS_LONG_POLL_MS: '3000' };
  // All servers run at once and the rounds alternate between them, so a busy moment on this
  // shared machine (disk flushes, other processes) hits every server alike.
  const starters = [
    ['turnkeep (workerd)', () => serveWorkerd({ persistDir: `${persist}/workerd`, vars })],
    ['turnkeep (workerd via Miniflare)', async () => {
      const mf = await startMiniflare({ persistDir: `${persist}/miniflare`, bindings: vars });
      return { baseUrl: mf.url, stop: mf.stop };
    }],
    ['turnkeep (wrangler dev)', () => startWorker({ persistDir: `${persist}/wrangler`, vars })],
    ['reference, file-backed (fsync)', () => startReference(`${persist}/reference`)],
    ['reference, in-memory', () => startReference(null)],
  ];
  const servers = [];
  try {
    for (const [label, start] of starters) {
      const server = await start();
      servers.push({ label, ...server, runs: { sequential: [], lean: [], batched: [], read: [], sequentialCpu: [], batchedCpu: [] } });
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
  console.log(`batching producer: batches <= ${PRODUCER.maxBatchBytes} B, linger ${PRODUCER.lingerMs} ms, ${PRODUCER.maxInFlight} in flight`);
  console.log('client: this one Node process for every server; fetch (keep-alive) or node:http (keep-alive Agent)\n');
  // CPU per append over all rounds together (/proc counts in 10 ms ticks; one run is too coarse).
  const perAppendUs = (msList) => (msList.length ? (msList.reduce((a, b) => a + b, 0) * 1000) / (APPENDS * msList.length) : NaN);
  const cpuCol = (xs) => (xs.length ? `${perAppendUs(xs).toFixed(1)} us` : '-').padStart(12);
  console.log(`${''.padEnd(34)} ${'one at a time'.padStart(14)} ${'one at a time'.padStart(14)}`);
  console.log(`${'server'.padEnd(34)} ${'(fetch)'.padStart(14)} ${'(node:http)'.padStart(14)} ${'batching'.padStart(14)} ${'read-back'.padStart(14)}` +
    `  ${'server CPU per append:'} ${'one at a time'.padStart(12)} ${'batching'.padStart(12)}`);
  const results = servers.map(({ label, runs }) => {
    const r = {
      label, sequential: median(runs.sequential), lean: median(runs.lean), batched: median(runs.batched), read: median(runs.read),
      sequentialCpu: perAppendUs(runs.sequentialCpu), batchedCpu: perAppendUs(runs.batchedCpu),
    };
    console.log(`${label.padEnd(34)} ${fmt(r.sequential)} ${fmt(r.lean)} ${fmt(r.batched)} ${fmt(r.read)}  ${''.padEnd(22)} ${cpuCol(runs.sequentialCpu)} ${cpuCol(runs.batchedCpu)}`);
    return r;
  });
  const [ours, viaMiniflare, dev, file, memory] = results;
  const ratio = (a, b) => `${(a / b).toFixed(2)}x`.padStart(14);
  const line = (label, a, b) =>
    console.log(`${label.padEnd(34)} ${ratio(a.sequential, b.sequential)} ${ratio(a.lean, b.lean)} ${ratio(a.batched, b.batched)} ${ratio(a.read, b.read)}`);
  console.log('\nthroughput ratios (higher is better for turnkeep)');
  line('workerd / reference file-backed', ours, file);
  line('workerd / reference in-memory', ours, memory);
  line('Miniflare / reference file-backed', viaMiniflare, file);
  line('wrangler dev / reference file', dev, file);
  const cpuRatio = (a, b) => `${(b / a).toFixed(2)}x`.padStart(14);
  console.log('server CPU per append, reference file-backed / turnkeep workerd (higher is better for turnkeep)');
  console.log(`${''.padEnd(34)} ${cpuRatio(ours.sequentialCpu, file.sequentialCpu)} ${cpuRatio(ours.batchedCpu, file.batchedCpu)}`);
}

await main();
