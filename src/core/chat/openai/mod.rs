//! An OpenAI-compatible streaming chat endpoint (`POST {baseUrl}/chat/completions` with
//! `stream: true`), as pure translation. The fetch itself lives in the wasm layer; it feeds the
//! response bytes to [`OpenAiStream`] and sends the body built by [`request_body`].
//!
//! - [`crate::sse`]: the incremental event-stream parser (shared with the live connection).
//! - [`stream`]: `chat.completion.chunk` events to [`ModelChunk`](super::ModelChunk)s.
//! - [`request`]: a [`ModelRequest`](super::ModelRequest) to the request body JSON.

pub mod request;
pub mod stream;

pub use crate::sse::{SseError, SseEvent, SseParser};
pub use request::{request_body, OpenAiRequestOptions};
pub use stream::{translate_chunk, OpenAiError, OpenAiStream};
