// Browser (and generic ESM) entry point: fetches and instantiates the wasm once, with a
// top-level await, so importers get a ready module.
import init from '../pkg/turnkeep.js';

await init({ module_or_path: new URL('../pkg/turnkeep_bg.wasm', import.meta.url) });

export * from './api.mjs';
