//! Durable Streams protocol logic: the pure decisions behind the HTTP server that serves each
//! session's append-only log. Nothing here does I/O or reads a clock: `now_ms`, the cursor jitter
//! and every stored state are arguments, and each check returns a decision or a typed rejection
//! that carries its HTTP status. The server commits decisions; it never re-derives them.
//!
//! Where the Durable Streams protocol (PROTOCOL.md of durable-streams/durable-streams) says what,
//! by section:
//! - §4.1 closure, §5.2 `Stream-Closed`, §5.3 close-only: [`closure`]
//! - §4.2 forks: offset validity in [`offset`], expiry inheritance in [`ttl`], content type in
//!   [`content_type`]
//! - §5.1 create headers `Stream-TTL` / `Stream-Expires-At`, §4 sliding TTL: [`ttl`]
//! - §5.2 `Stream-Seq` writer ordering: [`stream_seq`]
//! - §5.2.1 idempotent producers (`Producer-Id/Epoch/Seq`): [`producer`]
//! - §5.6-5.8 the `offset` and `live` query parameters, §8 offsets and the `-1` / `now`
//!   sentinels: [`offset`] and [`read_query`]
//! - §9 content types and SSE encoding: [`content_type`], the SSE events themselves: [`sse`];
//!   §9.1 JSON mode: [`json_mode`]
//! - §10.1 long-poll / SSE cursors: [`cursor`]
//! - one PUT end to end (create, idempotent re-create, fork): [`create`]
//! - one POST end to end (the order of all the checks above): [`append`]
//!
//! Every rejection implements [`Rejection`]: its row of the diagnostic registry
//! (`core::diagnostics::streams`: a stable `streams.v1.` code, the HTTP status the protocol
//! prescribes), and a message that names the
//! broken rule without internal detail. What the HTTP layer still does itself (I/O, headers,
//! ordering across requests, response shapes) lives in `src/cloudflare/streams/`.

pub mod append;
pub mod client;
pub mod closure;
pub mod content_type;
pub mod create;
pub mod cursor;
pub mod item_log;
pub mod json_mode;
pub mod log_read;
pub mod offset;
pub mod producer;
pub mod proxy;
pub mod read_query;
pub mod sse;
pub mod stream_seq;
pub mod ttl;

/// A request the protocol tells the server to refuse. Its `Display` is the safe message sent
/// (the rule it broke, perhaps with the limit); status and code are its registry row's.
pub trait Rejection: std::fmt::Display {
    /// The row of `core::diagnostics::streams` this rejection is answered with.
    fn row(&self) -> crate::diagnostics::Row;
    /// The HTTP status the protocol prescribes (400, 409, 413, 429...).
    fn status(&self) -> u16 {
        self.row().status
    }
    /// Stable diagnostic code, `streams.v1.<what>`.
    fn code(&self) -> &'static str {
        self.row().code
    }
}
