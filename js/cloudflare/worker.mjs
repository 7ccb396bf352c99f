// The demo Worker's module (wrangler.toml `main`, what `wrangler deploy` publishes). The Worker
// is Rust (src/cloudflare, written with workers-rs: `#[event(fetch)]` and two
// `#[durable_object]` classes) built by scripts/build.sh into pkg-worker/ with wasm-bindgen;
// this file only instantiates that module and exports what it generated, under the class names
// wrangler.toml binds. The build has no test hooks (those are pkg-worker-test/'s).
import wasmModule from '../../pkg-worker/turnkeep_bg.wasm';
import { ChatSessionObject, fetch, initSync, SessionStreamObject } from '../../pkg-worker/turnkeep.js';
import { bindWorker } from './bind.mjs';

// Named imports, not a namespace: a bundler then keeps only what the Worker uses of the glue.
const worker = bindWorker({ initSync, ChatSessionObject, SessionStreamObject, fetch }, wasmModule);

export const ChatSession = worker.ChatSession;
export const SessionStream = worker.SessionStream;
export default { fetch: worker.fetch };
