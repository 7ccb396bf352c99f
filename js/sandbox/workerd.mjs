// `turnkeep/sandbox` in Cloudflare Workers: the `.wasm` import is an already compiled
// WebAssembly.Module (see js/workerd.mjs).
import wasmModule from '../../pkg-sandbox/turnkeep_bg.wasm';
import { initSync } from '../../pkg-sandbox/turnkeep.js';

initSync({ module: wasmModule });

export * from './api.mjs';
