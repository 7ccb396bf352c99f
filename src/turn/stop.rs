//! Racing a future against a [`CancelToken`] without an executor-specific `select`.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use turnkeep_ports::chat::CancelToken;

/// Watches one token for a whole turn. It registers a single callback on the token (not one
/// per awaited future), which wakes whatever future is waiting when the token fires.
pub(crate) struct StopWatch {
    token: CancelToken,
    waker: Rc<RefCell<Option<Waker>>>,
}

impl StopWatch {
    pub(crate) fn new(token: &CancelToken) -> Self {
        let waker: Rc<RefCell<Option<Waker>>> = Rc::default();
        let slot = waker.clone();
        token.on_cancel(move || {
            if let Some(w) = slot.borrow_mut().take() {
                w.wake();
            }
        });
        Self {
            token: token.clone(),
            waker,
        }
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.token.is_cancelled()
    }

    /// `Some(output)` when `fut` finishes first, `None` when the token fires first (then `fut`
    /// is dropped unfinished).
    pub(crate) async fn until_stopped<F: Future>(&self, fut: F) -> Option<F::Output> {
        UntilStopped {
            fut: Box::pin(fut),
            watch: self,
        }
        .await
    }
}

struct UntilStopped<'w, F: Future> {
    fut: Pin<Box<F>>,
    watch: &'w StopWatch,
}

impl<F: Future> Future for UntilStopped<'_, F> {
    type Output = Option<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if self.watch.is_stopped() {
            return Poll::Ready(None);
        }
        if let Poll::Ready(v) = self.fut.as_mut().poll(cx) {
            return Poll::Ready(Some(v));
        }
        *self.watch.waker.borrow_mut() = Some(cx.waker().clone());
        // The token may have fired while `fut` was polled, before the waker was stored.
        if self.watch.is_stopped() {
            return Poll::Ready(None);
        }
        Poll::Pending
    }
}
