// `turnkeep/client` in Cloudflare Workers: the `.wasm` import is an already compiled
// WebAssembly.Module (see js/workerd.mjs).
import wasmModule from '../../pkg-client/turnkeep_bg.wasm';
import { initSync } from '../../pkg-client/turnkeep.js';

initSync({ module: wasmModule });

export * from './api.mjs';
