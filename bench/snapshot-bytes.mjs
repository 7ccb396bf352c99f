// Bytes on the wire per chat turn (a script, not a test): `node bench/snapshot-bytes.mjs [--quick]`.
// Needs pkg/ (bash scripts/build.sh). Side by side in one run, the same JS model and storage for
// every handler (as in bench/turn.mjs):
//
//   turnkeep       createChatHandler of this tree (snapshots paced by core::coalesce)
//   turnkeep base  with TURNKEEP_BASE_PKG=<dir of another pkg/ build>: that build (e.g. main's)
//   AgentsKit      with AGENTSKIT_SERVER=<bundle>: AgentsKit Chat's own handler (its packages are
//                  not on npm: bench/agentskit/build.sh bundles it from its public repositories)
//   TS baseline    bench/baseline/chat-handler.ts, AgentsKit's handler job (one CAS save per
//                  snapshot; it sends a line whenever its reader pulls and a state is pending)
// The ratio column divides by AgentsKit's own handler when it runs, else by the TS baseline.
//
// For answers of 3, 200, 2,000 and 8,000 chunks (`w1 w2 …`, one word a chunk), at two paces: a
// model as fast as the host (each chunk one microtask later; 5 turns each, median) and a model
// at 50 chunks a second (one turn each, each handler in a worker thread of its own: turnkeep's
// alone, then the others' at the same time, so the 8,000-chunk row takes 320 s). The reader keeps
// up: it reads the next line as soon as it has one. SNAPSHOT_BYTES_PER_S=<n> runs turnkeep with that `snapshotBytesPerSecond`.
// Per turn: lines, bytes, and how late the chunks' text reached the reader (the time from the
// model yielding chunk k to the first line showing k chunks; the last line included): the
// latest, and the 99th percentile over the turn's chunks.
// `--quick` skips the 8,000-chunk rows.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

import { transformSync } from 'esbuild';

import * as pkg from '../js/node.mjs';
import { chatRequest, submitEvent } from '../tests/support/chat-harness.mjs';

const QUICK = process.argv.includes('--quick');
const SIZES = QUICK ? [3, 200, 2_000] : [3, 200, 2_000, 8_000];
const FAST_TURNS = 5;
const SLOW_CHUNK_MS = 20; // 50 chunks a second
/** Long enough for 8,000 chunks at 50 a second (160 s). */
const TURN_TIMEOUT_MS = 300_000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- the model: chunk k arrives, its time is noted, then it is yielded. One per handler (a
// handler runs one turn at a time here): `times` holds the arrivals of its latest turn.

function wordsModel(field, pace) {
  const model = async function* (count) {
    const times = [];
    model.times = times;
    for (let k = 1; k <= count; k += 1) {
      if (pace === 'host') await Promise.resolve();
      else await sleep(SLOW_CHUNK_MS);
      times.push(performance.now());
      yield { type: 'text', [field]: k === 1 ? 'w1' : ` w${k}` };
    }
  };
  return model;
}

const countOf = (messages) => Number(/^\/words (\d+)$/.exec(messages.filter((m) => m.role === 'user').at(-1)?.content ?? '')?.[1] ?? 0);

function casStorage() {
  const rows = new Map();
  return {
    async load(sessionId) {
      return rows.get(sessionId);
    },
    async save(snapshot, expectedCursor) {
      const text = typeof snapshot === 'string' ? snapshot : JSON.stringify(snapshot);
      const { sessionId, cursor } = JSON.parse(text);
      const stored = rows.get(sessionId);
      const current = stored === undefined ? undefined : JSON.parse(stored).cursor;
      if ((expectedCursor ?? undefined) !== current || cursor === undefined) return false;
      rows.set(sessionId, text);
      return true;
    },
  };
}

const forgetfulMemory = () => ({ load: async () => [], save: async () => {} });

// ---- the handlers

function turnkeepHandler(api, pace) {
  const model = wordsModel('text', pace);
  const storage = casStorage();
  const definition = api.defineChat({
    id: 'bench',
    revision: 1,
    model: { stream: (request) => model(countOf(request.messages)) },
    memory: forgetfulMemory(),
  });
  const handler = api.createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => storage, timeoutMs: TURN_TIMEOUT_MS, ...(BUDGET && { snapshotBytesPerSecond: BUDGET }) });
  return { handler, model };
}

async function baselineHandler(pace, createChatHandler) {
  const model = wordsModel('content', pace);
  const storage = casStorage();
  const adapter = { createSource: (request) => ({ stream: () => model(countOf(request.messages)) }) };
  const definition = { id: 'bench', revision: 1, chat: { adapter, memory: forgetfulMemory() } };
  return { handler: createChatHandler({ resolveDefinition: () => definition, sessionStorage: () => storage, timeoutMs: TURN_TIMEOUT_MS }), model };
}

// ---- one turn

let sessions = 0;

/** One turn of `count` chunks, read as fast as lines come: lines, bytes, the latest text. */
async function turn({ handler, model }, count) {
  sessions += 1;
  const sessionId = `s${sessions}`;
  const response = await handler(chatRequest(submitEvent({ sessionId, turnId: 't1', input: `/words ${count}` })));
  if (response.status !== 200) throw new Error(`status ${response.status}: ${await response.text()}`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let bytes = 0;
  let buffered = '';
  const shownAt = []; // [ms, chunks shown] per line
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const now = performance.now();
    bytes += value.byteLength;
    buffered += decoder.decode(value, { stream: true });
    let newline;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = JSON.parse(buffered.slice(0, newline));
      buffered = buffered.slice(newline + 1);
      const answer = line.payload?.messages?.filter((m) => m.role === 'assistant').at(-1)?.content ?? '';
      shownAt.push([now, answer === '' ? 0 : answer.split(' ').length]);
    }
  }
  const last = shownAt.at(-1);
  if (!last || last[1] !== count) throw new Error(`the last line shows ${last?.[1]} of ${count} chunks`);
  const { times } = model;
  const late = [];
  let line = 0;
  for (let k = 1; k <= count; k += 1) {
    while (shownAt[line][1] < k) line += 1;
    late.push(shownAt[line][0] - times[k - 1]);
  }
  late.sort((a, b) => a - b);
  return { lines: shownAt.length, bytes, lateMs: late.at(-1), late99Ms: late[Math.floor(0.99 * (late.length - 1))] };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function table(title, header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padStart(widths[i])).join(' | ')} |`;
  console.log(`\n${title}`);
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(r));
}

const kb = (bytes) => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${(bytes / 1e3).toFixed(1)} kB`);

async function tsBaseline() {
  const source = readFileSync(new URL('./baseline/chat-handler.ts', import.meta.url), 'utf8');
  const { code } = transformSync(source, { loader: 'ts', format: 'esm', target: 'node20' });
  return (await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`)).createChatHandler;
}

// ---- main: the host pace here, each 50/s turn in a worker thread of its own (one event loop per
// handler, all at the same time: a handler's work does not delay another's timers)

const BUDGET = process.env.SNAPSHOT_BYTES_PER_S ? Number(process.env.SNAPSHOT_BYTES_PER_S) : undefined;

async function handlerNamed(name, pace) {
  switch (name) {
    case 'turnkeep':
      return turnkeepHandler(pkg, pace);
    case 'turnkeep base': {
      const dir = process.env.TURNKEEP_BASE_PKG;
      const glue = await import(new URL(`file://${dir}/turnkeep.js`).href);
      glue.initSync({ module: readFileSync(`${dir}/turnkeep_bg.wasm`) });
      return turnkeepHandler({ ...glue, defineChat: pkg.defineChat }, pace);
    }
    case 'TS baseline (AgentsKit job)':
      return baselineHandler(pace, await tsBaseline());
    default: {
      const { createChatHandler } = await import(new URL(`file://${process.env.AGENTSKIT_SERVER}`).href);
      return baselineHandler(pace, createChatHandler);
    }
  }
}

if (!isMainThread) {
  const { name, count } = workerData;
  parentPort.postMessage(await turn(await handlerNamed(name, '50/s'), count));
} else {
  const names = ['turnkeep'];
  if (process.env.TURNKEEP_BASE_PKG) names.push('turnkeep base');
  names.push('TS baseline (AgentsKit job)');
  if (process.env.AGENTSKIT_SERVER) names.push("AgentsKit's handler");
  const reference = names.at(-1);
  const notes = [
    process.env.TURNKEEP_BASE_PKG && `base = ${process.env.TURNKEEP_BASE_PKG}`,
    process.env.AGENTSKIT_SERVER && `AgentsKit = ${process.env.AGENTSKIT_SERVER}`,
    BUDGET && `snapshotBytesPerSecond = ${BUDGET}`,
  ].filter(Boolean);
  console.log(`snapshot bytes per turn — Node ${process.version}; the reader keeps up${notes.map((n) => `; ${n}`).join('')}`);
  const inThread = (name, count) =>
    new Promise((resolve, reject) => {
      const worker = new Worker(new URL(import.meta.url), { workerData: { name, count } });
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  for (const pace of ['host', '50/s']) {
    const handlers = pace === 'host' ? await Promise.all(names.map((n) => handlerNamed(n, pace))) : [];
    const rows = [];
    for (const count of SIZES) {
      let results;
      if (pace === 'host') {
        const runs = names.map(() => []);
        for (let n = 0; n < FAST_TURNS; n += 1) {
          for (const [i, handler] of handlers.entries()) runs[i].push(await turn(handler, count));
        }
        results = runs.map((r) => ({ lines: median(r.map((x) => x.lines)), bytes: median(r.map((x) => x.bytes)), lateMs: median(r.map((x) => x.lateMs)), late99Ms: median(r.map((x) => x.late99Ms)) }));
      } else {
        // turnkeep's turn first, alone: the others' full snapshots (up to 190 MB a turn to
        // encode, save and parse) would otherwise take the CPU its timers need on this machine.
        const first = await inThread(names[0], count);
        results = [first, ...(await Promise.all(names.slice(1).map((name) => inThread(name, count))))];
      }
      const ref = results[names.indexOf(reference)];
      const baseRow = results[names.indexOf('turnkeep base')];
      for (const [i, name] of names.entries()) {
        const r = results[i];
        rows.push([count, name, r.lines, kb(r.bytes), (r.bytes / ref.bytes).toFixed(3), baseRow ? (r.bytes / baseRow.bytes).toFixed(3) : '—', `${r.lateMs.toFixed(0)} / ${r.late99Ms.toFixed(0)}`]);
      }
    }
    table(
      `pace: ${pace === 'host' ? `as fast as the host (median of ${FAST_TURNS} turns)` : '50 chunks a second (one turn each, each handler in its own thread; turnkeep alone, then the others at once)'}`,
      ['chunks', 'handler', 'lines', 'bytes', `bytes ÷ ${reference}`, 'bytes ÷ base', 'text late ms: max / p99'],
      rows,
    );
  }
}
