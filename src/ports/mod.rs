//! Traits the core needs from the world. Async and not `Send`: wasm is single-threaded, so
//! futures are boxed `LocalFuture`s and the traits stay dyn-compatible (a JS host object can
//! stand behind a `&dyn SessionStorage`).
//!
//! Adapters live in `crate::storage` (host-independent, in-memory) and `crate::web` (JS-backed).

use std::future::Future;
use std::pin::Pin;

pub mod chat;
pub mod session;

/// A boxed, non-`Send` future, the return type of every port method.
pub type LocalFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// A port call that failed (threw, rejected, timed out). The message is for logs only and
/// never reaches a client: boundary diagnostics are built from codes, not from this text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortError {
    pub message: String,
}

impl PortError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

impl std::fmt::Display for PortError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PortError {}
