// `turnkeep/sandbox` in browsers (and generic ESM): fetches and instantiates the wasm once,
// with a top-level await, so importers get a ready module.
import init from '../../pkg-sandbox/turnkeep.js';

await init({ module_or_path: new URL('../../pkg-sandbox/turnkeep_bg.wasm', import.meta.url) });

export * from './api.mjs';
