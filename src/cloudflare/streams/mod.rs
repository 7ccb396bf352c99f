//! The `SessionStream` Durable Object: one object per stream, serving the Durable
//! Streams HTTP protocol from its SQLite storage. Every protocol decision comes from
//! `crate::core::streams`; the core here reads the stored state, commits the decision in one
//! synchronous run of SQL (so it is durable before the shell answers: the runtime's output gate
//! holds the response until the write is confirmed) and describes the answer.
//!
//! - [`route`] (host-tested): the Worker's side of the streams routes — preflight, token, name,
//!   declared size, the chat-stream proxy, the security headers.
//! - [`timing`] (host-tested): long-poll, producer-gap retry and SSE lifecycle as step functions
//!   of an injected clock.
//! - `shell`: the `#[durable_object]` itself, which performs those decisions and the core's
//!   answers: waiters, timers, the SSE writer, the live sockets, RPC to other streams' objects
//!   (forks).
//! - [`sockets`] (host-tested): live reads on hibernatable WebSockets — which read is one, the
//!   bound on them, the close frames, and what each socket keeps across hibernation.
//! - `object`: `SessionStreamCore` and the request dispatch.
//! - `read`: GET (catch-up, `offset=now`, long-poll) and SSE chunks; `append`: POST; `write`:
//!   PUT, HEAD, DELETE; `fork`: fork creation and the source side of fork references.
//! - `store`: the tables, over `ctx.storage.sql` (`crate::cloudflare::sql`, shared with the
//!   `ChatSession` store); `reply`: the answer object.
//! - Host-tested pure pieces: `sse` (event framing, base64), `query` (query strings, ETags,
//!   source names), `fork_prefix` (what a fork sub-offset materialises), `recent` (the newest
//!   rows kept in memory, so the readers an append wakes share one read instead of N).

#[cfg(target_arch = "wasm32")]
mod append;
#[cfg(target_arch = "wasm32")]
mod fork;
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // host: only its tests use it
mod fork_prefix;
#[cfg(target_arch = "wasm32")]
mod object;
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
mod query;
#[cfg(target_arch = "wasm32")]
mod read;
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
mod recent;
#[cfg(target_arch = "wasm32")]
pub(crate) mod reply;
#[cfg(target_arch = "wasm32")]
mod request;
pub mod route;
#[cfg(target_arch = "wasm32")]
pub(crate) mod shell;
pub mod sockets;
#[cfg(target_arch = "wasm32")]
mod store;
pub mod timing;
#[cfg(target_arch = "wasm32")]
mod write;
