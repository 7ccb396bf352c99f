// Abort and load storm (issue 13, point 2) against the demo Worker in workerd (`wrangler dev`):
// 120 turns over 12 sessions at once, with client aborts, response cancels, explicit stops and
// double sends (tests/support/storm.mjs). No lease leaked (every accepted turn released as
// `completed`; every session takes a new turn within the lease after the storm), no message
// lost or doubled (one user message per turn that ran, saved messages equal to the stream's
// projection), and the Worker isolate's wasm memory stays bounded. The full 500 turns over 50
// sessions, with its figures: `node scripts/storm.mjs`.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';

import { runStorm, STORM_LEASE_MS, STORM_VARS } from '../support/storm.mjs';
import { startWranglerDev, TEST_HOOKS_WORKER } from '../support/wrangler-dev.mjs';
import { removeDir, tempDir } from './harness.mjs';

const state = tempDir('turnkeep-storm-');
after(() => removeDir(state));
/** A generous bound for the isolate's linear memory after the storm (it was 1.4 MiB before, 2.6 MiB after 100 turns). */
const WASM_MEMORY_BYTES_MAX = 32 * 1024 * 1024;

test('a storm of aborts, cancels, stops and double sends leaks no lease and loses or doubles no message', { timeout: 600_000 }, async () => {
  const dev = await startWranglerDev({ persistDir: state, vars: STORM_VARS, script: TEST_HOOKS_WORKER });
  try {
    const report = await runStorm({ dev, seed: 2, turns: 120, sessions: 12 });
    console.log(`# storm: ${report.accepted} accepted of ${report.turns} turns in ${Math.round(report.stormMs)} ms; ` +
      `first line p50 ${Math.round(report.firstLine.p50Ms)} ms, p99 ${Math.round(report.firstLine.p99Ms)} ms; ` +
      `free after ${Math.round(report.freeAfter.maxMs)} ms at most; ${JSON.stringify(report.counts)}; resent ${JSON.stringify(report.resent)}; memory ${JSON.stringify(report.memory)}`);
    assert.deepEqual(report.violations, []);
    assert.ok(report.freeAfter.maxMs < STORM_LEASE_MS, `a session stayed busy ${report.freeAfter.maxMs} ms`);
    for (const op of ['read', 'abort', 'cancel', 'stop', 'double']) assert.ok(report.counts[op] > 0, `no ${op} in the plan`);
    assert.equal(report.counts.doubleBothTaken, 0, 'two concurrent sends were both taken');
    assert.ok(report.memory.after.wasmBytes <= WASM_MEMORY_BYTES_MAX, `wasm memory ${report.memory.after.wasmBytes} bytes`);
  } finally {
    await dev.stop();
  }
});
