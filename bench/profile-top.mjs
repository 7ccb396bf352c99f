// Self time by function from a V8 .cpuprofile (node --cpu-prof): `node bench/profile-top.mjs FILE [n]`.
import { readFileSync } from 'node:fs';

const profile = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const top = Number(process.argv[3] ?? 30);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const dt = profile.timeDeltas;

/** Self time (µs) summed by `keyOf(callFrame)` over every sample; a sample keyed `undefined` is skipped. */
function timeBy(keyOf) {
  const sums = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const key = keyOf(byId.get(profile.samples[i]).callFrame);
    if (key !== undefined) sums.set(key, (sums.get(key) ?? 0) + (dt[i] ?? 0));
  }
  return sums;
}

const self = timeBy((f) => `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`);
const total = [...self.values()].reduce((a, b) => a + b, 0);
const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
for (const [k, us] of rows) console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
console.log(`total ${(total / 1000).toFixed(0)} ms`);

// Self time by where the code lives (wasm, the wasm-bindgen glue, web streams, undici, ...).
const area = (f) => {
  const u = f.url;
  if (u.startsWith('wasm://')) return f.functionName.startsWith('wasm-to-js') || f.functionName.startsWith('js-to-wasm') ? 'JS↔wasm transitions' : 'wasm (turnkeep Rust)';
  if (u.includes('/pkg/')) return 'wasm-bindgen glue (pkg/turnkeep.js)';
  if (u.includes('webstreams')) return 'Node web streams';
  if (u.includes('undici')) return 'undici (Request/Response/Headers)';
  if (u.includes('abort_controller') || u.includes('event_target') || u.includes('js_transferable')) return 'AbortController / EventTarget';
  if (u.includes('/bench/') || u.includes('/tests/')) return 'the benchmark itself (model, storage, reader)';
  if (f.functionName === '(garbage collector)') return 'GC';
  if (u === '' ) return `V8 builtins / ${f.functionName || 'other'}`.replace(/V8 builtins \/ (JSON\.|parse|stringify).*/, 'JSON.parse/stringify');
  return 'other Node internals';
};
const areas = timeBy(area);
console.log('\nby area:');
for (const [k, us] of [...areas.entries()].sort((a, b) => b[1] - a[1]).slice(0, 14)) console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`);

// What driving the turn costs, as distinct from the turn's work: the futures executor and its
// microtasks, polling the nested futures, wakers, promise callbacks into wasm and the closures
// made per turn (timers, stream sources, `future_to_promise`). A synchronous Rust step function
// driven by a JS loop (issue 28, item 2) could remove at most this much; the rest is work the
// turn does whichever way it is driven. Self time of the matching frames; needs a build that
// keeps wasm names (wasm-bindgen without --remove-name-section).
const DRIVING = [
  ['the executor and its microtasks', /js_sys::futures|wasm_bindgen_futures|queueMicrotask|enqueueMicrotask|runMicrotasks/],
  ['polling futures (poll_fn, races, guards)', /poll_fn::PollFn|UntilStopped|turnkeep_turn::race::|core::future::/],
  ['awaiting host promises (settlers, then, resolve)', /Settling|Settler|__wbg_then|__wbg_resolve|Promise::resolve/],
  ['closures made and dropped per turn', /makeMutClosure|_wbg_cb_unref|^real$|closures_____invoke|Promise::new|new_typed/],
];
const matched = timeBy((f) => DRIVING.find(([, re]) => re.test(f.functionName))?.[0]);
const driving = new Map(DRIVING.map(([k]) => [k, matched.get(k) ?? 0]));
const named = [...self.keys()].some((k) => k.includes('turnkeep_turn::'));
const drivingUs = [...driving.values()].reduce((a, b) => a + b, 0);
console.log(`\ndriving the turn (what a synchronous step function could remove at most)${named ? '' : ' — this build has no wasm names: the Rust rows read 0'}:`);
for (const [k, us] of driving) console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`);
console.log(`${((100 * drivingUs) / total).toFixed(1).padStart(5)}%  in all`);
