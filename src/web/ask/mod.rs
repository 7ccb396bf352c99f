//! `createAskServiceHandler` and `createLocalRetriever`: the wasm shell of the Ask service. The
//! decisions are `core::ask`'s; this module performs the steps in order and talks to the host.
//!
//! - [`handler`]: the export and the steps before the stream, with the one failure mapping.
//! - [`stream`]: the NDJSON body (generation, citations, the session save, `done`).
//! - [`generator`]: a `{ generate }` generator or a chat model, as one chunk stream.
//! - [`retriever`]: the built-in BM25 retriever; [`options`]; [`scope`]: ids, clock, metrics.

mod generator;
mod handler;
mod options;
mod retriever;
mod scope;
mod stream;

pub use handler::create_ask_service_handler;
pub use retriever::{create_local_retriever, LocalRetriever};
