// The test build (pkg-worker-test/: the demo Worker's build plus Cargo feature `test-hooks`) in
// Node: the `__...ForTest` exports (src/web/adapters/test_hooks.rs) and `__snapshotCountsForBench`
// (src/web/chat/bench_counts.rs) live only there — neither the npm package's wasm (pkg/) nor the
// Worker `wrangler deploy` publishes (pkg-worker/) carries them. This instantiates that build
// once and re-exports its glue; `testBuildApi` is the `turnkeep` entry's surface over it (the
// glue's exports and the entry's plain-JS parts), for tests that count what the server did.
import { readFileSync } from 'node:fs';
import * as glue from '../../pkg-worker-test/turnkeep.js';
import { createDemoModel, createOpenAICompatibleModel } from '../../js/chat.mjs';
import * as protocol from '../../js/protocol.mjs';

glue.initSync({ module: readFileSync(new URL('../../pkg-worker-test/turnkeep_bg.wasm', import.meta.url)) });

export * from '../../pkg-worker-test/turnkeep.js';

/** `turnkeep`'s exports over the test build (see the file's comment). */
// defineChat is the build's own definition reader (js/define.mjs reads with pkg/'s).
const defineChat = (options) => glue.readChatDefinition(options);
export const testBuildApi = { ...glue, ...protocol, defineChat, createDemoModel, createOpenAICompatibleModel };
