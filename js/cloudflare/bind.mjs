// Binds a Worker build's wasm-bindgen glue to its module: the demo Worker (worker.mjs, over
// pkg-worker/) and its test build (tests/support/test-hooks-worker.mjs, over pkg-worker-test/)
// are the same few lines over different builds.
//
// RPC reaches only Durable Object classes that extend DurableObject, so the generated classes
// get its prototype (the Worker calls ChatSession's methods, and SessionStream objects call
// each other's for forks, over RPC).
import { DurableObject } from 'cloudflare:workers';

/** `{ ChatSession, SessionStream, fetch }` of a glue's exports (`{ initSync, ChatSessionObject, SessionStreamObject, fetch }`), instantiated with `wasmModule`. */
export function bindWorker(glue, wasmModule) {
  // workerd hands a `.wasm` import over as a compiled WebAssembly.Module (Workers forbid
  // compiling wasm from bytes at run time), so the synchronous init is enough.
  glue.initSync({ module: wasmModule });
  for (const generated of [glue.ChatSessionObject, glue.SessionStreamObject]) {
    Object.setPrototypeOf(generated.prototype, DurableObject.prototype);
    Object.setPrototypeOf(generated, DurableObject);
  }
  return { ChatSession: glue.ChatSessionObject, SessionStream: glue.SessionStreamObject, fetch: glue.fetch };
}
