//! The live connection, client side (`createChatConnection`): what a reader of a session's
//! Durable Streams log decides. The wasm shell (`web::connection`) owns the fetch, the timers
//! and the readers' queues, and performs what [`machine::Connection`] returns.
//!
//! - [`wire`]: what a read's answer, `data` and `control` events mean; offsets.
//! - [`machine`]: sharing, cursor, exactly-once delivery, retries.
//! - [`backoff`]: the delay schedule and its seeded jitter.
//! - [`failure`]: the diagnostics readers end with.
//! - [`turn`]: the turn events `send()` and `stopTurn()` post.
//! - [`target`]: the routes a target that names only its session resolves to.

pub mod backoff;
pub mod failure;
pub mod machine;
pub mod target;
pub mod turn;
pub mod wire;

pub use failure::ConnectionFailure;
pub use machine::{Action, Connection, ReaderId};
pub use wire::ReadOffset;
