//! The deterministic core. Invariant: nothing below this module knows web-sys, js-sys,
//! wasm-bindgen or worker (this crate cannot depend on them: `tests/tidy.rs` checks its whole
//! dependency closure), reads a clock, draws randomness or does I/O (`scripts/purity.sh`,
//! clippy with `src/clippy.toml`). Time (`now_ms`), ids and seeds are always arguments.

pub mod agui;
pub mod ask;
pub mod chat;
pub mod checks;
pub mod coalesce;
pub mod connection;
pub mod diagnostics;
pub mod hash;
pub mod limits;
pub mod projection;
pub mod protocol;
pub mod sandbox;
pub mod sequence;
pub mod session;
pub mod sse;
pub mod streams;
pub mod ui;
