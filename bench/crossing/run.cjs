// JS value <-> serde_json::Value: JSON text (JSON.stringify / JSON.parse, what src/web/convert.rs
// does) against serde-wasm-bindgen, on chat messages of three sizes. A benchmark, not a test:
//   cd bench/crossing && cargo build --release --target wasm32-unknown-unknown \
//     && wasm-bindgen target/wasm32-unknown-unknown/release/turnkeep_crossing_bench.wasm --target nodejs --out-dir pkg \
//     && node run.cjs
const m = require('./pkg/turnkeep_crossing_bench.js');
function message(i) {
  return { id: `msg-${i}`, role: i % 2 ? 'assistant' : 'user', content: 'word '.repeat(40 + (i % 7) * 10).trim(), status: 'complete', createdAt: '2026-11-30T16:00:00.000Z',
    ...(i % 5 === 3 ? { toolCalls: [{ id: `call-${i}`, name: 'lookup', args: { query: `q ${i}` }, status: 'complete' }] } : {}) };
}
for (const count of [4, 20, 100]) {
  const value = Array.from({ length: count }, (_, i) => message(i));
  const json = JSON.stringify(value);
  const n = Math.max(50, Math.floor(20000 / count));
  const time = (f) => { f(10); const t0 = process.hrtime.bigint(); f(n); return Number(process.hrtime.bigint() - t0) / 1e3 / n; };
  const rows = [];
  for (let round = 0; round < 5; round++) {
    rows.push([time((k) => m.to_rust_text(value, k)), time((k) => m.to_rust_swb(value, k)), time((k) => m.to_js_text(json, k)), time((k) => m.to_js_swb(json, k))]);
  }
  const med = (i) => rows.map((r) => r[i]).sort((a, b) => a - b)[2];
  console.log(`${count} messages (${json.length} B JSON), µs per conversion, median of 5:`);
  console.log(`  JS -> serde_json: JSON text ${med(0).toFixed(1)}  serde-wasm-bindgen ${med(1).toFixed(1)}  (swb/text ${(med(1) / med(0)).toFixed(2)})`);
  console.log(`  serde_json -> JS: JSON text ${med(2).toFixed(1)}  serde-wasm-bindgen ${med(3).toFixed(1)}  (swb/text ${(med(3) / med(2)).toFixed(2)})`);
}
