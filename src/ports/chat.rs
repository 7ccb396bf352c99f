//! ChatMemory, ModelAdapter and Tool: the ports of the chat controller, plus the Clock, Ids
//! and Sleep ports a driver needs to feed it time, ids and pauses.
//!
//! The vocabulary (messages, model requests and chunks, tool specs) is defined in the core
//! (`crate::core::protocol`, `crate::core::chat::model`) so the core never depends on a port.
//! All futures are `LocalFuture`s: not `Send`, because wasm is single-threaded and a JS host
//! object may stand behind any of these traits.

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::{Map, Value};

use super::{LocalFuture, PortError};
use crate::core::chat::model::{ModelChunk, ModelRequest, ToolSpec};
use crate::core::protocol::Message;

/// Where the canonical messages of a session live between turns.
pub trait ChatMemory {
    /// The saved conversation; empty when nothing was saved yet.
    fn load(&self) -> LocalFuture<'_, Result<Vec<Message>, PortError>>;
    /// Replaces the saved conversation with `messages`.
    fn save<'a>(&'a self, messages: &'a [Message]) -> LocalFuture<'a, Result<(), PortError>>;
}

/// A language model that streams its answer.
pub trait ModelAdapter {
    /// Starts one model call. An `Err` means the call could not start at all.
    fn start(
        &self,
        request: ModelRequest,
    ) -> LocalFuture<'_, Result<Box<dyn ModelStream>, PortError>>;
}

/// One model call in progress.
pub trait ModelStream {
    /// The next chunk; `None` when the call ended normally, `Some(Err)` when it failed (after
    /// which the driver stops asking).
    fn next_chunk(&mut self) -> LocalFuture<'_, Option<Result<ModelChunk, PortError>>>;
    /// Stops the call now (the user pressed stop, the deadline fired, the turn failed).
    /// Idempotent; `next_chunk` afterwards returns `None`.
    fn abort(&mut self);
}

/// A tool the model may call.
pub trait Tool {
    /// Name, description, JSON Schema of the arguments and whether it needs approval.
    fn spec(&self) -> &ToolSpec;
    /// Runs the tool. `Ok` is the result text the model reads. An `Err` is recorded on the
    /// call as a fixed "tool failed" text: its message is for logs only. `cancel` fires when
    /// the turn stops; a tool should give up promptly then.
    fn execute(
        &self,
        args: Map<String, Value>,
        cancel: CancelToken,
    ) -> LocalFuture<'_, Result<String, PortError>>;
}

/// Wall-clock time in epoch milliseconds.
pub trait Clock {
    fn now_ms(&self) -> u64;
}

/// Fresh ids, e.g. `msg-<epochMs>-<counter>`. `prefix` says what the id is for (`msg`, `call`).
pub trait Ids {
    fn next_id(&self, prefix: &str) -> String;
}

/// A pause (the demo model's delay between chunks).
pub trait Sleep {
    fn sleep(&self, ms: u64) -> LocalFuture<'_, ()>;
}

/// A one-way "stop now" signal shared by a driver and the tools it runs. Cloning shares it.
/// Callbacks registered with [`CancelToken::on_cancel`] run once, when it fires (at once if
/// it already has), which lets a JS adapter abort its `AbortController`.
#[derive(Clone, Default)]
pub struct CancelToken {
    inner: Rc<RefCell<CancelInner>>,
}

#[derive(Default)]
struct CancelInner {
    cancelled: bool,
    callbacks: Vec<Box<dyn FnOnce()>>,
}

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_cancelled(&self) -> bool {
        self.inner.borrow().cancelled
    }

    /// Fires the token. Idempotent: callbacks run on the first call only.
    pub fn cancel(&self) {
        let callbacks = {
            let mut inner = self.inner.borrow_mut();
            if inner.cancelled {
                return;
            }
            inner.cancelled = true;
            std::mem::take(&mut inner.callbacks)
        };
        for callback in callbacks {
            callback();
        }
    }

    /// Runs `callback` when the token fires, or now if it already has.
    pub fn on_cancel(&self, callback: impl FnOnce() + 'static) {
        if self.is_cancelled() {
            callback();
            return;
        }
        self.inner.borrow_mut().callbacks.push(Box::new(callback));
    }
}

impl std::fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn cancel_runs_each_callback_once_and_late_callbacks_at_once() {
        let token = CancelToken::new();
        let count = Rc::new(Cell::new(0));
        let c = count.clone();
        token.on_cancel(move || c.set(c.get() + 1));
        assert!(!token.is_cancelled());
        assert_eq!(count.get(), 0);
        token.clone().cancel();
        token.cancel();
        assert!(token.is_cancelled());
        assert_eq!(count.get(), 1);
        let c = count.clone();
        token.on_cancel(move || c.set(c.get() + 10));
        assert_eq!(count.get(), 11);
    }
}
