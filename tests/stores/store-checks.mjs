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
