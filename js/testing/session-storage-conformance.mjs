// The SessionStorage conformance suite for JS-implemented adapters (the contract:
// src/ports/session.rs).
// The Rust twin is `src/storage/conformance.rs`; case names are the same.
//
// A storage is `{ load(sessionId, signal?), save(snapshot, expectedCursor, signal?) }`:
// - load returns the stored snapshot (an object or the same as JSON text), or null/undefined;
// - save(snapshot, undefined) creates only if absent; save(snapshot, n) writes only if the
//   stored cursor is n; either returns false on conflict, atomically (compare and write in one
//   step). Either may return a Promise. Last-write-wins storage is not conformant.
//
// Runs in any runtime (Node, workerd, browsers): no imports.

export const CASES = Object.freeze({
  loadAbsent: 'load of an absent session is empty',
  createOnce: 'create-if-absent succeeds once, then conflicts',
  roundTrip: 'save then load returns an equal value',
  casSuccess: 'save with the stored cursor succeeds',
  casWrongCursor: 'save with a wrong cursor conflicts and changes nothing',
  casStaleCursor: 'save with a stale cursor conflicts',
  casAbsent: 'save with a cursor on an absent session conflicts',
  isolation: 'sessions do not see each other',
  concurrentCreate: 'concurrent creates: exactly one wins',
  concurrentCas: 'concurrent saves with one expected cursor: exactly one wins',
});

const SESSION_A = 'conformance-a';
const SESSION_B = 'conformance-b';

/**
 * Runs every case, each against a fresh storage from `makeStorage()` (may be async).
 * @returns {Promise<{ passed: string[], failed: { name: string, detail: string }[] }>}
 */
export async function checkSessionStorage(makeStorage, { concurrency = 32 } = {}) {
  const savers = Math.max(2, Math.floor(concurrency));
  const cases = [
    [CASES.loadAbsent, loadAbsent],
    [CASES.createOnce, createOnce],
    [CASES.roundTrip, roundTrip],
    [CASES.casSuccess, casSuccess],
    [CASES.casWrongCursor, casWrongCursor],
    [CASES.casStaleCursor, casStaleCursor],
    [CASES.casAbsent, casAbsent],
    [CASES.isolation, isolation],
    [CASES.concurrentCreate, (s) => concurrent(s, savers, undefined)],
    [CASES.concurrentCas, (s) => concurrent(s, savers, 1)],
  ];
  const report = { passed: [], failed: [] };
  for (const [name, run] of cases) {
    try {
      const storage = await makeStorage();
      await run(new Harness(storage));
      report.passed.push(name);
    } catch (error) {
      report.failed.push({ name, detail: error instanceof CaseFailure ? error.message : `threw: ${describe(error)}` });
    }
  }
  return report;
}

/** A valid session envelope; `marker` becomes the active turn id so racing snapshots differ. */
export function conformanceSnapshot(sessionId, cursor, marker) {
  return {
    protocol: 'agentskit.chat.session',
    version: 1,
    sessionId,
    definitionId: 'conformance',
    definitionRevision: 1,
    updatedAt: '2026-07-11T03:00:00.000Z',
    cursor,
    activeTurn: { turnId: marker, expiresAt: 1783738845000 },
    confirmations: [],
  };
}

class CaseFailure extends Error {}

function expect(condition, detail) {
  if (!condition) throw new CaseFailure(typeof detail === 'function' ? detail() : detail);
}

/** Calls the storage the way the library does: with a live signal, awaiting whatever it returns. */
class Harness {
  constructor(storage) {
    this.storage = storage;
    this.signal = new AbortController().signal;
  }

  async load(sessionId) {
    const value = await this.storage.load(sessionId, this.signal);
    if (value === null || value === undefined) return undefined;
    if (typeof value !== 'string') return value;
    try {
      return JSON.parse(value);
    } catch {
      throw new CaseFailure(`load returned text that is not JSON: ${value.slice(0, 64)}`);
    }
  }

  async save(snapshot, expectedCursor) {
    const result = await this.storage.save(snapshot, expectedCursor, this.signal);
    expect(typeof result === 'boolean', () => `save must return a boolean, got ${describe(result)}`);
    return result;
  }

  async expectStored(expected, when) {
    const stored = await this.load(SESSION_A);
    expect(deepEqual(stored, expected), () => `${when}: stored ${describe(stored)}, expected ${describe(expected)}`);
  }
}

async function loadAbsent(h) {
  const stored = await h.load(SESSION_A);
  expect(stored === undefined, () => `expected nothing, loaded ${describe(stored)}`);
}

async function createOnce(h) {
  const first = conformanceSnapshot(SESSION_A, 1, 'first');
  expect(await h.save(first, undefined), 'the first create returned false');
  const second = conformanceSnapshot(SESSION_A, 1, 'second');
  expect(!(await h.save(second, undefined)), 'a second create over an existing record returned true');
  await h.expectStored(first, 'after the refused second create');
}

async function roundTrip(h) {
  const value = conformanceSnapshot(SESSION_A, 1, 'round-trip');
  expect(await h.save(value, undefined), 'create returned false');
  await h.expectStored(value, 'after create');
}

async function casSuccess(h) {
  expect(await h.save(conformanceSnapshot(SESSION_A, 1, 'one'), undefined), 'create returned false');
  const next = conformanceSnapshot(SESSION_A, 2, 'two');
  expect(await h.save(next, 1), 'save with the stored cursor 1 returned false');
  await h.expectStored(next, 'after the CAS save');
}

async function casWrongCursor(h) {
  const first = conformanceSnapshot(SESSION_A, 1, 'one');
  expect(await h.save(first, undefined), 'create returned false');
  expect(!(await h.save(conformanceSnapshot(SESSION_A, 8, 'wrong'), 7)), 'save expecting cursor 7 over stored 1 returned true');
  await h.expectStored(first, 'after the refused save');
}

async function casStaleCursor(h) {
  expect(await h.save(conformanceSnapshot(SESSION_A, 1, 'one'), undefined), 'create returned false');
  const current = conformanceSnapshot(SESSION_A, 2, 'two');
  expect(await h.save(current, 1), 'save with the stored cursor returned false');
  expect(!(await h.save(conformanceSnapshot(SESSION_A, 2, 'stale'), 1)), 'a second save expecting the old cursor 1 returned true');
  await h.expectStored(current, 'after the refused stale save');
}

async function casAbsent(h) {
  expect(!(await h.save(conformanceSnapshot(SESSION_A, 1, 'one'), 0)), 'save expecting cursor 0 on an absent record returned true');
  const stored = await h.load(SESSION_A);
  expect(stored === undefined, () => `after the refused save: loaded ${describe(stored)}`);
}

async function isolation(h) {
  const a = conformanceSnapshot(SESSION_A, 1, 'a');
  const b = conformanceSnapshot(SESSION_B, 1, 'b');
  expect(await h.save(a, undefined), 'create of session a returned false');
  expect(await h.save(b, undefined), 'create of session b next to session a returned false');
  const loadedB = await h.load(SESSION_B);
  expect(deepEqual(loadedB, b), () => `session b loaded as ${describe(loadedB)}`);
  await h.expectStored(a, 'next to session b');
}

/** All saves are started before any is awaited; exactly one may win. */
async function concurrent(h, savers, expectedCursor) {
  if (expectedCursor !== undefined) {
    expect(await h.save(conformanceSnapshot(SESSION_A, 1, 'base'), undefined), 'create returned false');
  }
  const nextCursor = expectedCursor === undefined ? 1 : expectedCursor + 1;
  const snapshots = Array.from({ length: savers }, (_, i) => conformanceSnapshot(SESSION_A, nextCursor, `saver-${i}`));
  const started = snapshots.map((snapshot) => {
    try {
      return Promise.resolve(h.storage.save(snapshot, expectedCursor, h.signal));
    } catch (error) {
      return Promise.reject(error);
    }
  });
  const results = await Promise.allSettled(started);
  const winners = [];
  results.forEach((r, i) => {
    expect(r.status === 'fulfilled', () => `saver ${i} failed: ${describe(r.reason)}`);
    expect(typeof r.value === 'boolean', () => `saver ${i} returned ${describe(r.value)}, not a boolean`);
    if (r.value) winners.push(i);
  });
  expect(winners.length === 1, () => `${winners.length} of ${savers} savers won (expected exactly 1)`);
  await h.expectStored(snapshots[winners[0]], 'after the race');
}

/** Structural equality of JSON values; object key order does not matter. */
function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  return keysA.length === keysB.length && keysA.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
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
