// Crash and restart mid-turn (issue 13, point 1; issue 27, point 1): `wrangler dev` of the demo
// Worker SIGKILLed at 54 seeded kill points of a turn (9 kills × 6 sessions in flight: before /
// after the claim write, before the messages are saved, before / after the release, inside a
// tool, before / after the record of its result, mid-stream with and without an acknowledged
// stop request, a random moment), restarted on the same persisted directory
// each time. The checks are tests/support/crash-restart.mjs's: every session usable (busy until
// its lease's recorded expiry, a new turn accepted then, at once without a lease), the crashed
// turn in the terminal history (`indeterminate` when its lease lapsed) and never one whose
// claim was not stored, saved messages equal to the stream's projection, nothing a reader was
// served lost, every acknowledged append of a concurrent producer kept once; and exactly once:
// a turn killed inside its tool, between the tool's end and the record of its result, or after
// that record, retried by its client under the same turn id, completes with every call run once
// under one key, except that the first two may run it once more with the same key (the tool's
// runs are counted per idempotency key by a ledger outside workerd).
//
// It fails on the build before the fix it came with: a claim that took over a lapsed lease
// simply overwrote it, so the crashed turn vanished from the terminal history ("the crashed
// turn is missing from the terminal history" at every kill point after the claim write) and a
// retry of its id ran its model again. More kill points: `node scripts/crash-restart.mjs`.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';

import { runCrashCycles } from '../support/crash-restart.mjs';
import { removeDir, tempDir } from './harness.mjs';

const state = tempDir('turnkeep-crash-');
after(() => removeDir(state));

test('54 seeded SIGKILLs mid-turn: every session usable after the restart, history and stream intact, every tool call run once', { timeout: 600_000 }, async () => {
  const report = await runCrashCycles({ seed: 13, cycles: 9, perCycle: 6, persistDir: state });
  console.log(`# crash-restart: ${report.killPoints} kill points over ${report.restarts} SIGKILLs in ${report.elapsedMs} ms; ` +
    `${report.appends} acknowledged appends; by kind ${JSON.stringify(report.byKind)}; ` +
    `${report.toolKeys} tool calls, runs per key ${JSON.stringify(report.runsPerKey)}, ` +
    `by kill point of the ${report.toolRetries} retried turns ${JSON.stringify(report.runsPerKeyByPoint)}`);
  assert.deepEqual(report.violations, []);
  assert.equal(report.killPoints, 54);
  // Retried turns ran their tool under a key (the ledger saw them), and a kill after the record
  // of a result ran nothing again.
  assert.ok(report.toolRetries > 0 && report.toolKeys >= report.toolRetries, JSON.stringify(report));
  assert.deepEqual(Object.keys(report.runsPerKeyByPoint['record-after'] ?? { 1: 0 }), ['1']);
  // The plan reaches every kind of kill point (the seed is fixed, so this is a property of it).
  for (const [kind, count] of Object.entries(report.byKind)) assert.ok(count > 0, `no kill point of kind ${kind}`);
});
