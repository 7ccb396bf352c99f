// `turnkeep/client` in Node: the browser client (createChatConnection, the projection, the protocol). Reads the wasm file next to the glue and instantiates
// it synchronously, so the import is ready to use with no await.
import { readFileSync } from 'node:fs';
import { initSync } from '../../pkg-client/turnkeep.js';

initSync({ module: readFileSync(new URL('../../pkg-client/turnkeep_bg.wasm', import.meta.url)) });

export * from './api.mjs';
