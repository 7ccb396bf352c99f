// Binds a Worker build's wasm-bindgen glue to its module: the demo Worker (worker.mjs, over
// pkg-worker/) and its test build (tests/support/test-hooks-worker.mjs, over pkg-worker-test/)
// are the same few lines over different builds.
//
// The Durable Object classes are bound by the package's own js/durable-objects/classes.mjs (what
// `turnkeep/cloudflare` exports), so the demo runs the objects a user's Worker gets.
//
// Workers AI: with an `AI` binding (wrangler.toml, `[ai] binding = "AI"`) the demo chats with
// Workers AI through workers-ai-provider, a JS package; so the Worker's fetch builds that AI SDK
// model (`WORKERS_AI_MODEL`, default below) and hands it to the Rust host under
// `TURNKEEP_WORKERS_AI_MODEL` on a view of `env` (src/cloudflare/chat.rs reads it; the Rust side
// drives it as it drives any AI SDK model). Without the binding `env` is passed through as it is.
import { bindObjects } from '../durable-objects/classes.mjs';
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

/** The demo Worker's fetch over a glue's Rust `fetch`: `env` with the Workers AI model when bound. */
export function demoFetch(fetch) {
  return (request, env, ctx) => fetch(request, chatEnv(env), ctx);
}

/**
 * `{ ChatSession, SessionStream, fetch }` of a glue's exports (`{ initSync, ChatSessionObject,
 * SessionStreamObject, fetch }`), instantiated with `wasmModule`: the test build's entry.
 */
export function bindWorker(glue, wasmModule) {
  return { ...bindObjects(glue, wasmModule), fetch: demoFetch(glue.fetch) };
}
