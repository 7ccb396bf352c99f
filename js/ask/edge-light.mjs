// `turnkeep/ask` in edge runtimes (Next.js edge routes): a precompiled module from
// another realm, so the async init (see js/edge-light.mjs).
import wasmModule from '../../pkg-ask/turnkeep_bg.wasm?module';
import init from '../../pkg-ask/turnkeep.js';

await init({ module_or_path: wasmModule });

export * from './api.mjs';
