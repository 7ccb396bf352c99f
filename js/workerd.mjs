// Cloudflare Workers (workerd) entry point: wrangler and workerd hand a `.wasm` import over as
// an already compiled WebAssembly.Module (Workers forbid compiling wasm from bytes at runtime).
import wasmModule from '../pkg/turnkeep_bg.wasm';
import { initSync } from '../pkg/turnkeep.js';

initSync({ module: wasmModule });

export * from './api.mjs';
