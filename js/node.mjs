// Node entry point: reads the wasm file next to the glue and instantiates it synchronously,
// so `import { ... } from 'turnkeep'` is ready to use with no await.
import { readFileSync } from 'node:fs';
import { initSync } from '../pkg/turnkeep.js';

initSync({ module: readFileSync(new URL('../pkg/turnkeep_bg.wasm', import.meta.url)) });

export * from './api.mjs';
