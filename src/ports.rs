//! Traits the core needs from the world. Async and not `Send`: wasm is single-threaded.
//! Adapters live in `storage` (host-independent) and `web` (JS-backed).
