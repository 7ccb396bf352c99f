#!/usr/bin/env node
// Crash and restart mid-turn, at scale: `node scripts/crash-restart.mjs [--kills N] [--sessions S] [--seed X]`
// SIGKILLs `wrangler dev` of the demo Worker N times (default 50) with S turns in flight each
// (default 4, so 200 kill points), restarting on one persisted directory, and checks every
// session after each restart (tests/support/crash-restart.mjs says what). Prints a line per
// kill and a summary; exits 1 on any violation, printing it and the seed to replay.
// Build first (`bash scripts/build.sh`): it runs the test build, pkg-worker-test/, as it is.
import { parseArgs } from 'node:util';
import { runCrashCycles } from '../tests/support/crash-restart.mjs';
import { removeDir, tempDir } from '../tests/support/temp-dir.mjs';

const { values } = parseArgs({
  options: {
    kills: { type: 'string', default: '50' },
    sessions: { type: 'string', default: '4' },
    seed: { type: 'string', default: String(Date.now() % 100_000) },
  },
});
const [kills, sessions, seed] = [values.kills, values.sessions, values.seed].map(Number);
const dir = tempDir('turnkeep-crash-');
try {
  console.log(`[crash] seed ${seed}: ${kills} kills × ${sessions} sessions, state in ${dir}`);
  const report = await runCrashCycles({ seed, cycles: kills, perCycle: sessions, persistDir: dir, log: (l) => console.log(`[crash] ${l}`) });
  console.log(`[crash] ${report.killPoints} kill points over ${report.restarts} SIGKILLs in ${(report.elapsedMs / 1000).toFixed(1)} s; ` +
    `${report.appends} acknowledged appends kept; by kind ${JSON.stringify(report.byKind)}`);
  console.log(`[crash] exactly once: ${report.toolKeys} tool calls (idempotency keys), runs per key ${JSON.stringify(report.runsPerKey)}; ` +
    `of the ${report.toolRetries} turns retried after a kill around their tool (${report.overtaken} more parked there were ended by their deadline before the kill), runs per key by kill point ${JSON.stringify(report.runsPerKeyByPoint)}`);
  if (report.violations.length > 0) {
    console.log(`[crash] ${report.violations.length} violations (replay: --seed ${seed} --kills ${kills} --sessions ${sessions}):`);
    for (const v of report.violations) console.log(`  ${v}`);
    process.exitCode = 1;
  } else {
    console.log('[crash] no violations');
  }
} finally {
  removeDir(dir);
}
