// The one-at-a-time append loop the stream benchmarks share (bench/streams.mjs,
// bench/append-ab.mjs, bench/append-breakdown.mjs): the same message, the same client (global
// fetch, keep-alive), each append acknowledged before the next is sent.
import { cpuMs } from './proc-cpu.mjs';

/** The `i`-th small JSON message every append benchmark sends. */
export const message = (i) => JSON.stringify({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: `word ${i} ` });

/**
 * POSTs `count` messages to `url` one at a time, reading each answer; throws on a status not in
 * `statuses`. Returns `{ rate }` (appends/s), `p50` and `p90` (ms per append) and, when the
 * server's `pid` is given, `cpu`: its CPU time per append in microseconds (from /proc).
 */
export async function timedAppends(url, count, { pid, statuses = [200, 204] } = {}) {
  const times = [];
  const cpuBefore = pid ? cpuMs(pid) : 0;
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: message(i) });
    await r.arrayBuffer();
    if (!statuses.includes(r.status)) throw new Error(`append ${i}: HTTP ${r.status}`);
    times.push(performance.now() - t);
  }
  const rate = count / ((performance.now() - started) / 1000);
  const cpu = pid ? ((cpuMs(pid) - cpuBefore) * 1000) / count : undefined;
  times.sort((a, b) => a - b);
  return { rate, cpu, p50: times[Math.floor(count * 0.5)], p90: times[Math.floor(count * 0.9)] };
}
