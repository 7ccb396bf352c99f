// Makes a Worker build's generated Durable Object classes real Durable Objects. Shared by the
// package's `turnkeep/cloudflare` entry (objects.mjs), the demo Worker and its test build
// (js/cloudflare/bind.mjs), which bind different builds of the same Rust classes.
//
// RPC reaches only classes that extend DurableObject, so the generated classes get its
// prototype: a user's Worker (and the demo's) calls ChatSession's methods over RPC, and
// SessionStream objects call each other's for forks.
import { DurableObject } from 'cloudflare:workers';

/**
 * Instantiates `glue` (`{ initSync, ChatSessionObject, SessionStreamObject }`, wasm-bindgen
 * `--target web` output) with `wasmModule` and returns `{ ChatSession, SessionStream }`, the
 * classes under the names wrangler.toml binds.
 */
export function bindObjects(glue, wasmModule) {
  // workerd hands a `.wasm` import over as a compiled WebAssembly.Module (Workers forbid
  // compiling wasm from bytes at run time), so the synchronous init is enough.
  glue.initSync({ module: wasmModule });
  for (const generated of [glue.ChatSessionObject, glue.SessionStreamObject]) {
    Object.setPrototypeOf(generated.prototype, DurableObject.prototype);
    Object.setPrototypeOf(generated, DurableObject);
  }
  return { ChatSession: glue.ChatSessionObject, SessionStream: glue.SessionStreamObject };
}
