// `turnkeep/client` in browsers (and generic ESM): fetches and instantiates the wasm once,
// with a top-level await, so importers get a ready module.
import init from '../../pkg-client/turnkeep.js';

await init({ module_or_path: new URL('../../pkg-client/turnkeep_bg.wasm', import.meta.url) });

export * from './api.mjs';
