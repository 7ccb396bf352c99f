//! The event-loop pieces the Durable Objects' shells perform decisions with: waiters woken when
//! a stream changes, bounded by a timer and the client's abort signal, and the clock. (The queue
//! that runs a stream's PUT and DELETE one at a time is host-independent: `crate::turn::serial`.)

use std::cell::{Cell, RefCell};
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
///
/// Every change bumps a version. A reader takes the version when it reads (in the same
/// synchronous step as its transaction) and waits for a change *since* then: a change that
/// committed while the reader was away from the list (an SSE writer awaiting its client, say)
/// is not lost. Without it, a live reader that was writing one append when the next one
/// committed slept past it until a third append came: the `RUN_FINISHED` of a turn that paused
/// for an approval, its last append, never reached it.
#[derive(Default)]
pub struct Waiters {
    list: RefCell<Vec<oneshot::Sender<()>>>,
    version: Cell<u64>,
}

impl Waiters {
    /// Wakes every waiter (data, closure or deletion committed).
    pub fn wake(&self) {
        self.version.set(self.version.get().wrapping_add(1));
        for waiter in self.list.borrow_mut().drain(..) {
            let _ = waiter.send(());
        }
    }

    /// The number of changes so far: what a reader saw when it read.
    pub fn version(&self) -> u64 {
        self.version.get()
    }

    /// Resolves true when the stream changed since version `seen` (at once if it already did),
    /// false at `until_ms` or when `signal` aborts.
    pub async fn changed(&self, seen: u64, until_ms: u64, signal: Option<&AbortSignal>) -> bool {
        if self.version.get() != seen {
            return true;
        }
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
