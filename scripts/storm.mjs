#!/usr/bin/env node
// Abort and load storm against the demo Worker in workerd:
// `node scripts/storm.mjs [--turns 500] [--sessions 50] [--seed X] [--rounds 2] [--direct] [--ops read,stop,...] [--settle-ms N]`
// Starts `wrangler dev` of the Worker's test build (pkg-worker-test/ as built, for its memory
// report: run `bash scripts/build.sh` first) — or, with
// `--direct`, the workerd binary alone (tests/support/workerd-serve.mjs: no wrangler proxy in
// front) — on a fresh directory and runs the storm of tests/support/storm.mjs `rounds` times on new sessions, then
// prints per round: violations (leaked leases, lost or doubled messages), time to the first
// snapshot line (p50/p99), how long sessions stayed busy after the storm, workerd's resident
// memory and the Worker isolate's wasm memory (a second round that does not grow them shows the
// memory is bounded, not retained per turn). Exits 1 on any violation.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isolateMemory, runStorm, STORM_VARS, workerdRss } from '../tests/support/storm.mjs';
import { startWranglerDev, TEST_HOOKS_WORKER } from '../tests/support/wrangler-dev.mjs';
import { serveWorkerd } from '../tests/support/workerd-serve.mjs';
import { removeDir, tempDir } from '../tests/support/temp-dir.mjs';

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '500' },
    sessions: { type: 'string', default: '50' },
    seed: { type: 'string', default: String(Date.now() % 100_000) },
    rounds: { type: 'string', default: '2' },
    direct: { type: 'boolean', default: false },
    ops: { type: 'string' },
    'settle-ms': { type: 'string', default: '0' },
  },
});
const [turns, sessions, seed, rounds] = [values.turns, values.sessions, values.seed, values.rounds].map(Number);
const dir = tempDir('turnkeep-storm-');
const dev = values.direct ? await directWorkerd() : await startWranglerDev({ persistDir: dir, vars: STORM_VARS, script: TEST_HOOKS_WORKER });
const mib = (bytes) => `${(bytes / 1048576).toFixed(1)} MiB`;
try {
  for (let round = 0; round < rounds; round += 1) {
    const r = await runStorm({ dev, seed: seed + round, turns, sessions, ops: values.ops?.split(',') });
    const m = r.memory;
    // A storm that stalled skips its after-the-storm turns: those figures are then missing.
    const ms = (value) => (value === undefined ? 'n/a' : `${value.toFixed(0)} ms`);
    console.log(`[storm] round ${round + 1} (seed ${seed + round}): ${r.turns} turns over ${r.sessions} sessions in ${(r.stormMs / 1000).toFixed(1)} s, ` +
      `${r.accepted} accepted; ops ${JSON.stringify(r.counts)}; resent after a dropped connection ${JSON.stringify(r.resent)}`);
    console.log(`[storm]   first snapshot line: p50 ${ms(r.firstLine.p50Ms)}, p99 ${ms(r.firstLine.p99Ms)}, max ${ms(r.firstLine.maxMs)} (n=${r.firstLine.n})`);
    console.log(`[storm]   a new turn taken after the storm: p50 ${ms(r.freeAfter.p50Ms)}, max ${ms(r.freeAfter.maxMs)}`);
    console.log(`[storm]   memory: wasm ${mib(m.before.wasmBytes)} → ${mib(m.after.wasmBytes)} (live heap ${mib(m.before.heapLiveBytes)} → ${mib(m.after.heapLiveBytes)}); workerd RSS ${mib(m.before.rssKb * 1024)} → ${mib(m.after.rssKb * 1024)} ` +
      `(sampled peak ${mib(m.after.sampledPeakKb * 1024)}, VmHWM ${mib(m.after.peakKb * 1024)}; ${m.after.processes} workerd processes); ` +
      `live objects ${JSON.stringify(m.before.liveObjects)} → ${JSON.stringify(m.after.liveObjects)}`);
    if (Number(values['settle-ms']) > 0) {
      // Idle Durable Objects are evicted by the runtime: what is still held after a pause is kept.
      await new Promise((resolve) => setTimeout(resolve, Number(values['settle-ms'])));
      const settled = await isolateMemory(dev.url);
      const rss = workerdRss(dev.pid);
      console.log(`[storm]   after ${values['settle-ms']} ms idle: wasm ${mib(settled.wasmMemoryBytes)} (live heap ${mib(settled.heapLiveBytes)}), workerd RSS ${mib(rss.rssKb * 1024)}, ` +
        `live objects ${JSON.stringify(settled.liveObjects)}`);
    }
    console.log(`[storm]   violations: ${r.violations.length}`);
    for (const v of r.violations) console.log(`    ${v}`);
    if (r.violations.length > 0) process.exitCode = 1;
  }
} finally {
  const errors = dev.output().split('\n').filter((l) => /error|panic|exceeded|restart/i.test(l));
  if (process.env.STORM_LOG) writeFileSync(process.env.STORM_LOG, dev.output());
  if (errors.length > 0) console.log(`[storm] wrangler dev printed ${errors.length} error lines, the first ones:\n${errors.slice(0, 8).join('\n')}`);
  await dev.stop();
  removeDir(dir);
}

/** workerd serving the Worker with no proxy in front, shaped like `startWranglerDev`'s result. */
async function directWorkerd() {
  const served = await serveWorkerd({ persistDir: dir, vars: STORM_VARS, verbose: true, entry: TEST_HOOKS_WORKER });
  return { url: served.baseUrl, pid: served.pid, output: served.log, stop: served.stop };
}
