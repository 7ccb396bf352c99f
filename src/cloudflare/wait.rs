//! The event-loop pieces the Durable Objects' shells perform decisions with: waiters woken when
//! a stream changes, bounded by a timer and the client's abort signal, and the clock. (The queue
//! that runs a stream's PUT and DELETE one at a time is host-independent: `crate::turn::serial`.)

use std::cell::RefCell;
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
