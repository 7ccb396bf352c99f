//! The deterministic core. Invariant (checked by `tests/core_purity.rs`): nothing below this
//! module imports web-sys, js-sys, wasm-bindgen or worker, reads a clock, draws randomness or
//! does I/O. Time (`now_ms`) and ids are always arguments.

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
