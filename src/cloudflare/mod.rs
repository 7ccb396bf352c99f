//! Cloudflare Workers only (Cargo feature `cloudflare`): the demo Worker and its two Durable
//! Object classes, written with workers-rs (the `worker` crate). This is the one place in the
//! crate that knows Cloudflare exists, and the npm package's build leaves it out.
//!
//! Decisions are pure and tested on the host; the wasm32-only modules perform them.
//!
//! - [`routes`]: the Worker's route table, demo auth and the chat-stream route; [`page`]: the
//!   demo page (which session, and the server-rendered HTML); `entry` (wasm32) is the
//!   `#[event(fetch)]` entry that performs it, with `chat` (the chat pipeline's Rust host),
//!   `session_ports` (SessionStorage, ChatMemory and SessionLog over the objects' stubs) and
//!   `demo_mounts` (the Ask service and the MCP sandbox).
//! - `chat_session` (wasm32): the `ChatSession` object — one per (tenant, session): the CAS
//!   envelope and the canonical messages in its SQLite storage (`store`, over [`rows`]).
//!   Compare-and-set is a `transactionSync` inside the object, so of any number of concurrent
//!   saves with one expected cursor exactly one wins, and a lost race is `false`.
//! - [`streams`]: the `SessionStream` object (the Durable Streams protocol per stream), with its
//!   Worker-side route decisions and its timing as step functions.
//! - `sql`, `env`, `wait`, `body` (wasm32): storage, environment and randomness, waiters and
//!   timers, request bodies — the effects both objects and the entry perform.

pub mod page;
pub mod routes;
pub mod rows;
pub mod streams;

#[cfg(target_arch = "wasm32")]
mod body;
#[cfg(target_arch = "wasm32")]
mod chat;
#[cfg(target_arch = "wasm32")]
mod chat_session;
#[cfg(target_arch = "wasm32")]
mod demo_mounts;
#[cfg(target_arch = "wasm32")]
mod entry;
#[cfg(target_arch = "wasm32")]
mod env;
#[cfg(target_arch = "wasm32")]
mod session_ports;
#[cfg(target_arch = "wasm32")]
mod sql;
#[cfg(target_arch = "wasm32")]
mod store;
#[cfg(all(target_arch = "wasm32", feature = "test-hooks"))]
pub(crate) mod test_holds;
#[cfg(target_arch = "wasm32")]
mod wait;
