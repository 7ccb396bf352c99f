// Edge runtime entry (the `edge-light` export condition: Next.js edge routes, Vercel Edge).
// Edge runtimes, like Workers, forbid compiling wasm from bytes at runtime. Next's bundlers
// (Turbopack and webpack) turn a `.wasm?module` import into a precompiled WebAssembly.Module,
// which comes from another realm there (`instanceof WebAssembly.Module` is false), so the async
// init is used rather than initSync. The top-level await makes importers get a ready module.
import wasmModule from '../pkg/turnkeep_bg.wasm?module';
import init from '../pkg/turnkeep.js';

await init({ module_or_path: wasmModule });

export * from './api.mjs';
