// NOTE: written for the JS-shell Worker (it swaps js/cloudflare/session-stream.mjs, which is gone
// since the Worker and its objects are Rust in pkg-worker/); to compare two Worker builds use
// bench/worker-cpu.mjs (two trees side by side). Kept for the record of its measurements.
//
// A/B benchmark (a script, not a test): one acknowledged append at a time against the session
// stream Worker on the workerd binary, the working tree (B) against a git revision (A) of the
// files that make up the append path, in interleaved rounds (alternating which side goes first)
// so machine drift and order effects hit both alike. Noise measured with A = B (farm-bench, 7
// single-round runs): rate ratio 1.01x-1.11x in favour of the side that ran second; workerd CPU
// per append 0.94x-1.04x (median 0.98x). Trust only differences beyond that.
//
//   node bench/append-ab.mjs [REV] [--pkg DIR]
//
// REV (default HEAD) supplies A's js/cloudflare/*.mjs; --pkg DIR supplies A's pkg-worker/ files (a
// copy of an earlier Worker build), else A uses the current pkg-worker/. Prints each side's median rate and p50/p90
// latency and the workerd process's CPU time per append (user + system, from /proc) over BENCH_ROUNDS (default 5) rounds of BENCH_APPENDS (default 1000) appends, and B/A.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { timedAppends } from './appends.mjs';
import { join } from 'node:path';
import { removeDir, tempDir } from '../tests/support/temp-dir.mjs';
import { ROOT } from '../tests/support/wrangler-dev.mjs';
import { serveWorkerd } from '../tests/support/workerd-serve.mjs';

const args = process.argv.slice(2);
const pkgAt = args.indexOf('--pkg');
const pkgDir = pkgAt >= 0 ? args.splice(pkgAt, 2)[1] : null;
const rev = args[0] ?? 'HEAD';
const APPENDS = Number(process.env.BENCH_APPENDS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const FILES = ['js/cloudflare/session-stream.mjs', 'js/cloudflare/worker.mjs'];

const overrides = {};
for (const file of FILES) overrides[file] = execFileSync('git', ['show', `${rev}:${file}`], { cwd: ROOT, encoding: 'utf8' });
if (pkgDir) {
  overrides['pkg-worker/turnkeep.js'] = readFileSync(join(pkgDir, 'turnkeep.js'), 'utf8');
  overrides['pkg-worker/turnkeep_bg.wasm'] = readFileSync(join(pkgDir, 'turnkeep_bg.wasm'));
}

async function run({ baseUrl, pid }, name) {
  const url = `${baseUrl}/v1/stream/${name}`;
  const created = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/json' } });
  if (created.status !== 201) throw new Error(`PUT: HTTP ${created.status}`);
  const { rate, cpu, p50, p90 } = await timedAppends(url, APPENDS, { pid, statuses: [204] });
  return { rate, cpu, p50: p50 * 1000, p90: p90 * 1000 };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const dir = tempDir('turnkeep-ab-');
const vars = { STREAMS_PUBLIC: '1' };
const sides = [
  { label: `A (${rev}${pkgDir ? ` + ${pkgDir}` : ''})`, server: await serveWorkerd({ persistDir: join(dir, 'a'), vars, overrides }), runs: [] },
  { label: 'B (working tree)', server: await serveWorkerd({ persistDir: join(dir, 'b'), vars }), runs: [] },
];
try {
  for (const side of sides) await run(side.server, 'warmup');
  for (let i = 0; i < ROUNDS; i++) {
    // A B, then B A: measured with A = B, whichever side runs second in a round is ~5% faster.
    for (const side of i % 2 ? [...sides].reverse() : sides) side.runs.push(await run(side.server, `r${i}`));
  }
} finally {
  for (const side of sides) await side.server.stop();
  removeDir(dir);
}
console.log(`${APPENDS} sequential appends x ${ROUNDS} interleaved rounds, workerd binary, global fetch (keep-alive)`);
const summary = sides.map(({ label, runs }) => {
  const s = { rate: median(runs.map((r) => r.rate)), cpu: median(runs.map((r) => r.cpu)), p50: median(runs.map((r) => r.p50)), p90: median(runs.map((r) => r.p90)) };
  console.log(`${label.padEnd(40)} ${`${Math.round(s.rate)}/s`.padStart(9)}  p50 ${Math.round(s.p50)} us  p90 ${Math.round(s.p90)} us  workerd CPU ${Math.round(s.cpu)} us/append  rounds: ${runs.map((r) => Math.round(r.rate)).join(' ')}`);
  return s;
});
console.log(`B/A rate ${(summary[1].rate / summary[0].rate).toFixed(2)}x, workerd CPU per append ${(summary[1].cpu / summary[0].cpu).toFixed(2)}x`);
