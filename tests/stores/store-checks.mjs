// Checks both database adapters share: broken variants built from a correct storage, test
// conversations, and the "a reader never sees half of a save" check.
import assert from 'node:assert/strict';

import { CASES } from '../../js/testing/session-storage-conformance.mjs';

/** What last-write-wins storage fails: every case where a save must be refused. */
export const WRITE_CASES = [CASES.createOnce, CASES.casWrongCursor, CASES.casStaleCursor, CASES.casAbsent, CASES.concurrentCreate, CASES.concurrentCas];
/** What a correct-in-series but non-atomic storage fails: only the races. */
export const RACE_CASES = [CASES.concurrentCreate, CASES.concurrentCas];

/**
 * A non-atomic storage: it reads the stored cursor in one round trip, compares here, then
 * writes through `lastWriteWins` (unconditional) in another. Right in series, wrong under
 * concurrency: the bug the adapters must not have.
 */
export function checkThenAct(storage, lastWriteWins) {
  return {
    load: (sessionId) => storage.load(sessionId),
    async save(snapshot, expectedCursor) {
      const stored = await storage.load(snapshot.sessionId);
      const current = stored === undefined ? undefined : (typeof stored === 'string' ? JSON.parse(stored) : stored).cursor;
      if (current !== expectedCursor) return false;
      return lastWriteWins.save(snapshot, expectedCursor);
    },
  };
}

/** `count` valid canonical messages whose every field says which conversation they belong to. */
export function conversation(tag, count) {
  return Array.from({ length: count }, (_, i) => ({
    id: `${tag}-${i}`,
    role: i % 2 === 0 ? 'user' : 'assistant',
    content: `${tag} message ${i}: ünïcødé ✓ "quoted" \\ back\nslash`,
    status: 'complete',
    createdAt: '2026-07-11T03:00:00.000Z',
  }));
}

/**
 * Saves `versions` in turn through `writer` (`rounds` saves) while `reader` loads as fast as it
 * can on another connection; every load must equal the empty history or one version whole.
 * @returns the number of loads checked (the caller asserts there were some during the writes)
 */
export async function checkWholeReads(writer, reader, versions, rounds) {
  const allowed = [[], ...versions];
  let done = false; // set by whichever side ends first, so the other stops too
  let loads = 0;
  const reading = (async () => {
    try {
      while (!done) {
        const loaded = await reader.load({});
        loads += 1;
        const match = allowed.findIndex((v) => v.length === loaded.length && v.every((m, i) => m.id === loaded[i].id));
        assert.notEqual(match, -1, `load ${loads} returned ${loaded.length} messages that are no saved version (first ${loaded[0]?.id}, last ${loaded.at(-1)?.id})`);
        assert.deepEqual(loaded, allowed[match]);
      }
    } finally {
      done = true;
    }
  })();
  const writing = (async () => {
    try {
      for (let i = 0; i < rounds && !done; i += 1) await writer.save(versions[i % versions.length], {});
    } finally {
      done = true;
    }
  })();
  await Promise.all([reading, writing]);
  return loads;
}

/** Retries of one append that lost its compare-and-set too often ('retryable', as the publisher retries). */
const APPEND_RETRIES_MAX = 20;

/**
 * `writers` producers append `batches` two-chunk batches each, all at once, writer i through
 * `logs[i % logs.length]`; a 'retryable' refusal (too many lost races) is retried as is, which
 * the producer stamp makes safe. Then everything stored must be every batch exactly once, its
 * two chunks side by side, each writer's batches in order.
 * @returns the number of chunks read back
 */
export async function checkConcurrentWriters(logs, { writers, batches }) {
  const signal = new AbortController().signal;
  const append = async (log, writer, seq) => {
    const chunks = ['a', 'b'].map((part) => JSON.stringify({ type: 'CUSTOM', name: 'writer', value: `${writer}/${seq}/${part}` }));
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await log.append(chunks, { producer: { id: `writer-${writer}`, epoch: 0, seq }, signal });
      } catch (error) {
        if (error?.kind !== 'retryable' || attempt >= APPEND_RETRIES_MAX) throw error;
      }
    }
  };
  await Promise.all(
    Array.from({ length: writers }, async (_, writer) => {
      for (let seq = 0; seq < batches; seq += 1) await append(logs[writer % logs.length], writer, seq);
    }),
  );
  const stored = [];
  for (let offset, i = 0; i < 1_000; i += 1) {
    const read = await logs.at(-1).read(offset === undefined ? { signal } : { offset, signal });
    stored.push(...read.chunks.map((c) => (typeof c === 'string' ? JSON.parse(c) : c).value));
    if (read.upToDate) break;
    offset = read.offset;
  }
  assert.equal(stored.length, writers * batches * 2, `stored ${stored.length} chunks`);
  const next = new Map();
  for (let i = 0; i < stored.length; i += 2) {
    const [writer, seq, part] = stored[i].split('/');
    assert.equal(part, 'a', `chunk ${i} (${stored[i]}) starts no batch`);
    assert.equal(stored[i + 1], `${writer}/${seq}/b`, `the batch ${writer}/${seq} was split`);
    assert.equal(Number(seq), next.get(writer) ?? 0, `writer ${writer}'s batches out of order or twice`);
    next.set(writer, Number(seq) + 1);
  }
  return stored.length;
}
