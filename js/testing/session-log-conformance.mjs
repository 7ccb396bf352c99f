// The SessionLog conformance suite: what every session log (memory, store-backed, Durable
// Streams over HTTP, a host's Redis or Postgres log) must do for turnkeep's publisher,
// toChatResponse and resolveChatSnapshot to be right. The port's contract is in
// src/ports/log.rs; run a log through this before trusting it.
//
// A log is `{ append(chunks, { producer?, signal }), read({ offset?, waitMs?, signal }) }`:
// - append stores `chunks` (JSON texts, one chunk each) after everything stored before, all or
//   nothing, and resolves to `{ offset, duplicate? }`, the offset after them. With a producer
//   `{ id, epoch, seq }` it is an idempotent-producer batch: an epoch older than the newest seen
//   for `id` throws an error with `kind: 'stale-epoch'` (and `currentEpoch`) and stores nothing; a
//   seq already stored under (id, epoch) stores nothing again (`duplicate: true` where the log can
//   tell); a seq past the next expected one throws `kind: 'sequence-gap'`; a newer epoch starts
//   again at seq 0.
// - read resolves to `{ chunks, offset, upToDate }`: the chunks after `offset` (from the start
//   without one, from the tail for 'now'), and the offset to continue from (null only for an
//   empty log read from its start). With `waitMs` and nothing new it waits for an append.
// - Offsets are strings that sort like the positions they name.
//
// Runs in any runtime: no imports.

export const CASES = Object.freeze({
  emptyRead: 'an empty log reads as no chunks, up to date',
  order: 'appends read back in order, batches whole',
  offsetsIncrease: 'append offsets strictly increase',
  readAfter: 'a read after an offset returns exactly the rest',
  readNow: "offset 'now' returns nothing stored, then only what comes next",
  longPollWakes: 'a long-poll read returns when an append lands',
  longPollQuiet: 'a long-poll read with nothing new returns no chunks',
  staleEpoch: 'a stale epoch is refused with the current epoch, and nothing of it is stored',
  replayedSeq: 'a replayed seq is acknowledged and stored once',
  racingReplays: 'racing copies of one producer batch store it once',
  newEpoch: 'a newer epoch restarts at seq 0',
  sequenceGap: 'a seq past the next one is refused as a gap, and nothing is stored',
});

/**
 * Runs every case, each against a fresh empty log from `makeLog()` (may be async).
 * `racers`: copies of one batch sent at once (default 12). `longPollMs`: how long a quiet
 * long-poll read is asked to wait (default 300; servers may cap it with their own timeout).
 * @returns {Promise<{ passed: string[], failed: { name: string, detail: string }[] }>}
 */
export async function checkSessionLog(makeLog, { racers = 12, longPollMs = 300 } = {}) {
  const cases = [
    [CASES.emptyRead, emptyRead],
    [CASES.order, order],
    [CASES.offsetsIncrease, offsetsIncrease],
    [CASES.readAfter, readAfter],
    [CASES.readNow, readNow],
    [CASES.longPollWakes, longPollWakes],
    [CASES.longPollQuiet, (h) => longPollQuiet(h, longPollMs)],
    [CASES.staleEpoch, staleEpoch],
    [CASES.replayedSeq, replayedSeq],
    [CASES.racingReplays, (h) => racingReplays(h, Math.max(2, Math.floor(racers)))],
    [CASES.newEpoch, newEpoch],
    [CASES.sequenceGap, sequenceGap],
  ];
  const report = { passed: [], failed: [] };
  for (const [name, run] of cases) {
    try {
      await run(new Harness(await makeLog()));
      report.passed.push(name);
    } catch (error) {
      report.failed.push({ name, detail: error instanceof CaseFailure ? error.message : `threw: ${describe(error)}` });
    }
  }
  return report;
}

class CaseFailure extends Error {}

function expect(condition, detail) {
  if (!condition) throw new CaseFailure(typeof detail === 'function' ? detail() : detail);
}

const chunk = (label) => ({ type: 'CUSTOM', name: 'conformance', value: label });
const labels = (chunks) => chunks.map((c) => c?.value);
const PRODUCER = 'conformance-writer';

/** A live signal for one call (the library hands each call its turn's signal). */
const callSignal = () => new AbortController().signal;

/** Calls the log the way the library does, and checks the shape of every answer. */
class Harness {
  constructor(log) {
    this.log = log;
  }

  async append(values, producer) {
    const texts = values.map((v) => JSON.stringify(v));
    const answer = await this.log.append(texts, producer === undefined ? { signal: callSignal() } : { producer, signal: callSignal() });
    expect(typeof answer?.offset === 'string' && answer.offset !== '', () => `append resolved to ${describe(answer)}, not { offset }`);
    return answer;
  }

  /** Appends, expecting a refusal of `kind`; returns the error. */
  async refused(values, producer, kind) {
    let answer;
    try {
      answer = await this.append(values, producer);
    } catch (error) {
      if (error instanceof CaseFailure) throw error;
      expect(error?.kind === kind, () => `expected kind '${kind}', the append threw ${describe(error)} (kind ${error?.kind})`);
      return error;
    }
    throw new CaseFailure(`expected a '${kind}' refusal, the append resolved to ${describe(answer)}`);
  }

  async read(offset, waitMs) {
    const options = { signal: callSignal() };
    if (offset !== undefined) options.offset = offset;
    if (waitMs !== undefined) options.waitMs = waitMs;
    const answer = await this.log.read(options);
    expect(Array.isArray(answer?.chunks), () => `read resolved to ${describe(answer)}, not { chunks: [] }`);
    expect(answer.offset === null || typeof answer.offset === 'string', () => `read offset ${describe(answer.offset)} is not a string or null`);
    const chunks = answer.chunks.map((c) => (typeof c === 'string' ? JSON.parse(c) : c));
    return { chunks, offset: answer.offset, upToDate: answer.upToDate };
  }

  /** Everything stored, following offsets until up to date. */
  async readAll() {
    const out = [];
    let offset;
    for (let i = 0; i < 1000; i++) {
      const read = await this.read(offset);
      out.push(...read.chunks);
      if (read.upToDate || read.chunks.length === 0 || read.offset === null || read.offset === offset) return out;
      offset = read.offset;
    }
    throw new CaseFailure('the log never said it was up to date');
  }

  async expectStored(expected, when) {
    const stored = labels(await this.readAll());
    expect(sameList(stored, expected), () => `${when}: the log holds ${describe(stored)}, expected ${describe(expected)}`);
  }
}

async function emptyRead(h) {
  const read = await h.read();
  expect(read.chunks.length === 0, () => `an empty log returned ${describe(read.chunks)}`);
  expect(read.upToDate === true, 'an empty log is not up to date');
  if (read.offset !== null) {
    const again = await h.read(read.offset);
    expect(again.chunks.length === 0, 'a read after an empty log offset returned chunks');
  }
}

async function order(h) {
  await h.append([chunk('a')]);
  await h.append([chunk('b'), chunk('c')]);
  await h.append([chunk('d')]);
  const read = await h.read();
  expect(read.upToDate === true, 'a read of the whole short log is not up to date');
  expect(sameList(labels(read.chunks), ['a', 'b', 'c', 'd']), () => `read ${describe(labels(read.chunks))}`);
  expect(JSON.stringify(read.chunks[1]) === JSON.stringify(chunk('b')), () => `chunk changed on its way: ${describe(read.chunks[1])}`);
}

async function offsetsIncrease(h) {
  let previous = '';
  for (const label of ['a', 'b', 'c', 'd', 'e']) {
    const { offset } = await h.append([chunk(label)]);
    expect(offset > previous, () => `offset ${offset} does not sort after ${previous}`);
    previous = offset;
  }
  const read = await h.read();
  expect(read.offset === previous, () => `a read to the tail ends at ${read.offset}, the last append at ${previous}`);
}

async function readAfter(h) {
  const all = ['a', 'b', 'c', 'd', 'e'];
  const offsets = [];
  for (const label of all) offsets.push((await h.append([chunk(label)])).offset);
  for (let i = 0; i < offsets.length; i++) {
    const read = await h.read(offsets[i]);
    expect(sameList(labels(read.chunks), all.slice(i + 1)), () => `after offset ${i}: read ${describe(labels(read.chunks))}`);
    expect(read.offset === offsets.at(-1), () => `after offset ${i}: next offset ${read.offset}, the tail is ${offsets.at(-1)}`);
  }
  const whole = await h.read();
  const rest = await h.read(whole.offset);
  expect(rest.chunks.length === 0 && rest.upToDate === true, 'a read from the offset of a whole read is not empty and up to date');
}

async function readNow(h) {
  await h.append([chunk('old-1')]);
  await h.append([chunk('old-2')]);
  const now = await h.read('now');
  expect(now.chunks.length === 0, () => `offset 'now' returned stored chunks ${describe(labels(now.chunks))}`);
  expect(typeof now.offset === 'string', "offset 'now' returned no offset to continue from");
  await h.append([chunk('new')]);
  const next = await h.read(now.offset);
  expect(sameList(labels(next.chunks), ['new']), () => `after 'now': read ${describe(labels(next.chunks))}`);
}

async function longPollWakes(h) {
  const { offset } = await h.append([chunk('before')]);
  const waiting = h.read(offset, 10_000);
  await pause(100);
  await h.append([chunk('during')]);
  const read = await waiting;
  expect(sameList(labels(read.chunks), ['during']), () => `the long-poll read returned ${describe(labels(read.chunks))}`);
}

async function longPollQuiet(h, longPollMs) {
  const { offset } = await h.append([chunk('only')]);
  const read = await h.read(offset, longPollMs);
  expect(read.chunks.length === 0, () => `a quiet long-poll returned ${describe(labels(read.chunks))}`);
  expect(read.offset === null || read.offset === offset, () => `a quiet long-poll moved the offset to ${read.offset}`);
}

async function staleEpoch(h) {
  await h.append([chunk('e1-0')], { id: PRODUCER, epoch: 1, seq: 0 });
  await h.append([chunk('e2-0')], { id: PRODUCER, epoch: 2, seq: 0 });
  for (const seq of [1, 0, 5]) {
    const error = await h.refused([chunk(`zombie-${seq}`)], { id: PRODUCER, epoch: 1, seq }, 'stale-epoch');
    expect(error.currentEpoch === 2, () => `a stale-epoch refusal says currentEpoch ${describe(error.currentEpoch)}, expected 2`);
  }
  await h.append([chunk('e2-1')], { id: PRODUCER, epoch: 2, seq: 1 });
  await h.expectStored(['e1-0', 'e2-0', 'e2-1'], 'after the stale writer');
}

async function replayedSeq(h) {
  await h.append([chunk('s0')], { id: PRODUCER, epoch: 0, seq: 0 });
  const first = await h.append([chunk('s1')], { id: PRODUCER, epoch: 0, seq: 1 });
  expect(first.duplicate !== true, 'a new batch was reported as a duplicate');
  const again = await h.append([chunk('s1-replayed')], { id: PRODUCER, epoch: 0, seq: 1 });
  expect(again.duplicate !== false, 'a replayed batch was reported as stored');
  await h.append([chunk('s0-replayed')], { id: PRODUCER, epoch: 0, seq: 0 });
  await h.append([chunk('s2')], { id: PRODUCER, epoch: 0, seq: 2 });
  await h.expectStored(['s0', 's1', 's2'], 'after the replays');
}

async function racingReplays(h, racers) {
  await h.append([chunk('base')], { id: PRODUCER, epoch: 0, seq: 0 });
  const copies = Array.from({ length: racers }, () =>
    h.append([chunk('raced')], { id: PRODUCER, epoch: 0, seq: 1 }).then(
      (answer) => ({ ok: true, answer }),
      (error) => ({ ok: false, error }),
    ),
  );
  const results = await Promise.all(copies);
  const failed = results.filter((r) => !r.ok);
  expect(failed.length === 0, () => `${failed.length} of ${racers} copies failed: ${describe(failed[0]?.error)}`);
  await h.expectStored(['base', 'raced'], `after ${racers} racing copies`);
}

async function newEpoch(h) {
  for (const seq of [0, 1, 2]) await h.append([chunk(`e0-${seq}`)], { id: PRODUCER, epoch: 0, seq });
  await h.append([chunk('e1-0')], { id: PRODUCER, epoch: 1, seq: 0 });
  await h.append([chunk('e1-1')], { id: PRODUCER, epoch: 1, seq: 1 });
  await h.refused([chunk('e1-3')], { id: PRODUCER, epoch: 1, seq: 3 }, 'sequence-gap');
  await h.expectStored(['e0-0', 'e0-1', 'e0-2', 'e1-0', 'e1-1'], 'after the new epoch');
}

async function sequenceGap(h) {
  await h.append([chunk('g0')], { id: PRODUCER, epoch: 0, seq: 0 });
  await h.refused([chunk('g2')], { id: PRODUCER, epoch: 0, seq: 2 }, 'sequence-gap');
  await h.append([chunk('g1')], { id: PRODUCER, epoch: 0, seq: 1 });
  await h.expectStored(['g0', 'g1'], 'after the gap');
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function sameList(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function describe(value) {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 200 ? `${text.slice(0, 200)}…` : text;
  } catch {
    return String(value);
  }
}
