//! The publisher: a running turn's chunks to the session log (design §8 "Durable chat contracts").
//!
//! Every controller state the driver offers is turned into chunks by the core's encoder (which
//! projects what it emitted, so the log always projects to the controller's messages). The
//! chunks queue here and go out one producer batch each — producer `chat-turn:<sessionId>:<turnId>`,
//! epoch = the claim's generation, seq = the chunk's index in the turn — with at most
//! `LOG_APPENDS_IN_FLIGHT_MAX` appends in flight. A chunk gets its seq when it is first sent and
//! keeps it (and its text) across retries, so a replay under the same (id, epoch) is deduplicated
//! by the log. Text deltas that are still queued merge into one chunk, so a log slower than the
//! model gets fewer, larger appends instead of a growing queue.
//!
//! A stale epoch means a newer claim of this turn owns the log: the turn is stopped (fenced) and
//! nothing more is sent. A log that keeps failing is given up for this turn (reported to the
//! operator); the turn itself goes on for the client that sent it.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use serde_json::Value;

use super::context::Submission;
use super::fault::{Fault, FaultReport, Stage};
use super::interrupt::{Cause, Interrupt};
use crate::core::chat::controller::ChatState;
use crate::core::limits::{
    LOG_APPENDS_IN_FLIGHT_MAX, LOG_APPEND_ATTEMPTS_MAX, LOG_APPEND_RETRY_BACKOFF_MS,
    LOG_CHUNKS_QUEUED_MAX,
};
use crate::core::projection::{merge_queued, TurnEncoder};
use crate::core::protocol::Message;
use crate::ports::chat::{Clock, Sleep};
use crate::ports::log::{AppendAck, LogError, ProducerStamp, SessionLog};
use crate::ports::CancelToken;

/// How the publisher ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PumpEnd {
    /// Every chunk of the turn was acknowledged by the log.
    Drained,
    /// A newer epoch wrote under this turn's producer id; the turn was stopped.
    Fenced { current_epoch: u64 },
    /// The log refused or kept failing; chunks after the failure were not sent.
    Failed(String),
    /// The cleanup budget ran out before the last chunks were acknowledged.
    TimedOut,
    /// The turn's lease lapsed before every chunk was sent: the rest was not sent (another
    /// claim may own the session by now; a stale turn must not write after it).
    Lapsed,
}

/// A chunk on its way: its text, its seq once sent, and how often it was tried.
struct Pending {
    text: String,
    seq: u64,
    attempts: u32,
}

struct State {
    encoder: TurnEncoder,
    /// Chunks not yet sent (no seq yet): they may still merge.
    queue: VecDeque<Value>,
    /// Sent chunks to send again (retryable failures), lowest seq first.
    retry: VecDeque<Pending>,
    next_seq: u64,
    /// No more chunks will be offered.
    closed: bool,
    /// Fenced or failed: nothing more is queued or sent.
    ended: Option<PumpEnd>,
    waker: Option<Waker>,
}

/// Publishes one turn.
pub struct Publisher {
    log: Rc<dyn SessionLog>,
    sleep: Rc<dyn Sleep>,
    clock: Rc<dyn Clock>,
    /// When the turn's lease lapses: nothing is sent from then on.
    lease_expires_at: u64,
    producer_id: String,
    epoch: u64,
    stop: Interrupt,
    faults: Rc<dyn FaultReport>,
    /// Fires when the publisher gives up, cancelling appends in flight.
    cancel: CancelToken,
    state: RefCell<State>,
}

/// What became of one send: `None` when it was not sent because the lease had lapsed.
type Sent = Option<Result<AppendAck, LogError>>;
type Append<'a> = Pin<Box<dyn Future<Output = (Pending, Sent)> + 'a>>;

impl Publisher {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        log: Rc<dyn SessionLog>,
        sleep: Rc<dyn Sleep>,
        clock: Rc<dyn Clock>,
        lease_expires_at: u64,
        producer_id: String,
        epoch: u64,
        stop: Interrupt,
        faults: Rc<dyn FaultReport>,
    ) -> Self {
        Self {
            log,
            sleep,
            clock,
            lease_expires_at,
            producer_id,
            epoch,
            stop,
            faults,
            cancel: CancelToken::new(),
            state: RefCell::new(State {
                encoder: TurnEncoder::new(),
                queue: VecDeque::new(),
                retry: VecDeque::new(),
                next_seq: 0,
                closed: false,
                ended: None,
                waker: None,
            }),
        }
    }

    /// The turn's first chunks: the history when the log does not hold it yet (`in_log`), the
    /// run start, and the state as it stands (the user's message).
    pub fn start(
        &self,
        submission: &Submission,
        history: &[Message],
        in_log: bool,
        log_empty: bool,
        state: &ChatState,
        now_ms: u64,
    ) {
        let chunks = {
            let mut st = self.state.borrow_mut();
            let mut chunks = st.encoder.begin(history, in_log, log_empty);
            chunks.extend(st.encoder.run_started(
                &submission.session_id,
                &submission.turn_id,
                now_ms,
            ));
            chunks.extend(st.encoder.diff(state, now_ms));
            chunks
        };
        self.enqueue(chunks);
    }

    /// Diffs that needed the whole-conversation fallback (tests and benchmarks).
    pub fn fallbacks(&self) -> u64 {
        self.state.borrow().encoder.fallbacks()
    }

    /// A new controller state: its difference from what was published is queued.
    pub fn offer(&self, state: &ChatState, now_ms: u64) {
        let chunks = {
            let mut st = self.state.borrow_mut();
            if st.ended.is_some() || st.closed {
                return;
            }
            st.encoder.diff(state, now_ms)
        };
        self.enqueue(chunks);
    }

    /// The turn is over: its last difference and the run's end are queued; nothing follows.
    pub fn end(&self, state: &ChatState, now_ms: u64) {
        let chunks = {
            let mut st = self.state.borrow_mut();
            if st.ended.is_some() || st.closed {
                return;
            }
            let mut chunks = st.encoder.diff(state, now_ms);
            chunks.extend(st.encoder.run_ended(state, now_ms));
            st.closed = true;
            chunks
        };
        self.enqueue(chunks);
        self.wake();
    }

    fn enqueue(&self, chunks: Vec<Value>) {
        if chunks.is_empty() {
            return;
        }
        let overflow = {
            let mut st = self.state.borrow_mut();
            for chunk in chunks {
                merge_queued(&mut st.queue, chunk);
            }
            st.queue.len() > LOG_CHUNKS_QUEUED_MAX
        };
        if overflow {
            self.give_up(PumpEnd::Failed(
                "the session log fell too far behind".into(),
            ));
        }
        self.wake();
    }

    fn wake(&self) {
        if let Some(waker) = self.state.borrow_mut().waker.take() {
            waker.wake();
        }
    }

    fn give_up(&self, end: PumpEnd) {
        {
            let mut st = self.state.borrow_mut();
            if st.ended.is_some() {
                return;
            }
            st.queue.clear();
            st.retry.clear();
            st.ended = Some(end.clone());
        }
        self.cancel.cancel();
        match end {
            PumpEnd::Fenced { .. } => self.stop.fire(Cause::Fenced),
            PumpEnd::Lapsed => self.stop.fire(Cause::LeaseLapsed),
            PumpEnd::Failed(reason) => self.faults.report(&Fault::new(
                Stage::SessionLog,
                crate::ports::PortError::new(reason),
            )),
            PumpEnd::Drained | PumpEnd::TimedOut => {}
        }
        self.wake();
    }

    /// Sends queued chunks until the turn ended and every chunk was acknowledged, or the
    /// publisher gave up.
    pub async fn pump(&self) -> PumpEnd {
        let mut in_flight: Vec<Append<'_>> = Vec::new();
        std::future::poll_fn(|cx: &mut Context<'_>| loop {
            if let Some(end) = self.state.borrow().ended.clone() {
                return Poll::Ready(end);
            }
            if self.lapsed() && self.has_unsent() {
                self.give_up(PumpEnd::Lapsed);
                continue;
            }
            while in_flight.len() < LOG_APPENDS_IN_FLIGHT_MAX {
                match self.next_to_send() {
                    Some(pending) => in_flight.push(self.send(pending)),
                    None => break,
                }
            }
            let mut progressed = false;
            let mut index = 0;
            while index < in_flight.len() {
                match in_flight[index].as_mut().poll(cx) {
                    Poll::Ready((pending, result)) => {
                        drop(in_flight.swap_remove(index));
                        self.settle(pending, result);
                        progressed = true;
                    }
                    Poll::Pending => index += 1,
                }
            }
            if progressed {
                continue;
            }
            let st = &mut *self.state.borrow_mut();
            if st.ended.is_none()
                && st.closed
                && st.queue.is_empty()
                && st.retry.is_empty()
                && in_flight.is_empty()
            {
                st.ended = Some(PumpEnd::Drained);
                return Poll::Ready(PumpEnd::Drained);
            }
            st.waker = Some(cx.waker().clone());
            return Poll::Pending;
        })
        .await
    }

    fn lapsed(&self) -> bool {
        self.clock.now_ms() >= self.lease_expires_at
    }

    fn has_unsent(&self) -> bool {
        let st = self.state.borrow();
        !st.queue.is_empty() || !st.retry.is_empty()
    }

    /// The next chunk to send: a retry first (it holds an earlier seq), else the oldest queued
    /// chunk, which gets the next seq now.
    fn next_to_send(&self) -> Option<Pending> {
        let mut st = self.state.borrow_mut();
        if let Some(pending) = st.retry.pop_front() {
            return Some(pending);
        }
        let chunk = st.queue.pop_front()?;
        let seq = st.next_seq;
        st.next_seq += 1;
        Some(Pending {
            text: chunk.to_string(),
            seq,
            attempts: 0,
        })
    }

    fn send(&self, mut pending: Pending) -> Append<'_> {
        let stamp = ProducerStamp {
            id: self.producer_id.clone(),
            epoch: self.epoch,
            seq: pending.seq,
        };
        let backoff_ms = u64::from(pending.attempts) * LOG_APPEND_RETRY_BACKOFF_MS;
        pending.attempts += 1;
        Box::pin(async move {
            if backoff_ms > 0 {
                self.sleep.sleep(backoff_ms).await;
            }
            // Checked at the last moment: a retry may have waited past the lease.
            if self.lapsed() {
                return (pending, None);
            }
            let chunks = std::slice::from_ref(&pending.text);
            let result = self.log.append(chunks, Some(&stamp), &self.cancel).await;
            (pending, Some(result))
        })
    }

    fn settle(&self, pending: Pending, sent: Sent) {
        let Some(result) = sent else {
            return self.give_up(PumpEnd::Lapsed);
        };
        let retry = match result {
            Ok(_) => return,
            Err(LogError::StaleEpoch { current_epoch }) => {
                return self.give_up(PumpEnd::Fenced { current_epoch });
            }
            // An earlier chunk is still on its way (appends in flight can arrive out of order).
            Err(LogError::SequenceGap { expected, received }) if expected < received => true,
            Err(LogError::Retryable(_)) => true,
            Err(e) => return self.give_up(PumpEnd::Failed(e.to_string())),
        };
        if retry && pending.attempts >= LOG_APPEND_ATTEMPTS_MAX {
            return self.give_up(PumpEnd::Failed(format!(
                "an append failed {} times",
                pending.attempts
            )));
        }
        let mut st = self.state.borrow_mut();
        let at = st.retry.iter().position(|p| p.seq > pending.seq);
        match at {
            Some(i) => st.retry.insert(i, pending),
            None => st.retry.push_back(pending),
        }
    }
}
