// Cold start (a script, not a test): `node bench/cold-start.mjs [rounds]`.
// Needs pkg*/ (bash scripts/build.sh) and the hello-world Worker (built by this script when
// missing: bench/cold-start/hello, cargo + wasm-bindgen, as scripts/build.sh builds pkg-worker/).
//
// 1. workerd: the time from starting a fresh workerd process to the first answer of its Worker,
//    for the demo Worker (the first chat turn: POST /api/chat read to its first line and to its
//    end, the two Durable Objects created on the way) and for a hello-world Rust Worker built the
//    same way (workers-rs, wasm-bindgen --target web, a thin JS entry; GET / → "hello"). Each
//    round starts both, in turn; medians, and the demo's ÷ hello's.
//    `first answer`: from spawning workerd to the first HTTP answer of the Worker (a HEAD the
//    Worker answers: workerd up, the isolate made, its module compiled and instantiated).
// 2. The wasm instantiation of each npm entry (`turnkeep`, `turnkeep/client`, `turnkeep/ask`,
//    `turnkeep/sandbox`) and of the Worker's module: in Node (a fresh process per entry and
//    round: compiling the bytes, instantiating with the glue's imports, and the whole import of
//    the entry), and in headless Chromium (a fresh page per round: `WebAssembly.compile` of the
//    fetched bytes, then the glue's `initSync`).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { serveWorkerd } from '../tests/support/workerd-serve.mjs';
import { removeDir, tempDir } from '../tests/support/temp-dir.mjs';
import { ROOT } from '../tests/support/wrangler-dev.mjs';
import { submitEvent } from '../tests/support/chat-harness.mjs';

const ROUNDS = Number(process.argv[2] ?? 7);
const HELLO = join(ROOT, 'bench/cold-start/hello');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => x.toFixed(1);

function table(title, header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padStart(widths[i])).join(' | ')} |`;
  console.log(`\n${title}`);
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(r));
}

function buildHello() {
  const wasm = join(HELLO, 'pkg/turnkeep_hello_worker_bg.wasm');
  if (existsSync(wasm)) return;
  console.log('building the hello-world Worker (bench/cold-start/hello)…');
  const target = join(HELLO, 'target');
  execFileSync('cargo', ['build', '--release', '--target', 'wasm32-unknown-unknown'], { cwd: HELLO, stdio: 'inherit', env: { ...process.env, CARGO_TARGET_DIR: target } });
  execFileSync('wasm-bindgen', [join(target, 'wasm32-unknown-unknown/release/turnkeep_hello_worker.wasm'), '--target', 'web', '--out-dir', join(HELLO, 'pkg'), '--remove-name-section', '--remove-producers-section'], { stdio: 'inherit' });
}

// ---- 1. workerd

/** Starts workerd on `entry` and times it: to the first answer, then `first(url)`'s steps. */
async function coldStart(entry, objects, first) {
  const persistDir = tempDir('bench-cold-');
  const t0 = performance.now();
  const server = await serveWorkerd({ persistDir, entry, objects, vars: { STREAMS_PUBLIC: '1', DEMO_CHUNK_DELAY_MS: '0' } });
  const ready = performance.now() - t0;
  try {
    const steps = await first(server.baseUrl, t0);
    const t1 = performance.now();
    await first(server.baseUrl, t1); // the same again, warm
    const warm = performance.now() - t1;
    return { ready, ...steps, warm };
  } finally {
    await server.stop();
    removeDir(persistDir);
  }
}

async function chatTurn(url, t0) {
  const response = await fetch(`${url}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer cold' },
    body: JSON.stringify(submitEvent({ sessionId: `cold-${Math.random().toString(36).slice(2)}`, turnId: 't1', input: 'hello there', extra: { emittedAt: new Date().toISOString() } })),
  });
  if (response.status !== 200) throw new Error(`chat: ${response.status}`);
  const reader = response.body.getReader();
  let firstLine;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
    if (firstLine === undefined && text.includes('\n')) firstLine = performance.now() - t0;
  }
  return { answer: firstLine, end: performance.now() - t0 };
}

async function hello(url, t0) {
  const response = await fetch(`${url}/`);
  const text = await response.text();
  if (text !== 'hello') throw new Error(`hello: ${response.status} ${text}`);
  const at = performance.now() - t0;
  return { answer: at, end: at };
}

// ---- 2. instantiation

const ENTRIES = [
  ['turnkeep', 'pkg'],
  ['turnkeep/client', 'pkg-client'],
  ['turnkeep/ask', 'pkg-ask'],
  ['turnkeep/sandbox', 'pkg-sandbox'],
  ['demo Worker (pkg-worker)', 'pkg-worker'],
];
const NODE_ENTRIES = { turnkeep: 'js/node.mjs', 'turnkeep/client': 'js/client/node.mjs', 'turnkeep/ask': 'js/ask/node.mjs', 'turnkeep/sandbox': 'js/sandbox/node.mjs' };

/** In a fresh Node process: compile, instantiate with the glue's imports, and the entry's import. */
function nodeInstantiation(dir, entry) {
  const script = `
    import { readFileSync } from 'node:fs';
    import { performance } from 'node:perf_hooks';
    const bytes = readFileSync(${JSON.stringify(join(ROOT, dir, 'turnkeep_bg.wasm'))});
    let t = performance.now();
    const module = new WebAssembly.Module(bytes);
    const compile = performance.now() - t;
    const glue = await import(${JSON.stringify(`file://${join(ROOT, dir, 'turnkeep.js')}`)});
    t = performance.now();
    glue.initSync({ module });
    const init = performance.now() - t;
    let load = null;
    ${entry ? `t = performance.now(); await import(${JSON.stringify(`file://${join(ROOT, entry)}`)}); load = performance.now() - t;` : ''}
    console.log(JSON.stringify({ compile, init, load }));`;
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`${dir}: ${out.stderr}`);
  return JSON.parse(out.stdout.trim().split('\n').at(-1));
}

async function chromiumInstantiation(rounds) {
  const { chromium } = await import('playwright-core');
  const server = createServer((request, response) => {
    const pathname = decodeURIComponent(new URL(request.url, 'http://x').pathname);
    if (pathname === '/') {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>cold start</title>');
      return;
    }
    const path = join(ROOT, pathname);
    if (!path.startsWith(ROOT) || !existsSync(path) || !statSync(path).isFile()) {
      response.writeHead(404).end();
      return;
    }
    const type = path.endsWith('.wasm') ? 'application/wasm' : path.endsWith('.js') || path.endsWith('.mjs') ? 'text/javascript' : 'text/html';
    response.writeHead(200, { 'content-type': type }).end(readFileSync(path));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  const results = {};
  try {
    for (let round = 0; round < rounds; round += 1) {
      for (const [name, dir] of ENTRIES.slice(0, 4)) {
        const context = await browser.newContext();
        const page = await context.newPage();
        await page.goto(`${base}/`);
        const r = await page.evaluate(async (dir) => {
          const bytes = await (await fetch(`/${dir}/turnkeep_bg.wasm`)).arrayBuffer();
          let t = performance.now();
          const module = await WebAssembly.compile(bytes);
          const compile = performance.now() - t;
          const glue = await import(`/${dir}/turnkeep.js`);
          t = performance.now();
          glue.initSync({ module });
          const init = performance.now() - t;
          return { compile, init };
        }, dir);
        (results[name] ??= []).push(r);
        await context.close();
      }
    }
  } finally {
    await browser.close();
    server.close();
  }
  return results;
}

// ---- main

buildHello();
console.log(`cold start — Node ${process.version}, ${ROUNDS} rounds`);
const demo = [];
const helloRuns = [];
for (let round = 0; round < ROUNDS; round += 1) {
  const pair = [
    () => coldStart('js/cloudflare/worker.mjs', undefined, chatTurn).then((r) => demo.push(r)),
    () => coldStart('bench/cold-start/hello-worker.mjs', [], hello).then((r) => helloRuns.push(r)),
  ];
  if (round % 2) pair.reverse();
  for (const run of pair) await run();
}
const col = (runs, key) => median(runs.map((r) => r[key]));
table(
  '1. A fresh workerd process to the Worker\'s first answers (ms from spawn, median)',
  ['Worker', 'first answer (HEAD)', 'first request: first line', 'first request: end', 'the same request warm'],
  [
    ['demo Worker, first chat turn', ms(col(demo, 'ready')), ms(col(demo, 'answer')), ms(col(demo, 'end')), ms(col(demo, 'warm'))],
    ['hello-world Rust Worker', ms(col(helloRuns, 'ready')), ms(col(helloRuns, 'answer')), ms(col(helloRuns, 'end')), ms(col(helloRuns, 'warm'))],
    ['demo ÷ hello', (col(demo, 'ready') / col(helloRuns, 'ready')).toFixed(2), (col(demo, 'answer') / col(helloRuns, 'answer')).toFixed(2), (col(demo, 'end') / col(helloRuns, 'end')).toFixed(2), (col(demo, 'warm') / col(helloRuns, 'warm')).toFixed(2)],
  ],
);
const sizes = Object.fromEntries(ENTRIES.map(([name, dir]) => [name, statSync(join(ROOT, dir, 'turnkeep_bg.wasm')).size]));
sizes['hello-world Worker'] = statSync(join(HELLO, 'pkg/turnkeep_hello_worker_bg.wasm')).size;

const nodeRows = [];
for (const [name, dir] of ENTRIES) {
  const runs = Array.from({ length: ROUNDS }, () => nodeInstantiation(dir, NODE_ENTRIES[name]));
  nodeRows.push([name, (sizes[name] / 1e3).toFixed(0), ms(col(runs, 'compile')), ms(col(runs, 'init')), NODE_ENTRIES[name] ? ms(col(runs, 'load')) : '—']);
}
table(
  '2a. Node: wasm instantiation per entry (fresh process each, median ms)',
  ['entry', 'wasm kB', 'new WebAssembly.Module', 'glue initSync', 'import of the entry (all of it)'],
  nodeRows,
);
const chromium = await chromiumInstantiation(ROUNDS);
table(
  '2b. Chromium (headless): wasm instantiation per entry (fresh page each, median ms)',
  ['entry', 'wasm kB', 'WebAssembly.compile', 'glue initSync'],
  Object.entries(chromium).map(([name, runs]) => [name, (sizes[name] / 1e3).toFixed(0), ms(col(runs, 'compile')), ms(col(runs, 'init'))]),
);
console.log(`\nhello-world Worker wasm: ${(sizes['hello-world Worker'] / 1e3).toFixed(0)} kB`);
