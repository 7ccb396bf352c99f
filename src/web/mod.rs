//! The wasm32 shell: wasm-bindgen exports over Web objects.
//!
//! Every export converts JS values at the boundary (`convert`), calls the pure core and maps
//! each outcome to a plain JS value. No Rust error or panic crosses the boundary as an opaque
//! trap: invalid input becomes a tagged `{ ok: false, error }` result or a JS `Error` whose
//! message says what was wrong.

// Each surface's exports come with its Cargo feature, so an npm entry's module holds only what
// that entry exports (LTO drops the rest):
//   `protocol` the turn protocol, component frames, the projection (part of server and client)
//   `server`   createChatHandler, session logs and stores, toChatResponse, the stream proxy,
//              resolveChatSnapshot, resumeChatSession      (pkg/, `turnkeep`)
//   `client`   ChatConnectionCore behind createChatConnection  (pkg-client/, `turnkeep/client`)
//   `ask`      createAskServiceHandler, createLocalRetriever   (pkg-ask/, `turnkeep/ask`)
//   `sandbox`  createMcpSandboxHandler                         (pkg-sandbox/, `turnkeep/sandbox`)
// The helpers declared with `shared_helper!` are shared by the surfaces; a one-surface build uses
// only some of them, so dead code is allowed there. The full build (the default features: cargo
// check, wasm-pack test) still reports it.
macro_rules! shared_helper {
    ($(#[$attr:meta])* $vis:vis mod $name:ident;) => {
        $(#[$attr])*
        #[cfg_attr(
            not(all(
                feature = "server",
                feature = "client",
                feature = "ask",
                feature = "sandbox"
            )),
            allow(dead_code)
        )]
        $vis mod $name;
    };
}

pub mod adapters;
#[cfg(feature = "ask")]
mod ask;
#[cfg(feature = "server")]
pub(crate) mod chat;
#[cfg(feature = "server")]
mod chat_response;
#[cfg(feature = "server")]
mod chat_session;
#[cfg(feature = "protocol")]
mod components;
#[cfg(feature = "client")]
mod connection;
shared_helper! {
    pub(crate) mod convert;
}
shared_helper! {
    #[cfg(any(feature = "server", feature = "ask", feature = "sandbox"))]
    pub(crate) mod http;
}
shared_helper! {
    pub(crate) mod js;
}
shared_helper! {
    #[cfg(any(feature = "server", feature = "ask", feature = "sandbox"))]
    pub(crate) mod options;
}
#[cfg(feature = "protocol")]
mod agui;
mod panic;
#[cfg(feature = "protocol")]
pub(crate) mod projection;
#[cfg(feature = "protocol")]
mod protocol;
#[cfg(feature = "server")]
pub(crate) mod resolve;
#[cfg(feature = "sandbox")]
mod sandbox;
#[cfg(feature = "server")]
mod session;
#[cfg(feature = "server")]
mod session_log_route;
#[cfg(feature = "server")]
mod storage;
#[cfg(feature = "server")]
pub(crate) mod stream_proxy;
#[cfg(feature = "protocol")]
mod strict_json;
#[cfg(feature = "protocol")]
mod ui;

#[cfg(feature = "protocol")]
pub use agui::{to_tanstack_hydration, TanStackRunJoin};
#[cfg(feature = "ask")]
pub use ask::{create_ask_service_handler, create_local_retriever, LocalRetriever};
#[cfg(feature = "server")]
pub use chat::{create_chat_handler, create_ui_message_chat_handler};
#[cfg(feature = "server")]
pub use chat_session::{resume_chat_session, ChatSession};
#[cfg(feature = "protocol")]
pub use components::{
    create_assistant_content_encoder, create_interaction_event, create_selection_event,
    decode_assistant_content, decode_component_frame, is_assistant_content_candidate,
    is_component_frame_candidate, ContentEncoder,
};
pub use panic::{install_panic_hook, PANIC_MESSAGE_PREFIX};
#[cfg(feature = "protocol")]
pub use protocol::{
    create_snapshot_event, create_turn_snapshot_cursor, decode_turn_event, encode_turn_event,
    snapshot_messages, TurnSnapshotCursor,
};
#[cfg(feature = "sandbox")]
pub use sandbox::create_mcp_sandbox_handler;
#[cfg(feature = "server")]
pub use session::decode_session_snapshot;
#[cfg(feature = "server")]
pub use session_log_route::create_session_log_handler;
#[cfg(feature = "server")]
pub use storage::{create_memory_session_storage, MemorySessionStorageHandle};
#[cfg(feature = "protocol")]
pub use ui::{to_ui_messages, UiChunkMapper, UiReader};

use wasm_bindgen::prelude::*;

/// The crate version, so a host can check which build it loaded.
#[wasm_bindgen(js_name = version)]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
