// An abort and load storm against the demo Worker in workerd (`wrangler dev`): `turns` turns
// over `sessions` sessions, all sessions at once, each turn one of (seeded):
//
// - `read`: reads its answer to the end;
// - `abort`: the client aborts the request after a random delay (often before the headers);
// - `cancel`: reads a few lines, then cancels the response body;
// - `stop`: reads a few lines, then sends `client.turn.stop` from another request;
// - `double`: two submits of different turns at the same moment (at most one is taken).
//
// A submit refused as busy (409: the session's previous turn still runs, e.g. after its client
// went away) is retried with a new turn id until taken. Afterwards, for every session:
//
// - leases: no turn leaked its lease — each accepted turn is in the terminal history as
//   `completed` (a lease that lapsed would be `indeterminate`), and every session accepts a
//   new turn within `leaseMs` of the storm's end (at once when its last turn had released);
// - messages: every acknowledged user message is saved (a turn answered 200 has its user
//   message in the session, `missingAcknowledged`), one user message per turn that ran, none for
//   a refused one, no id twice, and the saved messages equal the session stream's projection;
// - figures: time to the first snapshot line (p50/p99), workerd's resident memory and the wasm
//   linear memory of the Worker's isolate (the test hook `GET /__test/memory`) before and after.
import { readdirSync, readFileSync } from 'node:fs';
import { rng } from './rng.mjs';
import { submitBody } from './http-chat.mjs';

export const STORM_VARS = {
  TEST_HOOKS: '1',
  CHAT_TIMEOUT_MS: '5000',
  CHAT_CLEANUP_TIMEOUT_MS: '1000',
  DEMO_CHUNK_DELAY_MS: '5',
};
/** `limits::lease_ms(5000, 1000)`. */
export const STORM_LEASE_MS = 5000 + 3 * 1000;
const OPS = ['read', 'abort', 'cancel', 'stop', 'double'];
const TENANT = 'storm';
/**
 * Every storm request asks for an uncompressed answer. Node's fetch (the storm's client) can
 * leave `response.text()` pending for ever when its request aborts while a gzip body is being
 * decoded (nodejs/undici#4089; `node scripts/fetch-gzip-abort.mjs` shows it alone: about a third
 * of such reads hang, none with `identity`). The Worker gzips its JSON answers (the 409 a busy
 * session gets) for a client that accepts gzip, and the storm aborts requests on purpose: that
 * hung the storm test in CI twice. What is under test is the Worker, not the client's decoder.
 */
const auth = { authorization: `Bearer ${TENANT}`, 'accept-encoding': 'identity' };
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * How often a request is sent again after its connection dropped before any answer. The local
 * runtime drops a keep-alive connection whose next request waited behind a saturated event loop
 * past its 5 s idle limit (kj's HTTP pipeline timeout; scripts/keep-alive-drop.mjs shows it
 * alone): the request was never read. A browser resends a request whose reused connection closed
 * before any response byte; so does the storm, with the same turn id (a submit is idempotent by
 * turn id: a resent one that had run is refused as TURN_REPLAYED; a stop is idempotent).
 * Behind `wrangler dev` the same drop, on its proxy's hop, arrives as its 503 "Your worker
 * restarted mid-request" (`Retry-After: 0`), which asks for the same.
 */
const RESENDS_MAX = 2;
const DROPPED = new Set(['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE']);
const WRANGLER_DROP = 'Your worker restarted mid-request.';
/**
 * How long a request may wait for its answer, or an answer for its next bytes, before the storm
 * gives up on it (a turn's whole answer takes well under a second here; CHAT_TIMEOUT_MS is 5 s).
 * A request that stalls is aborted and named as a violation with what else was in flight, so
 * a hang fails the storm by name instead of holding it (and CI) until an outer timeout.
 */
export const STORM_STALL_MS = 60_000;
const WATCHDOG_INTERVAL_MS = 1000;

/**
 * A promise that rejects with `signal`'s reason once it aborts, and never settles otherwise.
 * Every wait on the network here races it, so no client-side bug like the one above can hold
 * the storm past its signal (the caller's abort, or the watchdog's after STORM_STALL_MS).
 */
function untilAborted(signal) {
  const aborted = new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
  aborted.catch(() => {}); // raced, never awaited alone
  return aborted;
}

/** `promise`, or a rejection once `signal` (if any) aborts, whichever comes first. */
function boundedBy(signal, promise) {
  return signal ? Promise.race([promise, untilAborted(signal)]) : promise;
}

/**
 * The storm's requests in flight: `watch(label, signal?)` registers one and returns
 * `{ signal, stalledSignal, progress(), phase(text), done() }`; its `signal` aborts when the
 * caller's does or when it stalls (`stalledSignal` only then); `phase` says where it stands.
 * `stalled()` aborts every request idle for `stallMs` and returns what it found.
 */
function inFlight(stallMs) {
  const live = new Map();
  let next = 0;
  const watch = (label, signal) => {
    const id = next++;
    const controller = new AbortController();
    const entry = { label, lastMs: performance.now(), startMs: performance.now(), controller, phase: 'sent', signal };
    live.set(id, entry);
    // Kept with the entry, so the combined signal lives as long as the request it bounds.
    entry.combined = signal ? AbortSignal.any([signal, controller.signal]) : controller.signal;
    return {
      signal: entry.combined,
      stalledSignal: controller.signal,
      progress: () => { entry.lastMs = performance.now(); },
      phase: (phase) => { entry.phase = phase; },
      done: () => live.delete(id),
    };
  };
  const describe = (now) => [...live.values()].map((e) =>
    `${e.label} (${e.phase}; ${Math.round(now - e.startMs)} ms in flight, ${Math.round(now - e.lastMs)} ms since its last bytes${e.signal?.aborted ? '; its caller aborted it' : ''})`);
  const stalled = () => {
    const now = performance.now();
    const stale = [...live.entries()].filter(([, e]) => now - e.lastMs > stallMs);
    if (stale.length === 0) return null;
    const report = { stale: stale.map(([, e]) => e.label), inFlight: describe(now) };
    for (const [id, e] of stale) {
      live.delete(id);
      e.controller.abort(new Error(`stalled ${stallMs} ms`));
    }
    return report;
  };
  return { watch, stalled };
}

/** `fetch`, sent again (at most RESENDS_MAX times) when the connection dropped before an answer; `onResend(reason)` counts. */
async function fetchResending(input, init, onResend = () => {}, phase = () => {}) {
  const bounded = (promise) => boundedBy(init.signal, promise);
  for (let attempt = 0; ; attempt += 1) {
    let reason;
    try {
      phase(`fetch attempt ${attempt}`);
      const response = await bounded(fetch(input, init));
      phase(`answered ${response.status}`);
      if (response.status !== 503 || !(await bounded(response.clone().text())).startsWith(WRANGLER_DROP)) return response;
      if (attempt >= RESENDS_MAX) return response;
      await bounded(response.text());
      reason = 'wrangler 503';
    } catch (error) {
      const code = error.cause?.code;
      if (init.signal?.aborted || !DROPPED.has(code) || attempt >= RESENDS_MAX) throw error;
      reason = code;
    }
    onResend(reason);
  }
}

function post(url, body, signal, onResend, phase) {
  return fetchResending(`${url}/api/chat`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body, signal }, onResend, phase);
}

/**
 * The acknowledged turns (turn id → its input, for every submit answered 200) whose user message
 * is not among `messages`. Inputs may repeat (a retried send keeps its text), so they are matched
 * as a multiset: n acknowledged turns with one text need n user messages with it.
 */
export function missingAcknowledged(acknowledged, messages) {
  const saved = new Map();
  for (const m of messages) if (m.role === 'user') saved.set(m.content, (saved.get(m.content) ?? 0) + 1);
  const missing = [];
  for (const [turnId, input] of acknowledged) {
    const left = saved.get(input) ?? 0;
    if (left === 0) missing.push(turnId);
    else saved.set(input, left - 1);
  }
  return missing;
}

async function view(url, sessionId, onResend, watch) {
  const w = watch(`GET session ${sessionId}`);
  try {
    const response = await fetchResending(`${url}/api/sessions/${sessionId}`, { headers: auth, signal: w.signal }, onResend);
    if (response.status !== 200) throw new Error(`GET session ${sessionId}: ${response.status}`);
    return await boundedBy(w.signal, response.json());
  } finally {
    w.done();
  }
}

/**
 * The resident memory (kB: current and peak) of the workerd process `groupPid`, or summed over
 * the workerd processes in its process group (`wrangler dev` runs two: its proxy and the Worker's
 * runtime); `processes` says how many were counted.
 */
export function workerdRss(groupPid) {
  const total = { rssKb: 0, peakKb: 0, processes: 0 };
  for (const pid of readdirPids()) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if ((pid !== groupPid && Number(fields[2]) !== groupPid) || !stat.includes('(workerd)')) continue;
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = (key) => Number(status.match(new RegExp(`${key}:\\s+(\\d+)`))?.[1]);
      total.rssKb += kb('VmRSS');
      total.peakKb += kb('VmHWM');
      total.processes += 1;
    } catch {
      // gone meanwhile
    }
  }
  return total.processes > 0 ? total : null;
}

function readdirPids() {
  return readdirSync('/proc').filter((n) => /^\d+$/.test(n)).map(Number);
}

/** The Worker isolate's `{ wasmMemoryBytes, heapLiveBytes, liveObjects: { chatSession, sessionStream } }` (the test hook). */
export async function isolateMemory(url) {
  // Bounded: an answer that never comes fails the storm by name instead of holding it.
  return (await fetch(`${url}/__test/memory`, { headers: { 'accept-encoding': 'identity' }, signal: AbortSignal.timeout(30_000) })).json();
}

export async function wasmMemoryBytes(url) {
  return (await isolateMemory(url)).wasmMemoryBytes;
}

/** Reads an NDJSON body: `{ lines, firstLineAt }`; stops after `limit` lines (then cancels); `w` is its request's watch. */
async function read(response, w, limit = Infinity) {
  const reader = response.body.getReader();
  const aborted = untilAborted(w.signal);
  const decoder = new TextDecoder();
  let text = '';
  let firstLineAt = null;
  let lines = 0;
  try {
    for (;;) {
      w.phase(`reading body after ${lines} lines`);
      const { value, done } = await Promise.race([reader.read(), aborted]);
      if (done) break;
      w.progress();
      text += decoder.decode(value, { stream: true });
      lines = text.split('\n').length - 1;
      if (lines > 0 && firstLineAt === null) firstLineAt = performance.now();
      if (lines >= limit) {
        await Promise.race([reader.cancel('the storm cancels'), aborted]);
        return { lines, firstLineAt, cancelled: true, last: null };
      }
    }
  } catch (error) {
    return { lines, firstLineAt, aborted: true, failure: error.cause?.code ?? error.message, last: null };
  } finally {
    w.done();
  }
  const all = text.trim().split('\n');
  return { lines, firstLineAt, last: JSON.parse(all.at(-1)) };
}

/**
 * Runs the storm; resolves with its figures and `violations` (empty when everything held).
 * `dev` is a started `wrangler dev` (tests/support/wrangler-dev.mjs) with STORM_VARS; `ops` the
 * kinds of turn to draw from (all of them unless a run isolates some); `stallMs` how long a
 * request may go without an answer or new bytes (STORM_STALL_MS unless a test of the watchdog
 * sets less).
 */
export async function runStorm({ dev, seed, turns, sessions, ops = OPS, log = () => {}, stallMs = STORM_STALL_MS }) {
  const random = rng(seed);
  const url = dev.url;
  const violations = [];
  const firstLineMs = [];
  const counts = Object.fromEntries([...OPS, 'busyRetries', 'doubleBothTaken', 'refused'].map((k) => [k, 0]));
  /** Requests sent again after a dropped connection, by what dropped it. */
  const resent = {};
  const onResend = (reason) => { resent[reason] = (resent[reason] ?? 0) + 1; };
  const { watch, stalled } = inFlight(stallMs);
  let stalls = 0;
  const watchdog = setInterval(() => {
    const found = stalled();
    if (!found) return;
    stalls += 1;
    violations.push(`stalled for ${stallMs} ms: ${found.stale.join('; ')}; in flight then: ${found.inFlight.join('; ')}`);
  }, WATCHDOG_INTERVAL_MS);
  watchdog.unref();
  const isolate = async () => { const m = await isolateMemory(url); return { wasmBytes: m.wasmMemoryBytes, heapLiveBytes: m.heapLiveBytes, liveObjects: m.liveObjects }; };
  const memory = { before: { ...(await isolate()), ...workerdRss(dev.pid) } };
  const state = Array.from({ length: sessions }, (_, i) => ({
    id: `storm${seed}-s${i}`, taken: new Set(), refused: new Set(), unknown: new Set(), acknowledged: new Map(), lastEnd: 0,
  }));
  const t0 = performance.now();
  let sampledPeak = 0;
  const sampler = setInterval(() => {
    const rss = workerdRss(dev.pid);
    if (rss) sampledPeak = Math.max(sampledPeak, rss.rssKb);
  }, 250);

  /**
   * One submit; returns `{ status, response, w }` (status 0: aborted before an answer); `w` is
   * its watch, which the caller ends by reading the answer (`read`, or `w.done()`).
   */
  const submit = async (session, input, signal, label = 'submit') => {
    const turnId = `st-${session.id}-${Math.floor(random.next() * 1e12).toString(36)}`;
    const started = performance.now();
    const w = watch(`${label} ${turnId}`, signal);
    let wasResent = false;
    try {
      const response = await post(url, submitBody(session.id, input, turnId), w.signal, (reason) => {
        wasResent = true;
        onResend(reason);
      }, w.phase);
      if (response.status === 200) {
        session.taken.add(turnId);
        session.acknowledged.set(turnId, input);
      }
      else if (response.status === 409 && wasResent) session.unknown.add(turnId); // the dropped send may have run it
      else if (response.status === 409) session.refused.add(turnId);
      else {
        violations.push(`${session.id}: a submit answered ${response.status} ${await boundedBy(w.signal, response.text()).catch((e) => e.message)}`);
        w.done();
        return { turnId, status: response.status, response: null, started };
      }
      return { turnId, status: response.status, response, started, session, w };
    } catch (error) {
      w.done();
      session.unknown.add(turnId); // no answer: taken or not, the session says
      // Only the storm's own aborts may end a submit without an answer (a stall is named by the watchdog).
      if (!signal?.aborted && !w.stalledSignal.aborted) violations.push(`${session.id}: a submit failed (${error.cause?.code ?? error.message})`);
      return { turnId, status: 0, started };
    }
  };
  /** Reads a 409's body, ending its watch. */
  const drain = (r) => {
    r.w.phase('draining');
    return boundedBy(r.w.signal, r.response.text()).catch(() => {}).finally(() => r.w.done());
  };
  /** Takes a reading's first-line time; a body that broke off is a violation unless the storm aborted it. */
  const timeFirst = (result, reading, signal) => {
    if (reading.firstLineAt !== null) firstLineMs.push(reading.firstLineAt - result.started);
    if (reading.aborted && !signal?.aborted && !result.w.stalledSignal.aborted) violations.push(`${result.session.id}: the answer to ${result.turnId} broke off (${reading.failure})`);
  };

  const one = async (session, n) => {
    const op = random.pick(ops);
    counts[op] += 1;
    const input = n % 4 === 3 ? '/tool cats' : `turn ${n} of ${session.id} ${'w '.repeat(random.int(5, 40))}`.trim();
    for (let attempt = 0; ; attempt += 1) {
      if (op === 'double') {
        const [a, b] = await Promise.all([submit(session, input, undefined, 'double'), submit(session, `${input} again`, undefined, 'double')]);
        const taken = [a, b].filter((r) => r.status === 200);
        if (taken.length > 1) counts.doubleBothTaken += 1;
        for (const r of [a, b]) if (r.status === 200) timeFirst(r, await read(r.response, r.w)); else if (r.status === 409) await drain(r);
        if (taken.length > 0) return;
      } else {
        const controller = new AbortController();
        if (op === 'abort') setTimeout(() => controller.abort(), random.int(0, 150));
        const result = await submit(session, input, controller.signal, op);
        if (result.status === 0) return;
        if (result.status === 200) {
          if (op === 'stop') {
            const reading = read(result.response, result.w);
            await sleep(random.int(0, 60));
            const stopEvent = { ...JSON.parse(submitBody(session.id, 'x', result.turnId)), event: 'client.turn.stop', payload: {} };
            const ws = watch(`stop of ${result.turnId}`);
            try {
              const answer = await post(url, JSON.stringify(stopEvent), ws.signal, onResend);
              if (![200, 202].includes(answer.status)) violations.push(`${session.id}: stop answered ${answer.status}`);
              await boundedBy(ws.signal, answer.text());
            } catch (error) {
              if (!ws.stalledSignal.aborted) violations.push(`${session.id}: a stop failed (${error.cause?.code ?? error.message})`);
            } finally {
              ws.done();
            }
            timeFirst(result, await reading, controller.signal);
          } else {
            timeFirst(result, await read(result.response, result.w, op === 'cancel' ? random.int(1, 4) : Infinity), controller.signal);
          }
          return;
        }
        if (result.status !== 409) return;
        await drain(result); // the abort timer may fire meanwhile
      }
      counts.busyRetries += 1;
      if (attempt > 400) {
        violations.push(`${session.id}: busy for more than 400 retries`);
        return;
      }
      await sleep(20);
    }
  };

  const perSession = Math.ceil(turns / sessions);
  await Promise.all(state.map(async (session, i) => {
    for (let n = 0; n < perSession && i * perSession + n < turns; n += 1) await one(session, n);
  }));
  clearInterval(sampler);
  const stormMs = performance.now() - t0;
  log(`storm: ${turns} turns over ${sessions} sessions in ${(stormMs / 1000).toFixed(1)} s`);
  const report = () => {
    const sorted = firstLineMs.slice().sort((a, b) => a - b);
    const pct = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
    freeAfterMs.sort((a, b) => a - b);
    clearInterval(watchdog);
    return {
      turns, sessions, stormMs, counts, resent, violations, memory,
      firstLine: { n: sorted.length, p50Ms: pct(50), p99Ms: pct(99), maxMs: sorted.at(-1) },
      freeAfter: { maxMs: freeAfterMs.at(-1), p50Ms: freeAfterMs[Math.floor(freeAfterMs.length / 2)] },
      accepted: state.reduce((n, s) => n + s.taken.size, 0),
    };
  };
  const freeAfterMs = [];
  // A Worker that stalled once is not asked again session by session (each ask could stall too).
  if (stalls > 0) {
    memory.after = memory.before;
    return report();
  }

  // Every session accepts a new turn within the lease (at once when its last turn released).
  const end = performance.now();
  await Promise.all(state.map(async (session) => {
    for (;;) {
      const result = await submit(session, `after the storm ${session.id}`, undefined, 'after the storm');
      if (result.status === 200) {
        await read(result.response, result.w);
        freeAfterMs.push(performance.now() - end);
        return;
      }
      if (result.status === 409) await drain(result);
      if (performance.now() - end > STORM_LEASE_MS + 2000) {
        violations.push(`${session.id}: still busy ${STORM_LEASE_MS} ms after the storm (a leaked lease)`);
        return;
      }
      await sleep(50);
    }
  }));
  memory.after = { ...(await isolate()), ...workerdRss(dev.pid), sampledPeakKb: sampledPeak };

  for (const session of state) {
    const v = await view(url, session.id, onResend, watch).catch((error) => error);
    if (v instanceof Error) {
      violations.push(`${session.id}: its view failed (${v.message})`);
      continue;
    }
    const fail = (m) => violations.push(`${session.id}: ${m}`);
    const terminal = new Map(v.session.terminalTurns.map((t) => [t.turnId, t.outcome]));
    for (const id of session.taken) {
      if (terminal.get(id) !== 'completed') fail(`accepted turn ${id} ended ${terminal.get(id) ?? 'unrecorded'} (a lease not released)`);
    }
    for (const id of session.refused) if (terminal.has(id)) fail(`refused turn ${id} is in the history`);
    for (const [id, outcome] of terminal) if (outcome !== 'completed') fail(`turn ${id} ended ${outcome}`);
    const ran = [...terminal.keys()].filter((id) => session.taken.has(id) || session.unknown.has(id)).length;
    const users = v.messages.filter((m) => m.role === 'user').length;
    if (users !== ran) fail(`${users} user messages for ${ran} turns that ran`);
    for (const id of missingAcknowledged(session.acknowledged, v.messages)) fail(`the user message of acknowledged turn ${id} is missing`);
    const ids = v.messages.map((m) => m.id);
    if (new Set(ids).size !== ids.length) fail('a message id appears twice');
    if (JSON.stringify(v.messages) !== JSON.stringify(v.streamMessages)) fail("saved messages and the stream's projection disagree");
    if (v.session.activeTurn !== null) fail('a lease is still held after the last turn');
    counts.refused += session.refused.size;
  }
  return report();
}
