//! turnkeep: a durable AI-chat server boundary for edge runtimes.
//!
//! Start with `ARCHITECTURE.md` for the code map. In short:
//! - [`core`] is pure Rust: protocol, session envelope, chat controller, projection and
//!   Durable Streams logic. It never touches JavaScript, a clock, randomness or I/O.
//! - [`ports`] are the traits the core needs from the world (storage, memory, model, tools).
//! - [`storage`] holds the host-independent adapters (in-memory) and the storage conformance suite.
//! - `web` (wasm32 only) is the shell over Web `Request`/`Response`/`ReadableStream`.

// The workspace's host-independent crates, under the names the shell and the tests use
// (`crate::core::…`, `turnkeep::turn::…`).
pub use turnkeep_core as core;
pub use turnkeep_ports as ports;
pub use turnkeep_storage as storage;
pub use turnkeep_turn as turn;

#[cfg(feature = "cloudflare")]
pub mod cloudflare;
#[cfg(target_arch = "wasm32")]
pub mod web;

/// Runs once when the module is instantiated (wasm-bindgen `start`): panics become JS errors
/// with a message (`web::install_panic_hook`). The Worker build has workers-rs's own start
/// function instead (a module has one), whose hook logs the panic.
#[cfg(all(target_arch = "wasm32", not(feature = "cloudflare")))]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
pub fn start() {
    web::install_panic_hook();
}
