// CPU per request of the demo Worker, two trees side by side (a script, not a test):
//
//   node bench/worker-cpu.mjs OTHER_ROOT [rounds]
//
// OTHER_ROOT is a checkout of another revision with its builds in place (e.g. `git worktree add
// /tmp/base main && (cd /tmp/base && npm ci && bash scripts/build.sh)`); this tree is B, it is A.
// Each tree's Worker is served by the workerd binary itself (tests/support/workerd-serve.mjs of
// that tree: its modules, bindings as wrangler.toml, no proxy in front), and the CPU time the
// workerd process spent (user + system, from /proc/PID/stat) is divided by the requests sent.
// That counts the Worker and both Durable Objects. Rounds alternate A and B so load on the
// machine hits both alike; the figure per workload is the median over rounds, and B/A.
//
// Workloads: a chat turn (POST /api/chat, demo model at chunkDelayMs 0, read to the end, its
// publishing to the session stream included: `turn` echoes 4 words in a new session, `turn40`
// streams 40 in a new session, `again` echoes 4 words in a session that had a turn before), an
// append (POST /v1/stream/<name>, JSON), a catch-up read (GET ?offset=-1 of a 50-item stream) and
// the session view (GET /api/sessions/:id).
//
// For the turns, also what their session streams' objects did, per turn (the test hooks' counts,
// `GET /__test/stream-io/<name>`, summed over the round's sessions): POSTs (appends), storage
// transactions, those that wrote (SQLite commits), SQL statements. A tree whose Worker has no
// such counts shows "—".
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { submitEvent } from '../tests/support/chat-harness.mjs';

const ROOT_B = resolve(new URL('..', import.meta.url).pathname);
const ROOT_A = resolve(process.argv[2] ?? '');
const ROUNDS = Number(process.argv[3] ?? 5);
const N = { turn: 30, turn40: 20, again: 30, append: 200, read: 200, view: 100 };
const TURN_INPUTS = { turn: 'benchmark this turn please', turn40: '/words 40', again: 'benchmark this turn please' };
const IO_KEYS = ['posts', 'commits', 'transactions', 'statements'];
const TICKS_PER_S = 100; // getconf CLK_TCK on Linux

if (!process.argv[2]) {
  console.error('usage: node bench/worker-cpu.mjs OTHER_ROOT [rounds]');
  process.exit(2);
}

function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S; // utime + stime
}

async function serve(root) {
  const { serveWorkerd } = await import(pathToFileURL(join(root, 'tests/support/workerd-serve.mjs')).href);
  const { tempDir } = await import(pathToFileURL(join(root, 'tests/support/temp-dir.mjs')).href);
  // A tree with a separate test build (pkg-worker-test/) serves it: only it has the
  // `/__test/stream-io` counts. Older trees carry the hooks in pkg-worker/, behind TEST_HOOKS.
  const testBuild = 'tests/support/test-hooks-worker.mjs';
  const entry = existsSync(join(root, testBuild)) ? { entry: testBuild } : {};
  return serveWorkerd({ persistDir: tempDir('bench-cpu-'), vars: { STREAMS_PUBLIC: '1', DEMO_CHUNK_DELAY_MS: '0', TEST_HOOKS: '1' }, ...entry });
}

let counter = 0;
function submit(sessionId, input) {
  const turnId = `turn-${process.pid}-${++counter}`;
  return JSON.stringify(submitEvent({ sessionId, turnId, input, extra: { emittedAt: new Date().toISOString() } }));
}

async function chatTurn(url, sessionId, input) {
  const r = await fetch(`${url}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
    body: submit(sessionId, input),
  });
  if (r.status !== 200) throw new Error(`turn: ${r.status} ${await r.text()}`);
  await r.text();
}

const WORKLOADS = {
  turn: (url, i, stream) => chatTurn(url, `${stream}-${i}`, TURN_INPUTS.turn),
  turn40: (url, i, stream) => chatTurn(url, `${stream}-${i}`, TURN_INPUTS.turn40),
  again: (url, i, stream) => chatTurn(url, `${stream}-${i}`, TURN_INPUTS.again),
  async append(url, i, stream) {
    const r = await fetch(`${url}/v1/stream/${stream}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ i, text: 'x'.repeat(200) }) });
    if (r.status !== 204 && r.status !== 200) throw new Error(`append: ${r.status}`);
    await r.arrayBuffer();
  },
  async read(url, _i, stream) {
    const r = await fetch(`${url}/v1/stream/${stream}?offset=-1`);
    if (r.status !== 200) throw new Error(`read: ${r.status}`);
    await r.arrayBuffer();
  },
  async view(url) {
    const r = await fetch(`${url}/api/sessions/s-0`, { headers: { authorization: 'Bearer bench' } });
    if (r.status !== 200) throw new Error(`view: ${r.status}`);
    await r.arrayBuffer();
  },
};

async function measure(server, name, round) {
  const url = server.baseUrl;
  const stream = `bench-${name}-${round}-${Date.now()}`;
  if (name === 'append' || name === 'read') {
    await fetch(`${url}/v1/stream/${stream}`, { method: 'PUT', headers: { 'content-type': 'application/json' } });
    if (name === 'read') for (let i = 0; i < 50; i++) await WORKLOADS.append(url, i, stream);
  }
  if (name === 'view') await chatTurn(url, 's-0', TURN_INPUTS.turn); // the session it shows
  if (name === 'again') for (let i = 0; i < N.again; i++) await chatTurn(url, `${stream}-${i}`, TURN_INPUTS.again); // their first turns
  const earlier = name === 'again' ? await streamIo(url, stream, N.again) : undefined;
  for (let i = 0; i < 3; i++) await WORKLOADS[name](url, 1000 + i, stream); // warm
  const before = cpuMs(server.pid);
  for (let i = 0; i < N[name]; i++) await WORKLOADS[name](url, i, stream);
  if (name in TURN_INPUTS) await new Promise((r) => setTimeout(r, 300)); // the turns' last writes
  const cpu = (cpuMs(server.pid) - before) / N[name];
  if (!(name in TURN_INPUTS)) return { cpu };
  const after = await streamIo(url, stream, N[name]);
  const io = Object.fromEntries(IO_KEYS.map((k) => [k, (after[k] - (earlier?.[k] ?? 0)) / N[name]]));
  return { cpu, io };
}

/** The stream objects' counts of sessions `${stream}-0…n-1`, summed (NaN: no counts). */
async function streamIo(url, stream, n) {
  const io = Object.fromEntries(IO_KEYS.map((k) => [k, 0]));
  for (let i = 0; i < n; i++) {
    const r = await fetch(`${url}/__test/stream-io/chat/bench/${stream}-${i}`);
    const counts = r.status === 200 ? await r.json() : {};
    for (const k of IO_KEYS) io[k] = counts[k] === undefined ? NaN : io[k] + counts[k];
  }
  return io;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const per = (x) => (Number.isNaN(x) ? '—' : x.toFixed(1));

const a = await serve(ROOT_A);
const b = await serve(ROOT_B);
try {
  const results = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of Object.keys(WORKLOADS)) {
      results[name] ??= { a: [], b: [], io: {} };
      const [first, second] = round % 2 ? [['b', b], ['a', a]] : [['a', a], ['b', b]];
      for (const [side, server] of [first, second]) {
        const { cpu, io } = await measure(server, name, round);
        results[name][side].push(cpu);
        if (io) results[name].io[side] = io; // the same every round: counts, not times
      }
    }
  }
  console.log(`A = ${ROOT_A}\nB = ${ROOT_B}\nCPU ms per request (workerd user+sys), median of ${ROUNDS} rounds:`);
  for (const [name, { a: as, b: bs }] of Object.entries(results)) {
    const [ma, mb] = [median(as), median(bs)];
    console.log(`  ${name.padEnd(7)} A ${ma.toFixed(2).padStart(6)}  B ${mb.toFixed(2).padStart(6)}  B/A ${(mb / ma).toFixed(2)}   (rounds A ${as.map((x) => x.toFixed(2)).join(' ')} | B ${bs.map((x) => x.toFixed(2)).join(' ')})`);
  }
  console.log('Per turn, in its session stream\'s object (last round): A | B');
  for (const name of Object.keys(TURN_INPUTS)) {
    const { a: ia, b: ib } = results[name].io;
    console.log(`  ${name.padEnd(7)} ${IO_KEYS.map((k) => `${k} ${per(ia[k])} | ${per(ib[k])}`).join('   ')}`);
  }
} finally {
  await a.stop();
  await b.stop();
}
