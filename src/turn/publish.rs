//! The publisher: a running turn's chunks to the session log (ARCHITECTURE.md, "Durable chat: the
//! session log").
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
//! The sending itself (seqs, appends in flight, retries) is [`super::send::LogSender`], shared
//! with `toChatResponse`.
//!
//! A stale epoch means a newer claim of this turn owns the log: the turn is stopped (fenced) and
//! nothing more is sent. A log that keeps failing is given up for this turn (reported to the
//! operator); the turn itself goes on for the client that sent it.

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::Value;

use super::context::Submission;
use super::fault::{Fault, FaultReport, Stage};
use super::interrupt::{Cause, Interrupt};
use super::send::{LogSender, Producer, SendEnd, SendOptions};
use turnkeep_core::chat::controller::ChatState;
use turnkeep_core::projection::TurnEncoder;
use turnkeep_core::protocol::Message;
use turnkeep_core::session::{Confirmation, ConfirmationStatus};
use turnkeep_ports::chat::{Clock, Sleep};
use turnkeep_ports::log::SessionLog;

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

/// Publishes one turn.
pub(crate) struct Publisher {
    sender: LogSender,
    encoder: RefCell<TurnEncoder>,
    stop: Interrupt,
    faults: Rc<dyn FaultReport>,
}

impl Publisher {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        log: Rc<dyn SessionLog>,
        sleep: Rc<dyn Sleep>,
        clock: Rc<dyn Clock>,
        lease_expires_at: u64,
        producer_id: String,
        epoch: u64,
        stop: Interrupt,
        faults: Rc<dyn FaultReport>,
    ) -> Self {
        let options = SendOptions {
            producer: Some(Producer {
                id: producer_id,
                epoch,
            }),
            merge_deltas: true,
            deadline: Some((clock, lease_expires_at)),
            first_seq: 0,
        };
        Self {
            sender: LogSender::new(log, sleep, options),
            encoder: RefCell::new(TurnEncoder::new()),
            stop,
            faults,
        }
    }

    /// The turn's first chunks: the history when the log does not hold it yet (`in_log`), the
    /// run start, and the state as it stands (the user's message).
    pub(crate) fn start(
        &self,
        submission: &Submission,
        history: &[Message],
        in_log: bool,
        log_empty: bool,
        resolves: &[Confirmation],
        state: &ChatState,
        now_ms: u64,
    ) {
        let chunks = {
            let mut encoder = self.encoder.borrow_mut();
            let mut chunks = encoder.begin(history, in_log, log_empty);
            chunks.extend(encoder.run_started(&submission.session_id, &submission.turn_id, now_ms));
            // A continuation's claimed record (approving, rejecting, expiring) before the
            // conversation's change: a reader learns the decision before a rejection's result.
            chunks.extend(encoder.confirmations(resolves, now_ms));
            chunks.extend(encoder.diff(state, now_ms));
            chunks
        };
        self.push(chunks);
    }

    /// A new controller state: its difference from what was published is queued.
    pub(crate) fn offer(&self, state: &ChatState, now_ms: u64) {
        if self.sender.is_closed() {
            return;
        }
        let chunks = self.encoder.borrow_mut().diff(state, now_ms);
        self.push(chunks);
    }

    /// The turn is over: its last difference, the records it changed (`changed`: a resolved one
    /// now final, new pending ones) and the run's end (interrupted by the pending ones) are
    /// queued; nothing follows.
    pub(crate) fn end(&self, state: &ChatState, changed: &[Confirmation], now_ms: u64) {
        if self.sender.is_closed() {
            return;
        }
        let waiting: Vec<Confirmation> = changed
            .iter()
            .filter(|c| c.status == ConfirmationStatus::Pending)
            .cloned()
            .collect();
        let chunks = {
            let mut encoder = self.encoder.borrow_mut();
            let mut chunks = encoder.diff(state, now_ms);
            chunks.extend(encoder.confirmations(changed, now_ms));
            chunks.extend(encoder.run_ended(state, &waiting, now_ms));
            chunks
        };
        self.push(chunks);
        self.sender.close();
    }

    /// Queues chunks (a sender that fell too far behind gives up; `pump` reports it).
    fn push(&self, chunks: Vec<Value>) {
        self.sender.push(chunks);
    }

    /// Sends queued chunks until the turn ended and every chunk was acknowledged, or the
    /// publisher gave up.
    pub(crate) async fn pump(&self) -> PumpEnd {
        let end = self.sender.pump().await;
        self.conclude(&end)
    }

    /// What an end means for the turn: a fenced turn stops, a lapsed one stops writing, a failed
    /// log is reported to the operator (the turn itself goes on for the client that sent it).
    fn conclude(&self, end: &SendEnd) -> PumpEnd {
        let fault = |reason: String| {
            self.faults.report(&Fault::new(
                Stage::SessionLog,
                turnkeep_ports::PortError::new(reason.clone()),
            ));
            PumpEnd::Failed(reason)
        };
        match end {
            SendEnd::Drained => PumpEnd::Drained,
            SendEnd::Fenced { current_epoch } => {
                self.stop.fire(Cause::Fenced);
                PumpEnd::Fenced {
                    current_epoch: *current_epoch,
                }
            }
            SendEnd::Lapsed => {
                // The turn ends `indeterminate` for it: the operator is told why.
                self.faults.report(&Fault::new(
                    Stage::SessionLog,
                    turnkeep_ports::PortError::new(
                        "the turn's lease lapsed before the log took all its chunks: the rest were not sent (the next claim re-syncs the log)",
                    ),
                ));
                self.stop.fire(Cause::LeaseLapsed);
                PumpEnd::Lapsed
            }
            SendEnd::Overflow => fault("the session log fell too far behind".into()),
            SendEnd::Failed(error) => fault(match error {
                turnkeep_ports::log::LogError::Retryable(_)
                | turnkeep_ports::log::LogError::SequenceGap { .. } => {
                    format!(
                        "an append failed {} times",
                        turnkeep_core::limits::LOG_APPEND_ATTEMPTS_MAX
                    )
                }
                other => other.to_string(),
            }),
        }
    }
}
