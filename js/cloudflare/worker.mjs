// The demo Worker's module (wrangler.toml `main`, what `wrangler deploy` publishes). The Worker
// is Rust (src/cloudflare, written with workers-rs: `#[event(fetch)]` and two
// `#[durable_object]` classes) built by scripts/build.sh into pkg-worker/ with wasm-bindgen;
// this file only exports what it generated. The two Durable Object classes are the ones
// `turnkeep/cloudflare` ships (js/durable-objects/objects.mjs instantiates the module), under
// the class names wrangler.toml binds. The build has no test hooks (those are pkg-worker-test/'s).
import { fetch } from '../../pkg-worker/turnkeep.js';
import { demoFetch } from './bind.mjs';

export { ChatSession, SessionStream } from '../durable-objects/objects.mjs';
export default { fetch: demoFetch(fetch) };
