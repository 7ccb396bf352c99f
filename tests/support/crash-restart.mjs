// Crash and restart mid-turn, against the demo Worker's test build (tests/support/test-hooks-worker.mjs,
// for its hold points) in workerd (`wrangler dev --persist-to`):
// each cycle starts turns on a few sessions, lets each reach its seeded kill point, SIGKILLs
// the whole process group (wrangler and workerd: no shutdown code runs), and starts again on
// the same persisted directory. The next cycle first checks every session of the last one:
//
// - usable: a live lease refuses a new turn until its recorded `expiresAt` and accepts one then;
//   a session without a live lease accepts a new turn at once;
// - the terminal history records the crashed turn once its claim was stored (`indeterminate`
//   when its lease lapsed: nobody knows how it ended), and never a turn whose claim was not;
// - the saved messages and the projection of the session stream agree once the next turn ran,
//   and no message appears twice;
// - nothing a reader was served before the kill is gone (the stream as read just before the
//   kill is a prefix of the stream after it); an acknowledged stop request is still there;
// - a separate writer appends to a stream with producer headers all along: every append that
//   was acknowledged is there after the restart, once, in order (the unacknowledged one is
//   resent with the same seq and lands at most once).
//
// - exactly once: the demo's `lookup` tool reports every run to a ledger this harness serves
//   (outside workerd, so every kill leaves it as it was; src/cloudflare/test_holds.rs, "The
//   ledger tool"), by idempotency key. A turn killed around its tool call is retried by its
//   own client under the same turn id once its lease lapsed; the retry replays the turn's
//   journal and completes. Every call runs once with one key, which is the call the saved
//   conversation holds, except after a kill inside the tool or between its end and the record
//   of its result: then it runs once more, with the same key (turnkeep cannot know a tool ended
//   whose result it had not recorded). A kill after that record runs nothing again.
//
// Kill points (seeded): the eight hold points of the Worker's test hooks
// (src/cloudflare/test_holds.rs: before / after the claim write, before the messages are
// saved, before / after the release; inside the tool, before / after the record of its result),
// after N snapshot lines of a streaming answer (with or without an acknowledged stop request
// first), and a random delay after sending.
//
// Used by tests/workerd/crash-restart.test.mjs (a fixed seed, a few cycles) and
// scripts/crash-restart.mjs (any seed, any number of cycles).
import { createServer } from 'node:http';

import { startWranglerDev, TEST_HOOKS_WORKER } from './wrangler-dev.mjs';
import { submitBody } from './http-chat.mjs';
import { rng } from './rng.mjs';

export const TENANT = 'crash';
/** The hold points around a tool call: a turn killed at one is retried under its own turn id. */
const TOOL_POINTS = ['tool-inside', 'record-before', 'record-after'];
/** Where a kill may make the retry run the tool once more (with the same key). */
const RERUN_POINTS = ['tool-inside', 'record-before'];
const HOLD_POINTS = ['claim-before', 'claim-after', 'save-before', 'release-before', 'release-after', ...TOOL_POINTS];
const KINDS = [...HOLD_POINTS.map((p) => `hold:${p}`), 'stream', 'stop', 'random'];
/** The Worker's settings: a short lease (1500 + 3 × 400 ms) so lapsed leases are waited out fast. */
export const CRASH_VARS = {
  TEST_HOOKS: '1',
  STREAMS_PUBLIC: '1',
  CHAT_TIMEOUT_MS: '1500',
  CHAT_CLEANUP_TIMEOUT_MS: '400',
  DEMO_CHUNK_DELAY_MS: '10',
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const auth = { authorization: `Bearer ${TENANT}` };

async function view(url, sessionId) {
  const response = await fetch(`${url}/api/sessions/${sessionId}`, { headers: auth });
  if (response.status !== 200) throw new Error(`GET session ${sessionId}: ${response.status}`);
  return response.json();
}

/** Every item of a JSON-mode stream (catch-up reads until up to date); [] when it does not exist. */
export async function readStream(url, name) {
  let offset = '-1';
  const items = [];
  for (;;) {
    const response = await fetch(`${url}/v1/stream/${name}?offset=${offset}`);
    if (response.status === 404) return items;
    if (response.status !== 200) throw new Error(`read ${name}: ${response.status} ${await response.text()}`);
    items.push(...(await response.json()));
    offset = response.headers.get('stream-next-offset');
    if (response.headers.get('stream-up-to-date') === 'true') return items;
  }
}

function post(url, body, init = {}) {
  return fetch(`${url}/api/chat`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body, ...init });
}

/** Reads an NDJSON response until `count` lines arrived (or it ended); never throws. */
async function readLines(response, count) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (text.split('\n').length - 1 < count) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // the process was killed
  }
  return { reader, lines: text.split('\n').length - 1 };
}

/** Reads to the end; the parsed lines. */
async function allLines(response) {
  const text = await response.text();
  return text.trim() === '' ? [] : text.trim().split('\n').map((l) => JSON.parse(l));
}

const userCount = (messages) => messages.filter((m) => m.role === 'user').length;
const started = (items, turnId) => items.some((i) => i.type === 'RUN_STARTED' && i.runId === turnId);

/**
 * Runs `cycles` crash cycles of `perCycle` sessions each under `seed` on `persistDir`.
 * Resolves with `{ killPoints, byKind, restarts, violations, elapsedMs, appends }`; `log` gets
 * one line per cycle.
 */
export async function runCrashCycles({ seed, cycles, perCycle = 4, persistDir, log = () => {} }) {
  const ledger = await startLedger();
  try {
    const report = await crashCycles({ seed, cycles, perCycle, persistDir, log, ledger });
    return { ...report, ...ledger.check(report.violations) };
  } finally {
    ledger.server.close();
  }
}

/**
 * The ledger of tool runs: `POST /run {key, turnId, toolCallId, result}` counts a run of `key`
 * and answers `{ result, runs }` (the result recorded with the key's first run). `check` says
 * what broke exactly-once, once every turn was recovered, and returns the figures.
 */
async function startLedger() {
  const runs = new Map(); // key → { turnId, toolCallId, result, runs }
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => { body += chunk; });
    request.on('end', () => {
      const { key, turnId, toolCallId, result } = JSON.parse(body);
      const entry = runs.get(key) ?? { turnId, toolCallId, result, runs: 0 };
      entry.runs += 1;
      runs.set(key, entry);
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ result: entry.result, runs: entry.runs }));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const turns = new Map(); // turn id → { point, savedCallIds } of the tool turns recovered
  const check = (violations) => {
    const keysByTurn = new Map();
    for (const [key, entry] of runs) {
      if (!key.includes(`:${entry.turnId}:`)) violations.push(`ledger: key ${key} does not name its turn ${entry.turnId}`);
      keysByTurn.set(entry.turnId, [...(keysByTurn.get(entry.turnId) ?? []), key]);
      const point = turns.get(entry.turnId)?.point;
      const allowed = RERUN_POINTS.includes(point) ? 2 : 1;
      if (entry.runs > allowed) violations.push(`ledger: call ${key} ran ${entry.runs} times (killed at ${point ?? 'no tool point'})`);
    }
    for (const [turnId, keys] of keysByTurn) {
      if (keys.length > 1) violations.push(`ledger: turn ${turnId}'s one call ran under ${keys.length} keys ${keys.join(', ')}`);
      const saved = turns.get(turnId)?.savedCallIds;
      const call = runs.get(keys[0]).toolCallId;
      if (saved && !saved.includes(call)) violations.push(`ledger: turn ${turnId} ran call ${call}, the saved conversation holds ${saved}`);
    }
    const runsPerKey = {};
    for (const entry of runs.values()) runsPerKey[entry.runs] = (runsPerKey[entry.runs] ?? 0) + 1;
    const byPoint = {};
    for (const [turnId, { point }] of turns) {
      const counts = (keysByTurn.get(turnId) ?? []).map((k) => runs.get(k).runs);
      byPoint[point] ??= {};
      for (const n of counts) byPoint[point][n] = (byPoint[point][n] ?? 0) + 1;
    }
    const overtakenTurns = [...turns.values()].filter((t) => t.point === 'overtaken').length;
    return { toolKeys: runs.size, runsPerKey, runsPerKeyByPoint: byPoint, toolRetries: turns.size - overtakenTurns, overtaken: overtakenTurns };
  };
  return { server, port: server.address().port, turns, check };
}

async function crashCycles({ seed, cycles, perCycle, persistDir, log, ledger }) {
  const random = rng(seed);
  const t0 = Date.now();
  const violations = [];
  const byKind = Object.fromEntries(KINDS.map((k) => [k, 0]));
  const sessions = Array.from({ length: perCycle }, (_, i) => ({ id: `c${seed}-s${i}`, users: 0, pending: null }));
  const appender = { stream: `crash-appends-${seed}`, producer: `crash-writer-${seed}`, acked: [], nextSeq: 0, unacked: null };
  let killPoints = 0;
  let restarts = 0;
  const fail = (where, message) => violations.push(`${where}: ${message}`);

  for (let cycle = 0; cycle <= cycles; cycle += 1) {
    const vars = { ...CRASH_VARS, TEST_LEDGER_PORT: String(ledger.port) };
    const dev = await startWranglerDev({ persistDir, vars, script: TEST_HOOKS_WORKER });
    let appending = null;
    try {
      await checkAppends(dev.url, appender, fail);
      await Promise.all(sessions.map((s) => recover(dev.url, s, (m) => fail(`cycle ${cycle} ${s.id} (${s.pending?.kind})`, m), ledger)));
      if (cycle === cycles) {
        await dev.stop();
        break;
      }
      const plans = sessions.map((s) => ({ session: s, kind: random.pick(KINDS), lines: random.int(1, 12), delayMs: random.int(0, 400) }));
      appending = appendLoop(dev.url, appender);
      await Promise.all(plans.filter((p) => p.kind !== 'random').map((p) => reach(dev, p)));
      const randoms = plans.filter((p) => p.kind === 'random');
      let delayMs = Math.max(0, ...randoms.map((p) => p.delayMs));
      for (const p of randoms.sort((a, b) => b.delayMs - a.delayMs)) {
        launch(dev.url, p);
        await sleep(delayMs - p.delayMs);
        delayMs = p.delayMs;
      }
      // What readers were served just before the kill: it must all be there after it.
      for (const p of plans) p.session.pending.seen = await readStream(dev.url, `chat/${TENANT}/${p.session.id}`);
      await sleep(random.int(0, 20));
      appending.stop();
      await dev.crash();
      await appending.done;
      restarts += 1;
      killPoints += plans.length;
      for (const p of plans) byKind[p.kind] += 1;
      log(`cycle ${cycle + 1}/${cycles}: killed at ${plans.map((p) => p.kind).join(', ')} (${appender.acked.length} appends acknowledged)`);
    } catch (error) {
      appending?.stop();
      await dev.crash();
      throw error;
    }
  }
  return { killPoints, byKind, restarts, violations, elapsedMs: Date.now() - t0, appends: appender.acked.length };
}

/** Starts `plan`'s turn; its session remembers what the check after the restart needs. */
function launch(url, plan) {
  const { session, kind } = plan;
  const point = kind.startsWith('hold:') ? kind.slice(5) : null;
  const turnId = `${point ? `hold-${point}` : kind}-${session.id}-${Date.now()}`;
  const input = kind === 'random' ? plan.delayMs % 2 === 0 ? '/words 40' : '/tool cats'
    : kind === 'stream' || kind === 'stop' ? '/words 100'
    : TOOL_POINTS.includes(point) ? '/tool cats' : `hello ${turnId}`;
  const body = submitBody(session.id, input, turnId);
  session.pending = { kind, turnId, body, usersBefore: session.users, stopAcked: false, seen: [] };
  plan.response = post(url, body).catch(() => null);
  return plan.response;
}

/** Starts the turn and waits until it reached its kill point. */
async function reach(dev, plan) {
  const responding = launch(dev.url, plan);
  const pending = plan.session.pending;
  if (plan.kind.startsWith('hold:')) {
    const marker = `turnkeep-test-hold ${plan.kind.slice(5)} ${plan.session.id} ${pending.turnId}`;
    for (let waited = 0; !dev.output().includes(marker); waited += 10) {
      if (waited > 10_000) throw new Error(`the turn never reached ${marker}`);
      await sleep(10);
    }
    return;
  }
  const response = await responding;
  if (!response || response.status !== 200) throw new Error(`${pending.turnId}: ${response?.status}`);
  await readLines(response, plan.lines);
  if (plan.kind === 'stop') {
    const stop = { ...JSON.parse(pending.body), event: 'client.turn.stop', payload: {} };
    const answer = await post(dev.url, JSON.stringify(stop));
    // 202: the request was appended to the log. A 200 says the turn had ended already (under
    // load a short answer can finish first): nothing was appended, so there is nothing to keep.
    pending.stopAcked = answer.status === 202;
    await answer.text();
  }
}

/** After a restart: the checks of the module doc for the session's crashed turn, then a new turn. */
async function recover(url, session, fail, ledger) {
  const pending = session.pending;
  if (!pending) return;
  const { kind, turnId } = pending;
  if (TOOL_POINTS.includes(kind.slice(5))) return retry(url, session, fail, ledger);
  const before = await view(url, session.id);
  const stream = await readStream(url, `chat/${TENANT}/${session.id}`);
  const prefix = JSON.stringify(stream.slice(0, pending.seen.length)) === JSON.stringify(pending.seen);
  if (!prefix) fail(`the stream lost items a reader was served before the kill (${pending.seen.length} before, ${stream.length} after)`);
  if (pending.stopAcked && !stream.some((i) => i.name === 'turnkeep.stop-requested' && i.value?.turnId === turnId)) {
    fail('an acknowledged stop request is not in the stream');
  }
  const active = before.session.activeTurn?.turnId === turnId;
  const terminal = before.session.terminalTurns.find((t) => t.turnId === turnId);
  const claimed = active || terminal !== undefined;
  if (kind === 'hold:claim-before') {
    if (claimed || started(stream, turnId)) fail('a turn whose claim was never sent holds a lease or a history entry');
  } else if (kind !== 'random' && !claimed) {
    fail('a turn whose claim write was acknowledged left no lease and no history entry');
  }
  if (kind === 'hold:release-before' && userCount(before.messages) !== pending.usersBefore + 1) {
    fail('the messages whose save was acknowledged are not stored');
  }
  if (kind === 'hold:release-after' && (before.session.activeTurn !== null || terminal?.outcome !== 'completed')) {
    fail(`an acknowledged release is not stored (${JSON.stringify(before.session)})`);
  }
  if (userCount(before.messages) > pending.usersBefore + 1) fail('a crashed turn saved its input twice');

  // Usable: busy exactly until the recorded expiry, then a new turn is taken.
  const lease = before.session.activeTurn;
  if (lease && lease.expiresAt > Date.now() + 300) {
    const early = await post(url, submitBody(session.id, 'too early'));
    if (early.status !== 409) fail(`a live lease (until ${lease.expiresAt}) did not refuse a new turn: ${early.status}`);
    await early.text();
  }
  if (lease) await sleep(Math.max(0, lease.expiresAt - Date.now() + 25));
  const next = await post(url, submitBody(session.id, `recover ${turnId}`));
  if (next.status !== 200) {
    fail(`the session did not accept a new turn ${lease ? 'at its lease expiry' : 'at once'}: ${next.status} ${await next.text()}`);
    session.pending = null;
    return;
  }
  const lines = await allLines(next);
  if (lines.at(-1)?.payload?.status !== 'complete') fail(`the next turn did not complete: ${JSON.stringify(lines.at(-1))}`);
  const after = await view(url, session.id);
  const recorded = after.session.terminalTurns.find((t) => t.turnId === turnId);
  if (claimed && !recorded) fail('the crashed turn is missing from the terminal history');
  if (active && recorded && recorded.outcome !== 'indeterminate') fail(`a lapsed turn is recorded ${recorded.outcome}`);
  if (!claimed && recorded) fail('a turn that never held the lease is in the terminal history');
  if (after.session.activeTurn !== null) fail('the next turn did not release its lease');
  if (JSON.stringify(after.messages) !== JSON.stringify(after.streamMessages)) {
    fail(`saved messages and the stream's projection disagree:\n${JSON.stringify(after.messages)}\n${JSON.stringify(after.streamMessages)}`);
  }
  const ids = after.messages.map((m) => m.id);
  if (new Set(ids).size !== ids.length) fail('a message id appears twice');
  if (recorded) {
    const replay = await post(url, pending.body);
    if (replay.status !== 409) fail(`a recorded turn was run again: ${replay.status}`);
    await replay.text();
  }
  session.users = userCount(after.messages);
  session.pending = null;
}

/**
 * After a restart, for a turn killed around its tool call: its own client sends it again (the
 * same body, so the same turn id) once its lease lapsed. The retry replays the turn's journal
 * and completes; the turn is recorded `completed`, its input saved once, one tool result, the
 * stream's projection equal to the saved messages, and a replay of it refused. The ledger's
 * counts are checked at the end (`startLedger`).
 */
async function retry(url, session, fail, ledger) {
  const { kind, turnId, body, usersBefore } = session.pending;
  const before = await view(url, session.id);
  const lease = before.session.activeTurn;
  if (lease?.turnId !== turnId) return overtaken(url, session, fail, ledger, before);
  await sleep(Math.max(0, lease.expiresAt - Date.now() + 25));
  const again = await post(url, body);
  if (again.status !== 200) {
    fail(`the retry of the crashed turn was refused: ${again.status} ${await again.text()}`);
    session.users = userCount((await view(url, session.id)).messages);
    session.pending = null;
    return;
  }
  const lines = await allLines(again);
  if (lines.at(-1)?.payload?.status !== 'complete') fail(`the retry did not complete: ${JSON.stringify(lines.at(-1))}`);
  const after = await view(url, session.id);
  const recorded = after.session.terminalTurns.find((t) => t.turnId === turnId);
  if (recorded?.outcome !== 'completed') fail(`the retried turn is recorded ${JSON.stringify(recorded)}`);
  if (after.session.activeTurn !== null) fail(`the retry did not release its lease: ${JSON.stringify(after.session)}`);
  if (userCount(after.messages) !== usersBefore + 1) fail(`the retried turn's input is saved ${userCount(after.messages) - usersBefore} times`);
  const own = after.messages.slice(after.messages.findLastIndex((m) => m.role === 'user'));
  const results = own.filter((m) => m.role === 'tool');
  const calls = own.flatMap((m) => m.toolCalls ?? []);
  if (JSON.stringify(after.messages) !== JSON.stringify(after.streamMessages)) {
    fail(`saved messages and the stream's projection disagree after the retry:\n${JSON.stringify(after.messages)}\n${JSON.stringify(after.streamMessages)}`);
  }
  const ids = after.messages.map((m) => m.id);
  if (new Set(ids).size !== ids.length) fail('a message id appears twice');
  ledger.turns.set(turnId, { point: kind.slice(5), savedCallIds: calls.map((c) => c.id) });
  if (results.length !== calls.length) fail(`${calls.length} tool calls and ${results.length} results are saved`);
  const replay = await post(url, body);
  if (replay.status !== 409) fail(`a recorded turn was run again: ${replay.status}`);
  await replay.text();
  session.users = userCount(after.messages);
  session.pending = null;
}

/**
 * A turn parked around its tool that its own deadline ended before the kill came (a parked tool
 * is stopped, a parked record overtaken: the turn ends, saved and released): it is in the
 * history, nothing is left to retry, a resend is refused, and its call ran once.
 */
async function overtaken(url, session, fail, ledger, before) {
  const { kind, turnId, body } = session.pending;
  const terminal = before.session.terminalTurns.find((t) => t.turnId === turnId);
  if (!terminal) fail(`the turn parked at ${kind} holds no lease and is not in the history (${JSON.stringify(before.session)})`);
  const own = before.messages.slice(before.messages.findLastIndex((m) => m.role === 'user'));
  ledger.turns.set(turnId, { point: 'overtaken', savedCallIds: own.flatMap((m) => m.toolCalls ?? []).map((c) => c.id) });
  const replay = await post(url, body);
  if (replay.status !== 409) fail(`a recorded turn was run again: ${replay.status}`);
  await replay.text();
  session.users = userCount(before.messages);
  session.pending = null;
}

/** Appends one item after another (producer-stamped) until stopped; acknowledged seqs are kept. */
function appendLoop(url, appender) {
  let running = true;
  const done = (async () => {
    await fetch(`${url}/v1/stream/${appender.stream}`, { method: 'PUT', headers: { 'content-type': 'application/json' } });
    while (running) {
      const seq = appender.unacked ?? appender.nextSeq;
      appender.unacked = seq;
      appender.nextSeq = seq + 1;
      try {
        const status = await appendOne(url, appender, seq);
        if (status !== 200 && status !== 204) return;
        appender.acked.push(seq);
        appender.unacked = null;
      } catch {
        return; // killed: this seq stays unacknowledged
      }
    }
  })();
  return { done, stop: () => { running = false; } };
}

async function appendOne(url, appender, seq) {
  const response = await fetch(`${url}/v1/stream/${appender.stream}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'producer-id': appender.producer, 'producer-epoch': '0', 'producer-seq': String(seq) },
    body: JSON.stringify({ seq }),
  });
  await response.arrayBuffer();
  return response.status;
}

/** After a restart: every acknowledged append is there once, in order; the unacknowledged one is resent. */
async function checkAppends(url, appender, fail) {
  if (appender.unacked !== null) {
    const status = await appendOne(url, appender, appender.unacked);
    if (status !== 200 && status !== 204) fail('appends', `resending seq ${appender.unacked} after the restart: ${status}`);
    else appender.acked.push(appender.unacked);
    appender.unacked = null;
  }
  const seqs = (await readStream(url, appender.stream)).map((i) => i.seq);
  const expected = appender.acked.slice().sort((a, b) => a - b);
  if (JSON.stringify(seqs) !== JSON.stringify(expected)) {
    fail('appends', `the stream holds seqs ${compact(seqs)}, the acknowledged ones are ${compact(expected)}`);
    appender.acked = seqs;
  }
}

function compact(xs) {
  return xs.length > 12 ? `[${xs.slice(0, 5)} … ${xs.slice(-5)}] (${xs.length})` : JSON.stringify(xs);
}
