// Benchmark (a script, not a test): Durable Streams fan-out and concurrent producers, turnkeep's
// session stream Worker on the workerd binary against the reference server's file-backed mode
// (@durable-streams/server with a data dir: fsync before the acknowledgement, as workerd's output
// gate), both on loopback, both driven by this one Node process in the same run.
//
//   node bench/fanout.mjs            (needs pkg-worker/ built: bash scripts/build.sh)
//
// 1. Fan-out: READERS live SSE readers (`?offset=now&live=sse`) on one stream; APPENDS small JSON
//    appends, one at a time, each acknowledged, then a pause so every reader is idle again. For
//    each (append, reader) pair: the time from the append's acknowledgement reaching this client
//    to that reader's receiving it (negative: the reader had it before the writer's answer
//    arrived). p50, p99 and max over all pairs.
// 2. Concurrent producers: STREAMS streams, each written by its own fenced producer
//    (IdempotentProducer: Producer-Id / Epoch / Seq) with IN_FLIGHT appends in flight and one
//    message per request (the chat publisher's pattern); appends/s over all streams.
// The client's own cost (fetch, SSE parsing) is in both servers' figures alike; on this shared
// 2-core machine the readers, the client and the server compete for the same cores.
// Environment: BENCH_READERS (100), BENCH_FANOUT_APPENDS (200), BENCH_STREAMS (16),
// BENCH_IN_FLIGHT (5), BENCH_PRODUCER_APPENDS (300 per stream), BENCH_ROUNDS (3).
import { DurableStream, IdempotentProducer } from '@durable-streams/client';
import { removeDir, tempDir } from '../tests/streams-conformance/harness.mjs';
import { serveWorkerd } from '../tests/support/workerd-serve.mjs';
import { startReference } from './reference-server.mjs';

const READERS = Number(process.env.BENCH_READERS ?? 100);
const FANOUT_APPENDS = Number(process.env.BENCH_FANOUT_APPENDS ?? 200);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 16);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 5);
const PRODUCER_APPENDS = Number(process.env.BENCH_PRODUCER_APPENDS ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PAUSE_MS = 5;

const streamUrl = (baseUrl, name) => `${baseUrl}/v1/stream/${name}`;
const create = (url) => DurableStream.create({ url, contentType: 'application/json' });
const message = (i) => JSON.stringify({ i, text: `message ${i} of the fan-out benchmark` });

/**
 * One live SSE reader: calls `onItem(i, nowMs)` for every message of every `event: data`.
 * Resolves `ready` once the response headers arrived (the reader is attached).
 */
function sseReader(url, onItem, signal) {
  let attached;
  const ready = new Promise((resolve) => (attached = resolve));
  const done = (async () => {
    const response = await fetch(`${url}?offset=now&live=sse`, { signal });
    if (response.status !== 200) throw new Error(`SSE reader: HTTP ${response.status}`);
    attached();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const bytes of response.body) {
        const now = performance.now();
        buffer += decoder.decode(bytes, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!event.startsWith('event: data')) continue;
          const data = event.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5)).join('\n');
          const parsed = JSON.parse(data);
          for (const item of Array.isArray(parsed) ? parsed : [parsed]) onItem(item.i, now);
        }
      }
    } catch (error) {
      if (!signal.aborted) throw error;
    }
  })();
  return { ready, done };
}

/** Fan-out latencies (ms) of one round: ack → each reader, over all pairs. */
async function fanout(baseUrl, name) {
  const url = streamUrl(baseUrl, name);
  await create(url);
  const received = Array.from({ length: FANOUT_APPENDS }, () => []);
  const stop = new AbortController();
  const readers = Array.from({ length: READERS }, () => sseReader(url, (i, now) => received[i]?.push(now), stop.signal));
  await Promise.all(readers.map((r) => r.ready));
  const acked = [];
  const sent = [];
  for (let i = 0; i < FANOUT_APPENDS; i++) {
    sent.push(performance.now());
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: message(i) });
    acked.push(performance.now());
    await r.arrayBuffer();
    if (r.status !== 204 && r.status !== 200) throw new Error(`append ${i}: HTTP ${r.status}`);
    // Until every reader has it (bounded), then a pause: one append in the air at a time.
    const deadline = performance.now() + 2000;
    while (received[i].length < READERS && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1));
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
  }
  stop.abort();
  await Promise.allSettled(readers.map((r) => r.done));
  const latencies = [];
  const fromSend = [];
  let missing = 0;
  for (let i = 0; i < FANOUT_APPENDS; i++) {
    missing += READERS - received[i].length;
    for (const t of received[i]) {
      latencies.push(t - acked[i]);
      fromSend.push(t - sent[i]);
    }
  }
  return { latencies, fromSend, missing };
}

/** Appends/s of STREAMS fenced producers, IN_FLIGHT requests each, one message per request. */
async function producers(baseUrl, tag) {
  const handles = await Promise.all(Array.from({ length: STREAMS }, (_, s) => create(streamUrl(baseUrl, `prod-${tag}-${s}`))));
  let failure;
  const options = { epoch: 0, maxBatchBytes: 1, lingerMs: 0, maxInFlight: IN_FLIGHT, onError: (e) => { failure = e; } };
  const writers = handles.map((h, s) => new IdempotentProducer(h, `writer-${s}`, options));
  const started = performance.now();
  await Promise.all(writers.map(async (w) => {
    for (let i = 0; i < PRODUCER_APPENDS; i++) w.append(message(i));
    await w.flush();
  }));
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(writers.map((w) => w.detach()));
  if (failure) throw failure;
  return (STREAMS * PRODUCER_APPENDS) / seconds;
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const persist = tempDir('turnkeep-fanout-');
  const servers = [];
  try {
    servers.push({ label: 'turnkeep (workerd)', ...(await serveWorkerd({ persistDir: `${persist}/workerd`, vars: { STREAMS_PUBLIC: '1', STREAMS_LONG_POLL_MS: '3000' } })) });
    servers.push({ label: 'reference, file-backed', ...(await startReference(`${persist}/reference`)) });
    for (const s of servers) Object.assign(s, { latencies: [], fromSend: [], missing: 0, rates: [] });
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of servers) {
        const f = await fanout(s.baseUrl, `fan-${round}`);
        s.latencies.push(...f.latencies);
        s.fromSend.push(...f.fromSend);
        s.missing += f.missing;
        s.rates.push(await producers(s.baseUrl, `${round}`));
      }
    }
  } finally {
    for (const s of servers) await s.stop();
    removeDir(persist);
  }
  console.log(`Durable Streams fan-out and concurrent producers, ${ROUNDS} interleaved rounds, loopback, Node ${process.version}`);
  console.log(`\n1. ${READERS} SSE readers on one stream, ${FANOUT_APPENDS} appends per round one at a time: ms from the append's acknowledgement to each reader`);
  console.log('   (negative: the reader had it before the writer had its answer); the same from the append\'s request start');
  console.log(`${'server'.padEnd(26)} ${'p50'.padStart(8)} ${'p99'.padStart(8)} ${'max'.padStart(8)}   from send: ${'p50'.padStart(8)} ${'p99'.padStart(8)} ${'pairs'.padStart(8)} ${'missing'.padStart(8)}`);
  for (const s of servers) {
    const sorted = s.latencies.sort((a, b) => a - b);
    const send = s.fromSend.sort((a, b) => a - b);
    const ms = (x) => x.toFixed(2).padStart(8);
    console.log(`${s.label.padEnd(26)} ${ms(quantile(sorted, 0.5))} ${ms(quantile(sorted, 0.99))} ${ms(sorted.at(-1))}   ${''.padEnd(10)} ${ms(quantile(send, 0.5))} ${ms(quantile(send, 0.99))} ${String(sorted.length).padStart(8)} ${String(s.missing).padStart(8)}`);
  }
  console.log(`\n2. ${STREAMS} streams × ${IN_FLIGHT} fenced appends in flight, one message per request, ${PRODUCER_APPENDS} per stream: appends/s (median of rounds)`);
  for (const s of servers) console.log(`${s.label.padEnd(26)} ${Math.round(median(s.rates)).toLocaleString('en-US').padStart(10)}/s   rounds: ${s.rates.map((r) => Math.round(r)).join(', ')}`);
  const [ours, reference] = servers;
  console.log(`   turnkeep / reference file-backed: ${(median(ours.rates) / median(reference.rates)).toFixed(2)}×`);
}

await main();
