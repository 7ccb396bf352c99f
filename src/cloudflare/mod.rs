//! Cloudflare Workers only (Cargo feature `cloudflare`): the storage logic of the two Durable
//! Object classes, `ChatSession` (here) and `SessionStream` ([`streams`]). This is the one place
//! in the crate that knows Cloudflare exists.
//!
//! One Durable Object per (tenant, session) holds that session's envelope and its canonical
//! messages in the object's SQLite storage (`ctx.storage.sql`). Compare-and-set is a
//! `transactionSync` inside the object, so of any number of concurrent saves with one expected
//! cursor exactly one wins, and a lost race is `false`, never last-write-wins.
//!
//! - [`rows`]: pure decisions (CAS outcome, splitting text into rows, which message rows
//!   change), tested on the host.
//! - `sql` (wasm32): `ctx.storage.sql.exec` and `transactionSync`, duck-typed through js-sys
//!   (no `worker` crate); both Durable Object classes use it.
//! - `store` (wasm32): the `ChatSessionStore` export the JS Durable Object class shell
//!   (`js/cloudflare/chat-session.mjs`) delegates to.
//! - [`streams`]: the `SessionStream` object's Durable Streams protocol handling.

pub mod rows;
pub mod streams;

#[cfg(target_arch = "wasm32")]
mod sql;
#[cfg(target_arch = "wasm32")]
pub mod store;
