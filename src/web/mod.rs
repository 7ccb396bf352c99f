//! The wasm32 shell: wasm-bindgen exports over Web objects.
//!
//! Every export converts JS values at the boundary (`convert`), calls the pure core and maps
//! each outcome to a plain JS value. No Rust error or panic crosses the boundary as an opaque
//! trap: invalid input becomes a tagged `{ ok: false, error }` result or a JS `Error` whose
//! message says what was wrong.

pub mod adapters;
mod ask;
pub(crate) mod chat;
mod chat_response;
mod chat_session;
mod components;
mod connection;
pub(crate) mod convert;
pub(crate) mod http;
pub(crate) mod js;
pub(crate) mod options;
mod panic;
pub(crate) mod projection;
mod protocol;
mod sandbox;
mod session;
mod storage;
pub(crate) mod stream_proxy;
mod strict_json;

pub use ask::{create_ask_service_handler, create_local_retriever, LocalRetriever};
pub use chat::create_chat_handler;
pub use chat_session::{resume_chat_session, ChatSession};
pub use components::{
    create_assistant_content_encoder, create_interaction_event, create_selection_event,
    decode_assistant_content, decode_component_frame, is_assistant_content_candidate,
    is_component_frame_candidate, ContentEncoder,
};
pub use panic::{install_panic_hook, PANIC_MESSAGE_PREFIX};
pub use protocol::{
    create_snapshot_event, create_turn_snapshot_cursor, decode_turn_event, encode_turn_event,
    snapshot_messages, TurnSnapshotCursor,
};
pub use sandbox::create_mcp_sandbox_handler;
pub use session::decode_session_snapshot;
pub use storage::{create_memory_session_storage, MemorySessionStorageHandle};

use wasm_bindgen::prelude::*;

/// The crate version, so a host can check which build it loaded.
#[wasm_bindgen(js_name = version)]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
