// The hello-world Worker's module: instantiates the wasm-bindgen build of hello/ the way
// js/cloudflare/worker.mjs instantiates pkg-worker/ (a precompiled module, the synchronous init).
import wasmModule from './hello/pkg/turnkeep_hello_worker_bg.wasm';
import { fetch, initSync } from './hello/pkg/turnkeep_hello_worker.js';

initSync({ module: wasmModule });

export default { fetch };
