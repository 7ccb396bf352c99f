// Binds a Worker build's wasm-bindgen glue to its module: the demo Worker (worker.mjs, over
// pkg-worker/) and its test build (tests/support/test-hooks-worker.mjs, over pkg-worker-test/)
// are the same few lines over different builds.
//
// RPC reaches only Durable Object classes that extend DurableObject, so the generated classes
// get its prototype (the Worker calls ChatSession's methods, and SessionStream objects call
// each other's for forks, over RPC).
//
// Workers AI: with an `AI` binding (wrangler.toml, `[ai] binding = "AI"`) the demo chats with
// Workers AI through workers-ai-provider, a JS package; so the Worker's fetch builds that AI SDK
// model (`WORKERS_AI_MODEL`, default below) and hands it to the Rust host under
// `TURNKEEP_WORKERS_AI_MODEL` on a view of `env` (src/cloudflare/chat.rs reads it; the Rust side
// drives it as it drives any AI SDK model). Without the binding `env` is passed through as it is.
import { DurableObject } from 'cloudflare:workers';
import { createWorkersAI } from '../../pkg-worker/workers-ai.mjs';

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

/** `{ ChatSession, SessionStream, fetch }` of a glue's exports (`{ initSync, ChatSessionObject, SessionStreamObject, fetch }`), instantiated with `wasmModule`. */
export function bindWorker(glue, wasmModule) {
  // workerd hands a `.wasm` import over as a compiled WebAssembly.Module (Workers forbid
  // compiling wasm from bytes at run time), so the synchronous init is enough.
  glue.initSync({ module: wasmModule });
  for (const generated of [glue.ChatSessionObject, glue.SessionStreamObject]) {
    Object.setPrototypeOf(generated.prototype, DurableObject.prototype);
    Object.setPrototypeOf(generated, DurableObject);
  }
  const fetch = (request, env, ctx) => glue.fetch(request, chatEnv(env), ctx);
  return { ChatSession: glue.ChatSessionObject, SessionStream: glue.SessionStreamObject, fetch };
}
