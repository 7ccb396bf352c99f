//! A queue that runs tasks one at a time, in arrival order, with a bound on how many wait
//! (host-independent: the streams object runs a stream's PUT and DELETE through it, and the
//! host tests drive it with a plain executor).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// Runs tasks one at a time, in arrival order; at most `waiting_max` wait behind the one running.
pub struct Serial {
    busy: Cell<bool>,
    queue: RefCell<VecDeque<Rc<Ticket>>>,
    waiting_max: usize,
}

/// The queue already holds `waiting_max` tasks: this one was not queued (nothing of it ran).
#[derive(Debug, PartialEq, Eq)]
pub struct QueueFull;

/// A waiting task's place: `granted` once the task before it handed over the turn.
#[derive(Default)]
struct Ticket {
    granted: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

impl Serial {
    pub fn new(waiting_max: usize) -> Self {
        Self {
            busy: Cell::new(false),
            queue: RefCell::default(),
            waiting_max,
        }
    }

    /// Tasks waiting now (not counting the one running).
    pub fn waiting(&self) -> usize {
        self.queue.borrow().len()
    }

    /// Runs `task` once every task queued before it finished, or refuses it at once when
    /// `waiting_max` tasks already wait. A caller that goes away while it waits (its future
    /// dropped) leaves the queue, and one that was already handed the turn passes it on.
    pub async fn run<F: Future>(&self, task: F) -> Result<F::Output, QueueFull> {
        if self.busy.get() {
            if self.waiting() >= self.waiting_max {
                return Err(QueueFull);
            }
            let ticket = Rc::new(Ticket::default());
            self.queue.borrow_mut().push_back(ticket.clone());
            Waiting {
                serial: self,
                ticket,
                done: false,
            }
            .await;
        } else {
            self.busy.set(true);
        }
        let _turn = Turn(self);
        Ok(task.await)
    }
}

/// Resolves when the ticket is granted; dropped before that, it leaves the queue (or, granted
/// but never run, hands the turn on).
struct Waiting<'a> {
    serial: &'a Serial,
    ticket: Rc<Ticket>,
    done: bool,
}

impl Future for Waiting<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.ticket.granted.get() {
            self.done = true;
            return Poll::Ready(());
        }
        *self.ticket.waker.borrow_mut() = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if self.ticket.granted.get() {
            drop(Turn(self.serial)); // the turn was ours: pass it on
        } else {
            self.serial
                .queue
                .borrow_mut()
                .retain(|t| !Rc::ptr_eq(t, &self.ticket));
        }
    }
}

/// Held while a task runs; when dropped, grants the next queued ticket, or frees the queue.
struct Turn<'a>(&'a Serial);

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let next = self.0.queue.borrow_mut().pop_front();
        match next {
            Some(ticket) => {
                ticket.granted.set(true);
                if let Some(waker) = ticket.waker.borrow_mut().take() {
                    waker.wake();
                }
            }
            None => self.0.busy.set(false),
        }
    }
}
