// The demo Worker's module (wrangler.toml `main`). The Worker is Rust (src/cloudflare, written
// with workers-rs: `#[event(fetch)]` and two `#[durable_object]` classes) built by
// scripts/build.sh into pkg-worker/ with wasm-bindgen; this file only instantiates that module
// and exports what it generated, under the class names wrangler.toml binds.
//
// RPC reaches only Durable Object classes that extend DurableObject, so the generated classes
// get its prototype (the Worker calls ChatSession's methods, and SessionStream objects call
// each other's for forks, over RPC).
//
// Workers AI: with an `AI` binding (wrangler.toml, `[ai] binding = "AI"`) the demo chats with
// Workers AI through workers-ai-provider, a JS package; so this module builds that AI SDK model
// (`WORKERS_AI_MODEL`, default below) and hands it to the Rust host under
// `TURNKEEP_WORKERS_AI_MODEL` on a view of `env` (src/cloudflare/chat.rs reads it; the Rust side
// drives it as it drives any AI SDK model). Without the binding `env` is passed through as it is.
import { DurableObject } from 'cloudflare:workers';
import wasmModule from '../../pkg-worker/turnkeep_bg.wasm';
import { ChatSessionObject, fetch as rustFetch, initSync, SessionStreamObject } from '../../pkg-worker/turnkeep.js';
import { createWorkersAI } from '../../pkg-worker/workers-ai.mjs';

// workerd hands a `.wasm` import over as a compiled WebAssembly.Module (Workers forbid compiling
// wasm from bytes at run time), so the synchronous init is enough.
initSync({ module: wasmModule });

for (const generated of [ChatSessionObject, SessionStreamObject]) {
  Object.setPrototypeOf(generated.prototype, DurableObject.prototype);
  Object.setPrototypeOf(generated, DurableObject);
}

const WORKERS_AI_MODEL_DEFAULT = '@cf/meta/llama-3.3-70b-instruct-fp8-fast';
const withModel = new WeakMap();

/** `env`, or (with an `AI` binding) a view of it that also holds the Workers AI model, built once. */
function chatEnv(env) {
  if (!env?.AI) return env;
  let view = withModel.get(env);
  if (!view) {
    const model = createWorkersAI({ binding: env.AI })(env.WORKERS_AI_MODEL || WORKERS_AI_MODEL_DEFAULT);
    view = Object.create(env, { TURNKEEP_WORKERS_AI_MODEL: { value: model } });
    withModel.set(env, view);
  }
  return view;
}

export { ChatSessionObject as ChatSession, SessionStreamObject as SessionStream };
export default { fetch: (request, env, ctx) => rustFetch(request, chatEnv(env), ctx) };
