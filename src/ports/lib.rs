//! Traits the core needs from the world. Async and not `Send`: wasm is single-threaded, so
//! futures are boxed `LocalFuture`s and the traits stay dyn-compatible (a JS host object can
//! stand behind a `&dyn SessionStorage`).
//!
//! Adapters live in `turnkeep_storage` (host-independent, in-memory) and `crate::web` (JS-backed).

use std::any::Any;
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

pub mod chat;
pub mod log;
pub mod session;

/// A boxed, non-`Send` future, the return type of every port method.
pub type LocalFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// A port call that failed (threw, rejected, timed out). The message is for logs only and
/// never reaches a client: boundary diagnostics are built from codes, not from this text.
/// `cause` keeps what the host actually threw (a JS value in the web shell), untouched, so the
/// operator's `onError` hook receives the original error object.
#[derive(Clone)]
pub struct PortError {
    pub message: String,
    pub cause: Option<Rc<dyn Any>>,
}

impl PortError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            cause: None,
        }
    }

    /// A failure that carries the value the host threw.
    pub fn with_cause(message: impl Into<String>, cause: Rc<dyn Any>) -> Self {
        Self {
            message: message.into(),
            cause: Some(cause),
        }
    }
}

impl PartialEq for PortError {
    /// Two failures are equal when they say the same; the opaque cause is not compared.
    fn eq(&self, other: &Self) -> bool {
        self.message == other.message
    }
}

impl Eq for PortError {}

impl std::fmt::Debug for PortError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PortError")
            .field("message", &self.message)
            .field("cause", &self.cause.is_some())
            .finish()
    }
}

impl std::fmt::Display for PortError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PortError {}

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
    /// One value a host adapter derived from this token (see [`CancelToken::memo`]).
    memo: Option<Rc<dyn Any>>,
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

    /// The value `make` derives from this token, made once and kept with it: a host adapter's
    /// view of the token (the web shell's `AbortSignal`) is then one object however many calls
    /// the token is handed to, not one listener per call. A second type asked of the same token
    /// is made afresh each time.
    pub fn memo<T: Clone + 'static>(&self, make: impl FnOnce() -> T) -> T {
        if let Some(value) = self
            .inner
            .borrow()
            .memo
            .as_ref()
            .and_then(|m| m.downcast_ref::<T>())
        {
            return value.clone();
        }
        let value = make();
        self.inner.borrow_mut().memo = Some(Rc::new(value.clone()));
        value
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
    fn a_memo_is_made_once_per_token_and_shared_by_clones() {
        let token = CancelToken::new();
        let made = Cell::new(0);
        let make = || {
            made.set(made.get() + 1);
            made.get()
        };
        assert_eq!(token.memo(make), 1);
        assert_eq!(token.clone().memo(make), 1);
        assert_eq!(made.get(), 1);
        assert_eq!(
            CancelToken::new().memo(make),
            2,
            "another token makes its own"
        );
    }

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
