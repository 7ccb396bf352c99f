// The `__...ForTest` wasm exports (src/web/adapters/test_hooks.rs) live only in the Worker build
// (pkg-worker/, Cargo feature `test-hooks`): the npm package's wasm (pkg/) does not carry them.
// This instantiates that build in Node, once, and re-exports its glue.
import { readFileSync } from 'node:fs';
import { initSync } from '../../pkg-worker/turnkeep.js';

initSync({ module: readFileSync(new URL('../../pkg-worker/turnkeep_bg.wasm', import.meta.url)) });

export * from '../../pkg-worker/turnkeep.js';
