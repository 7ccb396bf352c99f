//! `createChatHandler`: the Web-standard turn handler, AgentsKit's `createChatHandler` over the
//! turn protocol v1 (`core::protocol`) with its diagnostics (`core::diagnostics`). The turn
//! itself is host-independent (`crate::turn`); this module only does what needs JavaScript.
//!
//! - [`handler`]: the export and its straight pipeline, and the one failure → response mapping.
//! - [`deadline`]: the request's timer and signal as interruptions.
//! - [`response`] over [`stream`]: the pull-based coalescing NDJSON body, as the turn's sink.
//! - [`slab`]: where the lines leave wasm memory (views into shared JS buffers).
//! - [`host`]: the host's clock, ids and `onError` as ports.
//! - [`options`], [`definition`]: the handler's options and the resolved chat definition.
//! - [`reconcile`]: `handler.listStuckConfirmations` / `handler.reconcileConfirmation`.
//! - [`ui`]: `createUIMessageChatHandler`, the same pipeline speaking the AI SDK's UI message
//!   stream: its answer ([`ui_sink`]: the turn's chunks through `core::ui`'s mapping) and the
//!   resume route and a lost decision ([`ui_follow`]: the session log followed).
//!
//! Request/response plumbing and JS interop are shared with the other handlers
//! (`crate::web::http`, `crate::web::js`); they are re-exported here under their old paths.

mod agui;
mod bench_counts;
mod deadline;
mod definition;
mod handler;
mod host;
mod observe;
mod options;
mod rate_limit;
mod reconcile;
mod response;
mod slab;
mod stream;
mod ui;
mod ui_follow;
mod ui_sink;

use crate::web::{http, js};

pub(crate) use definition::read_conversation;
pub use handler::create_chat_handler;
pub use ui::create_ui_message_chat_handler;
// The pipeline with a host of its own (the demo Worker's Rust host, src/cloudflare/chat.rs).
#[allow(unused_imports)]
pub use deadline::RequestDeadline;
#[allow(unused_imports)]
pub use handler::{respond, ChatHost, ChatLimits, Failure, SessionIds};
pub use stream::TextStream;
// The AI SDK UI message stream wire of the same pipeline, for a host of its own.
#[allow(unused_imports)]
pub use ui::respond as respond_ui;
