// `turnkeep/ask` in Node: the Ask service and its BM25 retriever. Reads the wasm file next to the glue and instantiates
// it synchronously, so the import is ready to use with no await.
import { readFileSync } from 'node:fs';
import { initSync } from '../../pkg-ask/turnkeep.js';

initSync({ module: readFileSync(new URL('../../pkg-ask/turnkeep_bg.wasm', import.meta.url)) });

export * from './api.mjs';
