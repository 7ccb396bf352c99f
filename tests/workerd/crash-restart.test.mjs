// Crash and restart mid-turn (issue 13, point 1): `wrangler dev` of the demo Worker SIGKILLed at
// 54 seeded kill points of a turn (9 kills × 6 sessions in flight: before / after the claim
// write, before the messages are saved, before / after the release, mid-stream with and without
// an acknowledged stop request, a random moment), restarted on the same persisted directory
// each time. The checks are tests/support/crash-restart.mjs's: every session usable (busy until
// its lease's recorded expiry, a new turn accepted then, at once without a lease), the crashed
// turn in the terminal history (`indeterminate` when its lease lapsed) and never one whose
// claim was not stored, saved messages equal to the stream's projection, nothing a reader was
// served lost, every acknowledged append of a concurrent producer kept once.
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

test('54 seeded SIGKILLs mid-turn: every session usable after the restart, history and stream intact', { timeout: 600_000 }, async () => {
  const report = await runCrashCycles({ seed: 13, cycles: 9, perCycle: 6, persistDir: state });
  console.log(`# crash-restart: ${report.killPoints} kill points over ${report.restarts} SIGKILLs in ${report.elapsedMs} ms; ` +
    `${report.appends} acknowledged appends; by kind ${JSON.stringify(report.byKind)}`);
  assert.deepEqual(report.violations, []);
  assert.equal(report.killPoints, 54);
  // The plan reaches every kind of kill point (the seed is fixed, so this is a property of it).
  for (const [kind, count] of Object.entries(report.byKind)) assert.ok(count > 0, `no kill point of kind ${kind}`);
});
