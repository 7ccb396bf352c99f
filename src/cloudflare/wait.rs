//! The event-loop pieces the Durable Objects' shells perform decisions with: waiters woken when
//! a stream changes, bounded by a timer and the client's abort signal; a queue that runs a
//! stream's PUT and DELETE one at a time; and the clock.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::time::Duration;

use futures_channel::oneshot;
use web_sys::AbortSignal;
use worker::Delay;

use crate::turn::race::{race, Either};
use crate::web::js::aborted;

/// The time now, in milliseconds since the epoch (the one clock the shells read).
pub fn now_ms() -> u64 {
    js_sys::Date::now().max(0.0) as u64
}

/// Waits until `until_ms` at most.
pub fn sleep_until(until_ms: u64) -> Delay {
    Delay::from(Duration::from_millis(until_ms.saturating_sub(now_ms())))
}

/// Readers and SSE responses waiting for their stream to change.
#[derive(Default)]
pub struct Waiters {
    list: RefCell<Vec<oneshot::Sender<()>>>,
}

impl Waiters {
    /// Wakes every waiter (data, closure or deletion committed).
    pub fn wake(&self) {
        for waiter in self.list.borrow_mut().drain(..) {
            let _ = waiter.send(());
        }
    }

    /// Resolves true when the stream changes, false at `until_ms` or when `signal` aborts.
    pub async fn changed(&self, until_ms: u64, signal: Option<&AbortSignal>) -> bool {
        if signal.is_some_and(AbortSignal::aborted) {
            return false;
        }
        let (sender, receiver) = oneshot::channel();
        {
            let mut list = self.list.borrow_mut();
            list.retain(|w| !w.is_canceled()); // waiters that timed out or went away
            list.push(sender);
        }
        let stop = async {
            match signal {
                Some(signal) => {
                    let _ = race(sleep_until(until_ms), aborted(signal)).await;
                }
                None => sleep_until(until_ms).await,
            }
        };
        matches!(race(receiver, stop).await, Either::Left(Ok(())))
    }
}

/// Runs tasks one at a time, in arrival order (a fork PUT awaits other objects midway, and no
/// other PUT or DELETE of the stream may interleave).
#[derive(Default)]
pub struct Serial {
    busy: Cell<bool>,
    queue: RefCell<VecDeque<oneshot::Sender<()>>>,
}

impl Serial {
    pub async fn run<F: Future>(&self, task: F) -> F::Output {
        if self.busy.replace(true) {
            let (sender, receiver) = oneshot::channel();
            self.queue.borrow_mut().push_back(sender);
            // Handed over by the task before (its guard keeps `busy` set).
            let _ = receiver.await;
        }
        let _turn = Turn(self);
        task.await
    }
}

/// Passes the turn to the next queued task (one whose caller is still waiting), or frees it.
struct Turn<'a>(&'a Serial);

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        loop {
            let next = self.0.queue.borrow_mut().pop_front();
            match next {
                Some(sender) => {
                    if sender.send(()).is_ok() {
                        return;
                    }
                }
                None => {
                    self.0.busy.set(false);
                    return;
                }
            }
        }
    }
}
