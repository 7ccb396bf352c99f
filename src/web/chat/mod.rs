//! `createChatHandler`: the Web-standard turn handler (design §3, wire facts §5).
//!
//! - [`handler`]: the export, the pre-stream steps under one deadline, the failure mapping.
//! - [`turn`]: after the claim — the controller driver, snapshot encoding, cleanup.
//! - [`stream`]: the pull-based coalescing `ReadableStream`.
//! - [`http`], [`options`], [`definition`], [`js`]: request/response plumbing, options, the
//!   resolved chat definition, JS interop helpers.

mod definition;
mod handler;
mod http;
pub(crate) mod js;
mod options;
mod stream;
mod turn;

pub use handler::create_chat_handler;
