// The demo Worker's test build (pkg-worker/ plus Cargo feature `test-hooks`: pkg-worker-test/),
// for the tests that need its hooks: `GET /__test/memory` and `/__test/stream-io/<name>`, the
// hold points of src/cloudflare/test_holds.rs (all only while the Worker's `TEST_HOOKS` setting
// is `1`). Served like js/cloudflare/worker.mjs (wrangler dev with this file as its script, or
// workerd through tests/support/workerd-serve.mjs with `entry: TEST_HOOKS_WORKER`).
import wasmModule from '../../pkg-worker-test/turnkeep_bg.wasm';
import { ChatSessionObject, fetch, initSync, SessionStreamObject } from '../../pkg-worker-test/turnkeep.js';
import { bindWorker } from '../../js/cloudflare/bind.mjs';

const worker = bindWorker({ initSync, ChatSessionObject, SessionStreamObject, fetch }, wasmModule);

export const ChatSession = worker.ChatSession;
export const SessionStream = worker.SessionStream;
export default { fetch: worker.fetch };
