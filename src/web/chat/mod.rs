//! `createChatHandler`: the Web-standard turn handler (design §3, wire facts §5). The turn
//! itself is host-independent (`crate::turn`); this module only does what needs JavaScript.
//!
//! - [`handler`]: the export and its straight pipeline, and the one failure → response mapping.
//! - [`deadline`]: the request's timer and signal as interruptions.
//! - [`response`] over [`stream`]: the pull-based coalescing NDJSON body, as the turn's sink.
//! - [`host`]: the host's clock, ids and `onError` as ports.
//! - [`http`], [`options`], [`definition`], [`js`]: request/response plumbing, options, the
//!   resolved chat definition, JS interop helpers.

mod deadline;
mod definition;
mod handler;
mod host;
mod http;
pub(crate) mod js;
mod options;
mod response;
mod stream;

pub use handler::create_chat_handler;
