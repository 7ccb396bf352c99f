//! The wasm32 shell: wasm-bindgen exports over Web objects.
//!
//! Every export converts JS values at the boundary (`convert`), calls the pure core and maps
//! each outcome to a plain JS value. No Rust error or panic crosses the boundary as an opaque
//! trap: invalid input becomes a tagged `{ ok: false, error }` result or a JS `Error` whose
//! message says what was wrong.

pub mod adapters;
mod ask;
mod chat;
mod connection;
mod convert;
pub(crate) mod http;
pub(crate) mod js;
pub(crate) mod options;
mod panic;
mod projection;
mod protocol;
mod sandbox;
mod session;
mod storage;
mod stream_proxy;

pub use ask::{create_ask_service_handler, create_local_retriever, LocalRetriever};
pub use chat::create_chat_handler;
pub use panic::{install_panic_hook, PANIC_MESSAGE_PREFIX};
pub use protocol::{
    create_turn_snapshot_cursor, decode_turn_event, encode_turn_event, TurnSnapshotCursor,
};
pub use sandbox::create_mcp_sandbox_handler;
pub use session::{decode_session_snapshot, resume_chat_session};
pub use storage::{create_memory_session_storage, MemorySessionStorageHandle};

use wasm_bindgen::prelude::*;

/// The crate version, so a host can check which build it loaded.
#[wasm_bindgen(js_name = version)]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
