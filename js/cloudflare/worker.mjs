// The demo Worker's module (wrangler.toml `main`). The Worker is Rust (src/cloudflare, written
// with workers-rs: `#[event(fetch)]` and two `#[durable_object]` classes) built by
// scripts/build.sh into pkg-worker/ with wasm-bindgen; this file only instantiates that module
// and exports what it generated, under the class names wrangler.toml binds.
//
// RPC reaches only Durable Object classes that extend DurableObject, so the generated classes
// get its prototype (the Worker calls ChatSession's methods, and SessionStream objects call
// each other's for forks, over RPC).
import { DurableObject } from 'cloudflare:workers';
import wasmModule from '../../pkg-worker/turnkeep_bg.wasm';
import { ChatSessionObject, fetch, initSync, SessionStreamObject } from '../../pkg-worker/turnkeep.js';

// workerd hands a `.wasm` import over as a compiled WebAssembly.Module (Workers forbid compiling
// wasm from bytes at run time), so the synchronous init is enough.
initSync({ module: wasmModule });

for (const generated of [ChatSessionObject, SessionStreamObject]) {
  Object.setPrototypeOf(generated.prototype, DurableObject.prototype);
  Object.setPrototypeOf(generated, DurableObject);
}

export { ChatSessionObject as ChatSession, SessionStreamObject as SessionStream };
export default { fetch };
