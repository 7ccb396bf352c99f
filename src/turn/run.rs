//! Stages 3 and 4 of a turn: run it, then clean up exactly once.
//!
//! Three things run side by side in one task: the driver (model and tools, feeding the
//! controller), the publisher (the turn's chunks to the session log, at most a few appends in
//! flight) and the stop watcher (a `client.turn.stop` from any client of the session arrives as a
//! chunk in the log). Every controller state reaches the sender's response through the
//! [`TurnSink`]; the sink coalesces, the log gets every change.
//!
//! Cleanup, whatever ended the turn: the publisher's last appends, the canonical messages saved
//! to `ChatMemory`, and the lease released by CAS with the turn's outcome — each bounded by its
//! own cleanup budget — and only then the response's last line. The release also writes the
//! turn's confirmations: a `pending` record for each call the turn left waiting for a person
//! (only when its messages were saved: a record must name a call the conversation holds), and,
//! for a continuation, the final state of the record it resolved.

use std::cell::{Cell, Ref, RefCell};
use std::rc::Rc;

use super::admit::Claim;
use super::commit::{commit_session, Saved, WriteBudget};
use super::context::{Ports, Submission, TurnLimits};
use super::driver::{drive_turn, TurnPorts};
use super::fault::{Fault, Stage};
use super::interrupt::{Cause, Interrupt};
use super::lease::HeldLease;
use super::open::Opened;
use super::publish::{Publisher, PumpEnd};
use super::race::{fired, join, race, Budget, CleanupTokens, Either};
use super::steps::StepLog;
use super::stop_request::watch_for_stop;
use turnkeep_core::chat::controller::{waiting_calls, Action, ChatController, ChatState};
use turnkeep_core::protocol::BoundaryError;
use turnkeep_core::session::{
    final_status, records_for_waiting_calls, tool_idempotency_key, Confirmation, SessionWrite,
    TurnOutcome, TurnSettlement,
};
use turnkeep_ports::chat::Tool;
use turnkeep_ports::CancelToken;

/// Where the controller's states go for the client that sent the turn.
pub trait TurnSink {
    /// The state changed; read it with [`Turn::state`] when a reader wants a line.
    fn changed(&self);
    /// No more states: close after the pending one (if any) and then `last` (if any).
    fn close(&self, last: Option<BoundaryError>);
}

/// A claimed, opened turn. Shared (`Rc`) by the task that runs it and the shell's response stream.
pub struct Turn {
    ports: Ports,
    limits: TurnLimits,
    submission: Submission,
    claim: Claim,
    controller: RefCell<ChatController>,
    first: Cell<Option<Action>>,
    history_len: usize,
    history_from_memory: bool,
    /// Fires when something stops the turn.
    stop: Interrupt,
    /// The first interruption that did not stop the turn (the sender left while a log keeps the
    /// turn going): it still decides the sender's last line.
    sender_lost: Cell<Option<Cause>>,
    /// The confirmations the sender's snapshots show: the session's records that are not final
    /// (as claimed), then, once the turn's work is done, its resolved record's final state and
    /// the records it proposes.
    confirmations: RefCell<Vec<Confirmation>>,
    /// The `pending` records for the calls this turn left waiting (set when its work is done).
    proposed: RefCell<Vec<Confirmation>>,
    /// The turn's clock when it was built (after its claim), for its summary's duration.
    started_ms: u64,
    /// Its model calls and tool runs, for the operator's metrics and traces.
    steps: StepLog,
    /// The lease as this turn's last write stored it: its claim, then each journal record.
    held: RefCell<HeldLease>,
    /// Where the turn's own messages start (what its journal records).
    own_from: usize,
    /// A journal record lost its compare-and-set: another claim (a retry of this turn id after
    /// the lease lapsed) owns the session, and this turn saves and releases nothing.
    fenced: Cell<bool>,
    /// True when the turn replays its journal.
    replayed: bool,
    /// The token of its cleanup steps (the final memory save, the lease taken back, the
    /// release), run one after another: one host signal for all of them while none ran out.
    cleanup: CleanupTokens,
}

/// How a turn ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnEnd {
    /// What the terminal history records: `indeterminate` when the messages could not be saved.
    pub outcome: TurnOutcome,
    /// True when the release CAS went through (the session is free at once).
    pub released: bool,
    /// What stopped the turn early, if anything did.
    pub stopped_by: Option<Cause>,
    /// How the session log fared (`None` without a log).
    pub log: Option<PumpEnd>,
    /// The diagnostic that closed the sender's response, if any.
    pub last_line: Option<BoundaryError>,
}

impl Turn {
    pub fn new(
        ports: Ports,
        limits: TurnLimits,
        submission: Submission,
        claim: Claim,
        opened: Opened,
    ) -> Rc<Self> {
        let confirmations = claim
            .envelope
            .confirmations
            .iter()
            .filter(|c| !c.status.is_final())
            .cloned()
            .collect();
        let started_ms = ports.clock.now_ms();
        let held = HeldLease::new(&submission.turn_id, claim.envelope.clone());
        Rc::new(Self {
            held: RefCell::new(held),
            own_from: opened.own_from,
            fenced: Cell::new(false),
            replayed: opened.replayed,
            cleanup: CleanupTokens::default(),
            started_ms,
            ports,
            limits,
            submission,
            claim,
            controller: RefCell::new(opened.controller),
            first: Cell::new(Some(opened.first)),
            history_len: opened.history_len,
            history_from_memory: opened.history_from_memory,
            stop: Interrupt::new(),
            sender_lost: Cell::new(None),
            confirmations: RefCell::new(confirmations),
            proposed: RefCell::new(Vec::new()),
            steps: StepLog::default(),
        })
    }

    /// The confirmations a snapshot shows now (see the field).
    pub fn confirmations(&self) -> Ref<'_, Vec<Confirmation>> {
        self.confirmations.borrow()
    }

    /// The turn's work is done: decides the records its release writes (the resolved one's
    /// final state, pending ones for the calls it left waiting), shows them in its snapshots,
    /// and returns them (for the log).
    fn settle_confirmations(&self) -> Vec<Confirmation> {
        let now_ms = self.ports.clock.now_ms();
        let proposed = {
            let state = self.state();
            let new_messages = &state.messages[self.history_len.min(state.messages.len())..];
            records_for_waiting_calls(
                &self.claim.envelope,
                &waiting_calls(new_messages),
                now_ms,
                self.limits.confirmation_ttl_ms,
            )
        };
        let resolved = self.claim.resolves.clone().map(|record| Confirmation {
            status: final_status(record.status).unwrap_or(record.status),
            ..record
        });
        let mut changed: Vec<Confirmation> = resolved.into_iter().collect();
        changed.extend(proposed.iter().cloned());
        let mut view = self.confirmations.borrow_mut();
        for record in &changed {
            match view.iter_mut().find(|c| c.token == record.token) {
                Some(shown) => *shown = record.clone(),
                None => view.push(record.clone()),
            }
        }
        *self.proposed.borrow_mut() = proposed;
        changed
    }

    /// The controller's state now.
    pub fn state(&self) -> Ref<'_, ChatState> {
        Ref::map(self.controller.borrow(), |c| c.state())
    }

    /// The controller (for the shell's line encoder: its state, and which messages changed
    /// since the revision of its last line).
    pub fn controller(&self) -> Ref<'_, ChatController> {
        self.controller.borrow()
    }

    /// How many messages the conversation had before this turn.
    pub fn history_len(&self) -> usize {
        self.history_len
    }

    /// The turn's clock when it was built.
    pub fn started_ms(&self) -> u64 {
        self.started_ms
    }

    /// Its model calls and tool runs so far.
    pub fn steps(&self) -> &StepLog {
        &self.steps
    }

    /// The `pending` records this turn proposes (once its work is done).
    pub fn proposed(&self) -> Ref<'_, Vec<Confirmation>> {
        self.proposed.borrow()
    }

    pub fn submission(&self) -> &Submission {
        &self.submission
    }

    pub fn claim(&self) -> &Claim {
        &self.claim
    }

    pub fn ports(&self) -> &Ports {
        &self.ports
    }

    pub fn limits(&self) -> TurnLimits {
        self.limits
    }

    pub(crate) fn has_log(&self) -> bool {
        self.ports.log.is_some()
    }

    /// True when the turn replays its journal (a retry of a turn whose lease lapsed).
    pub fn replayed(&self) -> bool {
        self.replayed
    }

    /// One journal record: decided on the turn's last write, written by CAS under the turn's own
    /// deadline (it is the turn's work, like its model and tools: what stops the turn overtakes
    /// it, and a record whose answer was lost makes the release a conflict, so the lease lapses
    /// and a retry replays whatever landed). A continuation records nothing (a crashed one is never run again: its record
    /// stays in its processing state for reconciliation, `confirm.rs`).
    async fn record_journal(&self, messages: Vec<turnkeep_core::protocol::Message>) -> bool {
        if self.claim.resolves.is_some() {
            return true;
        }
        let mut held = self.held.borrow().clone();
        let report = |error: String| {
            let fault = Fault::new(Stage::SessionSave, turnkeep_ports::PortError::new(error));
            self.ports.faults.report(&fault);
        };
        // A loss to sends that only joined or left the queue meanwhile is decided again on what
        // they stored (`queue::rebase_held`), at most `HOLDER_REBASES_MAX` times.
        for _ in 0..turnkeep_core::limits::HOLDER_REBASES_MAX {
            let write = match held.record(self.own_from, &messages, self.ports.clock.now_ms()) {
                Ok(write) => write,
                Err(e) => {
                    report(e.to_string());
                    return false;
                }
            };
            let session = self.ports.session(&self.limits);
            let budget = WriteBudget::Deadline(&self.stop);
            match commit_session(&session, write.clone(), budget).await {
                Ok(Saved::Written) => {
                    *self.held.borrow_mut() = held.stored(&write);
                    return true;
                }
                Ok(Saved::Conflict) => {
                    match super::queue::rebase_held(&self.ports, &self.limits, &held).await {
                        Some(rebased) => held = rebased,
                        None => break,
                    }
                }
                Err(failure) => {
                    failure.report(self.ports.faults.as_ref());
                    return false;
                }
            }
        }
        self.fenced.set(true);
        report("a journal record lost its compare-and-set: another claim of the session fenced this turn".into());
        false
    }

    /// Reports an interruption; [`Cause::stops_turn`] decides whether it stops the turn.
    pub fn interrupt(&self, cause: Cause) {
        if cause.stops_turn(self.has_log()) {
            self.stop.fire(cause);
        } else if self.sender_lost.get().is_none() {
            self.sender_lost.set(Some(cause));
        }
    }
}

/// Runs the turn to its end and cleans up. Returns how it ended; the sink was closed by then.
pub async fn run(turn: Rc<Turn>, sink: Rc<dyn TurnSink>) -> TurnEnd {
    let publisher = turn.ports.log.clone().map(|log| {
        let expires_at = turn
            .claim
            .envelope
            .active_turn
            .as_ref()
            .map_or(0, |a| a.expires_at);
        Publisher::new(
            log,
            turn.ports.sleep.clone(),
            turn.ports.clock.clone(),
            expires_at,
            producer_id(&turn.submission),
            turn.claim.generation(),
            turn.stop.clone(),
            turn.ports.faults.clone(),
        )
    });
    if let Some(publisher) = &publisher {
        let state = turn.state();
        // The log holds the history when earlier turns published it: it came from memory, the
        // log is not empty, and the turn before ended cleanly (see `Claim::resync`).
        let in_log =
            turn.history_from_memory && turn.claim.log_tail.is_some() && !turn.claim.resync;
        let history = &state.messages[..turn.history_len.min(state.messages.len())];
        let log_empty = turn.claim.log_tail.is_none();
        let now_ms = turn.ports.clock.now_ms();
        let resolves = turn.claim.resolves.as_slice();
        publisher.start(
            &turn.submission,
            history,
            in_log,
            log_empty,
            resolves,
            &state,
            now_ms,
        );
    }
    let driven = CancelToken::new();
    let drive = async {
        drive(&turn, &*sink, publisher.as_ref()).await;
        let changed = turn.settle_confirmations();
        if !changed.is_empty() {
            sink.changed();
        }
        if let Some(publisher) = &publisher {
            publisher.end(&turn.state(), &changed, turn.ports.clock.now_ms());
        }
        driven.cancel();
    };
    let pump = async {
        let publisher = publisher.as_ref()?;
        let mut pump = Box::pin(publisher.pump());
        // While the turn runs the publisher keeps up; once it ended, what is left to append
        // gets one cleanup budget.
        match race(pump.as_mut(), fired(&driven)).await {
            Either::Left(end) => Some(end),
            Either::Right(()) => {
                let budget = Budget::new(turn.ports.sleep.as_ref(), turn.limits.cleanup_budget_ms);
                let end = budget.run(pump).await;
                if end.is_none() {
                    // The turn ends `indeterminate` for it: the operator is told why.
                    let late = turnkeep_ports::PortError::new(
                        "the log did not take the turn's last chunks within the cleanup budget (the next claim re-syncs the log)",
                    );
                    turn.ports
                        .faults
                        .report(&Fault::new(Stage::SessionLog, late));
                }
                Some(end.unwrap_or(PumpEnd::TimedOut))
            }
        }
    };
    let watch = async {
        if let Some(log) = &turn.ports.log {
            let from = turn.claim.log_tail.clone();
            let watching = watch_for_stop(
                log.as_ref(),
                turn.ports.sleep.as_ref(),
                from,
                &turn.submission.turn_id,
                &driven,
            );
            if let Either::Left(true) = race(watching, fired(&driven)).await {
                turn.interrupt(Cause::StopRequested);
            }
        }
    };
    let ((), (log, ())) = join(drive, join(pump, watch)).await;
    let end = finish(&turn, &*sink, log).await;
    let now_ms = turn.ports.clock.now_ms();
    turn.ports
        .faults
        .turn_ended(&super::summary::summary(&turn, &end, now_ms));
    end
}

/// The driver: performs the controller's actions until it is done or the turn is stopped.
async fn drive(turn: &Turn, sink: &dyn TurnSink, publisher: Option<&Publisher>) {
    let Some(first) = turn.first.take() else {
        return;
    };
    let tools: Vec<&dyn Tool> = turn.ports.tools.iter().map(|t| t.as_ref()).collect();
    let faults = turn.ports.faults.clone();
    let report = move |stage: Stage, error: turnkeep_ports::PortError| {
        faults.report(&Fault::new(stage, error));
    };
    let ports = TurnPorts {
        model: turn.ports.model.as_ref(),
        tools: &tools,
        clock: turn.ports.clock.as_ref(),
        ids: turn.ports.ids.as_ref(),
        sleep: turn.ports.sleep.as_ref(),
        model_stall_ms: turn.limits.model_stall_ms,
        report: &report,
        steps: Some(&turn.steps),
        recorder: Some(turn),
    };
    let publish = &mut |_revision: u64, state: &ChatState| {
        sink.changed();
        if let Some(publisher) = publisher {
            publisher.offer(state, turn.ports.clock.now_ms());
        }
    };
    drive_turn(&turn.controller, first, ports, turn.stop.token(), publish).await;
}

/// Cleanup, once: save messages, release the lease (each within its budget), close the sink.
/// A turn that outlived its lease (its process was paused, its clock jumped, its isolate was
/// overloaded) first takes the lease back by CAS on its own claim: when nobody claimed the
/// session meanwhile that write wins and the turn saves and releases as usual, so a slow turn
/// loses no messages. When it loses, another claim owns the session: the turn is a zombie, saves
/// and releases nothing, and the next claim re-syncs the log from the saved messages
/// (`Claim::resync`).
async fn finish(turn: &Turn, sink: &dyn TurnSink, log: Option<PumpEnd>) -> TurnEnd {
    let ports = &turn.ports;
    let budget_ms = turn.limits.cleanup_budget_ms;
    let claimed = turn.held.borrow().clone();
    let held = if turn.fenced.get() {
        None
    } else if claimed.lapsed_at(ports.clock.now_ms()) {
        retake_lease(turn, &claimed).await
    } else {
        Some(claimed)
    };
    let Some(held) = held else {
        let lapsed = turnkeep_ports::PortError::new(
            "the turn outlived its lease and another claim took it: its messages were not saved and nothing was released",
        );
        ports.faults.report(&Fault::new(Stage::SessionSave, lapsed));
        sink.close(Some(BoundaryError::SessionConflict));
        return TurnEnd {
            outcome: TurnOutcome::Indeterminate,
            released: false,
            stopped_by: turn.stop.cause(),
            log,
            last_line: Some(BoundaryError::SessionConflict),
        };
    };
    let messages = turn.state().messages.clone();
    let saving = turn.cleanup.budget(ports.sleep.as_ref(), budget_ms);
    let saved = match saving
        .run(
            ports
                .memory
                .save(&messages, Some(turn.claim().generation()), saving.token()),
        )
        .await
    {
        Some(Ok(())) => true,
        Some(Err(e)) => {
            ports.faults.report(&Fault::new(Stage::MemorySave, e));
            false
        }
        None => {
            let timed_out =
                turnkeep_ports::PortError::new("memory.save ran out of its cleanup budget");
            ports
                .faults
                .report(&Fault::new(Stage::MemorySave, timed_out));
            false
        }
    };
    // `indeterminate` when the turn's durable record is incomplete: its messages were not saved,
    // or its session log did not take every chunk (the next claim then re-syncs the log).
    let published = log.as_ref().is_none_or(|end| *end == PumpEnd::Drained);
    let outcome = if saved && published {
        TurnOutcome::Completed
    } else {
        TurnOutcome::Indeterminate
    };
    let released = release(turn, &held, outcome, saved).await;
    let stopped_by = turn.stop.cause();
    let last_line = closing_line(stopped_by.or(turn.sender_lost.get()), saved, released);
    sink.close(last_line);
    TurnEnd {
        outcome,
        released: released == Some(true),
        stopped_by,
        log,
        last_line,
    }
}

/// Takes a lapsed lease back for its own turn ([`HeldLease::retake`]), saved by CAS on the
/// turn's claim cursor. `Some(lease)` when it won (nobody wrote the session since the claim),
/// `None` when another writer did, the store failed (reported) or the cleanup budget ran out.
async fn retake_lease(turn: &Turn, claimed: &HeldLease) -> Option<HeldLease> {
    let at_ms = turn.ports.clock.now_ms();
    let (saved, retaken) = save_held(turn, claimed, |held| {
        held.retake(at_ms, turn.limits.lease_ms)
    })
    .await?;
    (saved == Saved::Written).then_some(retaken)
}

/// A holder's cleanup write, decided by `decide` on `held` and saved by CAS on its cursor; when
/// it loses to sends that only joined or left the queue meanwhile, decided again on the stored
/// envelope (`queue::rebase_held`), at most `HOLDER_REBASES_MAX` times. The answer and the holder
/// the last write was decided on (`None`: nothing to decide, or the save failed).
async fn save_held(
    turn: &Turn,
    held: &HeldLease,
    decide: impl Fn(&HeldLease) -> Option<SessionWrite>,
) -> Option<(Saved, HeldLease)> {
    let mut held = held.clone();
    for _ in 0..turnkeep_core::limits::HOLDER_REBASES_MAX {
        let write = decide(&held)?;
        let after = held.stored(&write);
        match save_session(turn, write).await? {
            Saved::Written => return Some((Saved::Written, after)),
            Saved::Conflict => {
                let ports = &turn.ports;
                match super::queue::rebase_held(ports, &turn.limits, &held).await {
                    Some(rebased) => held = rebased,
                    None => return Some((Saved::Conflict, held)),
                }
            }
        }
    }
    Some((Saved::Conflict, held))
}

/// The release CAS on `held` (the claim, or the lease taken back after it lapsed), with the
/// turn's confirmations (proposals only when its messages were `saved`): `Some(true)` written,
/// `Some(false)` lost to another writer (the lease had lapsed and was taken), `None` failed or
/// ran out of budget.
async fn release(turn: &Turn, held: &HeldLease, outcome: TurnOutcome, saved: bool) -> Option<bool> {
    let ports = &turn.ports;
    let proposed = turn.proposed.borrow().clone();
    let settlement = TurnSettlement {
        outcome,
        resolved: turn.claim.resolves.as_ref().map(|r| r.token.as_str()),
        proposed: if saved { &proposed } else { &[] },
    };
    let at_ms = ports.clock.now_ms();
    let refused = held.release(settlement, at_ms).ok()?.1;
    for record in refused {
        let full = turnkeep_ports::PortError::new(format!(
            "the session holds {} unfinished confirmations: call {} gets none and cannot be approved",
            turnkeep_core::limits::CONFIRMATIONS_MAX,
            record.tool_call_id
        ));
        ports.faults.report(&Fault::new(Stage::SessionSave, full));
    }
    let decide = |held: &HeldLease| held.release(settlement, at_ms).ok().map(|(write, _)| write);
    let (saved, _) = save_held(turn, held, decide).await?;
    Some(saved == Saved::Written)
}

/// A cleanup save of the session envelope: `None` when it failed (reported to the operator).
async fn save_session(turn: &Turn, write: SessionWrite) -> Option<Saved> {
    let session = turn.ports.session(&turn.limits);
    match commit_session(&session, write, WriteBudget::CleanupAfter(&turn.cleanup)).await {
        Ok(saved) => Some(saved),
        Err(failure) => {
            failure.report(turn.ports.faults.as_ref());
            None
        }
    }
}

/// The sender's last line: why the turn was interrupted, else a failed save or release.
pub(crate) fn closing_line(
    interrupted_by: Option<Cause>,
    saved: bool,
    released: Option<bool>,
) -> Option<BoundaryError> {
    match interrupted_by {
        Some(cause) => cause.closing_diagnostic(),
        None if !saved => Some(BoundaryError::Internal),
        None => match released {
            Some(true) => None,
            Some(false) => Some(BoundaryError::SessionConflict),
            None => Some(BoundaryError::Internal),
        },
    }
}

/// The turn's producer id on the session log: stable across claims of the turn (the epoch is
/// the claim's generation).
pub fn producer_id(submission: &Submission) -> String {
    format!("chat-turn:{}:{}", submission.session_id, submission.turn_id)
}

impl super::driver::TurnRecorder for Turn {
    fn record(&self, state: &ChatState) -> turnkeep_ports::LocalFuture<'_, bool> {
        let messages = state.messages[self.own_from.min(state.messages.len())..].to_vec();
        Box::pin(self.record_journal(messages))
    }

    fn idempotency_key(&self, call_id: &str) -> String {
        tool_idempotency_key(
            &self.submission.session_id,
            &self.submission.turn_id,
            call_id,
        )
    }
}
