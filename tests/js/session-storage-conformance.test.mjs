// The JS storage conformance suite catches what it should: a correct CAS adapter passes, a
// last-write-wins one fails the conflict and race cases, a check-then-act one fails the races.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { CASES, checkSessionStorage } from '../../js/testing/session-storage-conformance.mjs';

/** Correct CAS over a Map, stored as JSON text, async like a remote store. */
function casStorage() {
  const records = new Map();
  return {
    async load(sessionId) {
      return records.get(sessionId) ?? null;
    },
    async save(snapshot, expectedCursor) {
      const stored = records.get(snapshot.sessionId);
      const ok = expectedCursor === undefined ? stored === undefined : stored !== undefined && JSON.parse(stored).cursor === expectedCursor;
      if (ok) records.set(snapshot.sessionId, JSON.stringify(snapshot));
      return ok;
    },
  };
}

/** Synchronous, returns objects: results need not be Promises. */
function syncCasStorage() {
  const records = new Map();
  return {
    load: (sessionId) => records.get(sessionId),
    save(snapshot, expectedCursor) {
      const stored = records.get(snapshot.sessionId);
      const ok = expectedCursor === undefined ? stored === undefined : stored?.cursor === expectedCursor;
      if (ok) records.set(snapshot.sessionId, structuredClone(snapshot));
      return ok;
    },
  };
}

function lastWriteWinsStorage() {
  const records = new Map();
  return {
    async load(sessionId) {
      return records.get(sessionId);
    },
    async save(snapshot) {
      records.set(snapshot.sessionId, structuredClone(snapshot));
      return true;
    },
  };
}

/** Reads, awaits a round trip, then writes: correct in series, wrong under concurrency. */
function checkThenActStorage() {
  const records = new Map();
  return {
    async load(sessionId) {
      return records.get(sessionId);
    },
    async save(snapshot, expectedCursor) {
      const stored = records.get(snapshot.sessionId);
      const ok = expectedCursor === undefined ? stored === undefined : stored?.cursor === expectedCursor;
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (ok) records.set(snapshot.sessionId, structuredClone(snapshot));
      return ok;
    },
  };
}

test('a correct CAS adapter passes every case', async () => {
  for (const make of [casStorage, syncCasStorage]) {
    const report = await checkSessionStorage(make);
    assert.deepEqual(report.failed, []);
    assert.deepEqual(report.passed, Object.values(CASES));
  }
});

test('makeStorage may be async', async () => {
  const report = await checkSessionStorage(async () => casStorage(), { concurrency: 4 });
  assert.equal(report.failed.length, 0);
});

test('last-write-wins fails the conflict and race cases', async () => {
  const report = await checkSessionStorage(lastWriteWinsStorage);
  assert.deepEqual(
    report.failed.map((f) => f.name),
    [CASES.createOnce, CASES.casWrongCursor, CASES.casStaleCursor, CASES.casAbsent, CASES.concurrentCreate, CASES.concurrentCas],
  );
  assert.deepEqual(report.passed, [CASES.loadAbsent, CASES.roundTrip, CASES.casSuccess, CASES.isolation]);
  assert.match(report.failed.at(-1).detail, /32 of 32 savers won/);
});

test('check-then-act fails only the races', async () => {
  const report = await checkSessionStorage(checkThenActStorage, { concurrency: 8 });
  assert.deepEqual(report.failed.map((f) => f.name), [CASES.concurrentCreate, CASES.concurrentCas]);
  assert.match(report.failed[1].detail, /8 of 8 savers won/);
});

test('a throwing or non-boolean storage is reported, not thrown', async () => {
  const broken = () => ({
    load() {
      throw new Error('store down');
    },
    save: async () => 'yes',
  });
  const report = await checkSessionStorage(broken, { concurrency: 2 });
  assert.equal(report.passed.length, 0);
  const byName = Object.fromEntries(report.failed.map((f) => [f.name, f.detail]));
  assert.match(byName[CASES.loadAbsent], /threw: Error: store down/);
  assert.match(byName[CASES.createOnce], /must return a boolean/);
  assert.match(byName[CASES.concurrentCreate], /returned "yes", not a boolean/);
});
