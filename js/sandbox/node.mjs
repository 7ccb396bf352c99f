// `turnkeep/sandbox` in Node: the MCP ui:// sandbox handler. Reads the wasm file next to the glue and instantiates
// it synchronously, so the import is ready to use with no await.
import { readFileSync } from 'node:fs';
import { initSync } from '../../pkg-sandbox/turnkeep.js';

initSync({ module: readFileSync(new URL('../../pkg-sandbox/turnkeep_bg.wasm', import.meta.url)) });

export * from './api.mjs';
