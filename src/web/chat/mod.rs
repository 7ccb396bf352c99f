//! `createChatHandler`: the Web-standard turn handler (design §3, wire facts §5).
//!
//! - [`handler`]: the export, the pre-stream steps under one deadline, the failure mapping.
//! - [`turn`]: after the claim — the controller driver, snapshot encoding, cleanup.
//! - [`stream`]: the pull-based coalescing `ReadableStream`.
//! - [`options`], [`definition`]: the handler's options and the resolved chat definition.
//!
//! Request/response plumbing and JS interop are shared with the other handlers
//! (`crate::web::http`, `crate::web::js`); they are re-exported here under their old paths.

mod definition;
mod handler;
mod options;
mod stream;
mod turn;

use crate::web::{http, js};

pub use handler::create_chat_handler;
