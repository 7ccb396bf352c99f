// `turnkeep/ask` in browsers (and generic ESM): fetches and instantiates the wasm once,
// with a top-level await, so importers get a ready module.
import init from '../../pkg-ask/turnkeep.js';

await init({ module_or_path: new URL('../../pkg-ask/turnkeep_bg.wasm', import.meta.url) });

export * from './api.mjs';
