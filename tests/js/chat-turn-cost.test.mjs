// What a turn does NOT cost (issue 14), counted rather than timed: the server builds a snapshot
// line only when a reader asks for one (states offered vs lines built, with a reader that stops
// asking), a finished turn leaves no timer behind (its 30 s deadline is cleared when it ends,
// not when it fires), and turns leave nothing behind in wasm memory. Timing is in bench/turn.mjs; no assertion here reads a clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import * as pkg from '../../js/node.mjs';
import * as glue from '../../pkg/turnkeep.js';
import { assistantText, chatRequest, demoSetup, readTurn, submitEvent, words } from '../support/chat-harness.mjs';
import { testBuildApi as counted } from '../support/test-hooks.mjs';

/**
 * Snapshot counts of every chat response of the test build so far: the counter exists only
 * there (the npm wasm ships no bench counter), so the counting tests run `turnkeep` over that
 * build (`counted`); the timer and memory tests run the npm package as users get it (`pkg`).
 */
const counts = () => counted.__snapshotCountsForBench();
const since = (before) => {
  const now = counts();
  return Object.fromEntries(Object.keys(now).map((k) => [k, now[k] - before[k]]));
};
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
const macrotask = () => new Promise((resolve) => setImmediate(resolve));

/** A model that streams `w1` and waits for `go` before the rest of `w1 … wN`. */
function gatedModel(n) {
  let go;
  const gate = new Promise((resolve) => (go = resolve));
  const model = {
    async *stream() {
      yield { type: 'text', text: 'w1' };
      await gate;
      for (let i = 2; i <= n; i++) yield { type: 'text', text: ` w${i}` };
    },
  };
  return { model, go };
}

test('a reader that stops asking: 200 states offered, no line built until it asks again', async () => {
  const { model, go } = gatedModel(200);
  const { handler, storage } = demoSetup(counted, { chat: { model } });
  const before = counts();
  const response = await handler(chatRequest(submitEvent({ sessionId: 'paused', turnId: 't1', input: 'go' })));
  const reader = response.body.getReader();
  const first = await reader.read();
  assert.equal(first.done, false);
  assert.equal(since(before).linesEmitted, 1);
  // The model streams the rest and the turn runs to its end (saved and released) while the
  // reader asks for nothing.
  go();
  await storage.released('t1');
  const paused = since(before);
  assert.ok(paused.statesOffered >= 200, `states offered: ${paused.statesOffered}`);
  assert.equal(paused.linesEmitted, 1, 'no line was built while nobody asked');
  // Asking again: the newest state only (the complete answer), then the end of the body.
  reader.releaseLock();
  const rest = await readTurn(counted, { body: response.body });
  assert.deepEqual(rest.faults, []);
  assert.equal(rest.snapshots.length, 1);
  assert.equal(rest.last.payload.status, 'complete');
  assert.equal(assistantText(rest.last.payload.messages), words(200));
  assert.equal(since(before).linesEmitted, 2, 'two lines built, two lines read');
});

test('a reader that keeps asking gets every line it asked for, each built once', async () => {
  const { handler } = demoSetup(counted);
  const before = counts();
  const response = await handler(chatRequest(submitEvent({ sessionId: 'eager', turnId: 't1', input: '/words 50' })));
  const turn = await readTurn(counted, response);
  assert.deepEqual(turn.faults, []);
  assert.equal(turn.last.payload.status, 'complete');
  const c = since(before);
  assert.equal(c.linesEmitted, turn.snapshots.length, 'lines built = lines read');
  assert.ok(c.linesEmitted <= c.statesOffered + 1);
  // Each line re-encodes only what changed: the growing assistant message, not the user's.
  assert.ok(c.messagesReused >= c.linesEmitted - 2, `reused ${c.messagesReused} over ${c.linesEmitted} lines`);
});

test('finished turns leave no timer behind (the deadline is cleared when the turn ends)', async () => {
  const { handler, storage } = demoSetup(pkg, { options: { timeoutMs: 30_000 } });
  await macrotask();
  const before = timers();
  for (let i = 0; i < 20; i++) {
    const response = await handler(chatRequest(submitEvent({ sessionId: `s${i}`, turnId: 't1', input: '/words 5' })));
    const turn = await readTurn(pkg, response);
    assert.equal(turn.last.payload.status, 'complete');
    await storage.released('t1');
  }
  await macrotask();
  assert.equal(timers() - before, 0, 'no 30 s deadline timer outlives its turn');
});

test('the control case: a running turn holds exactly its deadline and its stall watch timers, until it is stopped', async () => {
  // A model that never yields: while the turn waits for its first chunk it holds two timers, the
  // request's deadline and the model's stall watch (one tick timer at a time).
  let asked;
  const waiting = new Promise((resolve) => (asked = resolve));
  const next = () => (asked(), new Promise(() => {}));
  const hanging = { stream: () => ({ [Symbol.asyncIterator]: () => ({ next }) }) };
  const { handler, storage } = demoSetup(pkg, { chat: { model: hanging }, options: { timeoutMs: 30_000 } });
  await macrotask();
  const before = timers();
  const response = await handler(chatRequest(submitEvent({ sessionId: 'running', turnId: 't1', input: 'hello' })));
  const reader = response.body.getReader();
  await reader.read();
  await waiting;
  await macrotask();
  assert.equal(timers() - before, 2, 'the running turn has its deadline and stall watch (the count can see them)');
  await reader.cancel('done looking');
  await storage.released('t1');
  await macrotask();
  assert.equal(timers() - before, 0, 'stopped: its deadline is gone with it');
});

test('a thousand turns leave nothing behind in wasm memory (a budget timer once kept 4 closures a turn)', async () => {
  // Each cleanup budget raced its step against a timer awaited through a Promise; the timer was
  // cleared, the promise never settled, and its two `then` closures and their Rust state stayed
  // alive in a cycle: ~190 KiB of wasm memory (3 pages) and ~1.5 MB of JS heap per 1,000 turns.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  const wasmBytes = () => glue.initSync().memory.buffer.byteLength;
  const rows = new Map(); // JS-side storage: what the sessions keep is the host's, not wasm's
  const storage = {
    load: async (id) => rows.get(id),
    async save(snapshot, expected) {
      const stored = rows.get(snapshot.sessionId);
      if ((expected ?? undefined) !== stored?.cursor) return false;
      rows.set(snapshot.sessionId, snapshot);
      return true;
    },
  };
  const { handler } = demoSetup(pkg, { storage, memory: { load: async () => [], save: async () => {} } });
  let n = 0;
  const turns = async (count) => {
    for (let i = 0; i < count; i++) {
      const response = await handler(chatRequest(submitEvent({ sessionId: `m${n++}`, turnId: 't1', input: 'hello' })));
      const reader = response.body.getReader();
      while (!(await reader.read()).done);
      // A server's requests arrive on I/O events: JS finalizers (which free what wasm-bindgen
      // callbacks held) run between them, never inside a chain of microtasks.
      if (i % 50 === 49) await macrotask();
    }
    rows.clear();
    for (let i = 0; i < 3; i++) {
      gc();
      await macrotask();
    }
  };
  await turns(1_000); // the allocator's high-water mark settles (a page or two)
  const before = wasmBytes();
  await turns(1_000);
  const grownKiB = (wasmBytes() - before) / 1024;
  assert.ok(grownKiB <= 128, `wasm memory grew ${grownKiB} KiB over 1,000 turns`);
});
