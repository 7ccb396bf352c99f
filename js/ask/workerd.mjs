// `turnkeep/ask` in Cloudflare Workers: the `.wasm` import is an already compiled
// WebAssembly.Module (see js/workerd.mjs).
import wasmModule from '../../pkg-ask/turnkeep_bg.wasm';
import { initSync } from '../../pkg-ask/turnkeep.js';

initSync({ module: wasmModule });

export * from './api.mjs';
