//! The one commit site of the session envelope. Every save — a submission's claim
//! ([`super::admit`]), a confirmation's claim and the records it settles ([`super::confirm`]),
//! a reconciliation ([`super::reconcile`]), a turn's lease taken back and its release
//! ([`super::run`]), an abandoned claim, and the host's own `resumeChatSession` — goes through
//! [`commit_session`], which takes the write the core decided ([`SessionWrite`]), asserts it
//! ([`check_write`]: the envelope round-trips, the cursor advances by one from the one it
//! expects), sends it within its [`WriteBudget`] and answers with what happened, a failure
//! carrying its cause.
//!
//! Like the stream producer's `commit_producer` (core `streams/producer.rs`), nothing else moves
//! the stored state: a caller decides with a pure transition and hands the result here.

use super::fault::{Fault, FaultReport, Refusal, Stage};
use super::interrupt::{Cause, Interrupt};
use super::lease::HeldLease;
use super::race::{fired, race, Budget, CleanupTokens, Either};
use turnkeep_core::protocol::BoundaryError;
use turnkeep_core::session::{
    check_write, SessionEnvelope, SessionWrite, WriteKind, WriteViolation,
};
use turnkeep_ports::chat::{Clock, Sleep};
use turnkeep_ports::session::SessionStorage;
use turnkeep_ports::{CancelToken, PortError};

/// What a session write reaches the world through.
#[derive(Clone, Copy)]
pub struct SessionPorts<'a> {
    pub storage: &'a dyn SessionStorage,
    pub clock: &'a dyn Clock,
    pub sleep: &'a dyn Sleep,
    /// Where the failure of a write nobody waits for goes (a late claim's abandon).
    pub faults: &'a dyn FaultReport,
    /// A cleanup write's budget, and how long a claim the deadline overtook is still awaited.
    pub cleanup_budget_ms: u64,
}

/// How long a write may take: the one timeout policy of every envelope save.
#[derive(Clone, Copy)]
pub enum WriteBudget<'a> {
    /// A step of a request before its stream starts (a claim, a reconciliation), raced against
    /// the request's deadline. A claim the deadline overtakes is not simply dropped: it may land
    /// a moment later, and a lease no turn runs under would keep the session busy until it
    /// lapses. So its answer is still awaited within the cleanup budget, and a claim that went
    /// through is abandoned before the refusal goes out.
    Deadline(&'a Interrupt),
    /// A cleanup step (a release, a lease taken back, an abandon): a budget of its own, never the
    /// deadline, which has often fired already (that is why cleanup runs): a store that honours
    /// a fired token would refuse the very save that releases the lease.
    Cleanup,
    /// A cleanup step as [`WriteBudget::Cleanup`], with a token it shares with the steps run
    /// before it under the same [`CleanupTokens`] (a turn's final memory save and release).
    CleanupAfter(&'a CleanupTokens),
    /// The host's own call (`resumeChatSession`): bounded by the host's signal only.
    Host(&'a CancelToken),
}

/// What a sent write came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Saved {
    /// Stored: the compare-and-set found the expected cursor.
    Written,
    /// Another writer saved first; nothing changed. Never retried here.
    Conflict,
}

/// Why a write did not get an answer, with its cause.
#[derive(Clone, Debug, PartialEq)]
pub enum SaveFailure {
    /// The decided write broke an invariant ([`check_write`]); nothing was sent. A programmer
    /// error: the client gets an internal diagnostic, the operator the violation.
    Broken(WriteViolation),
    /// The store failed (unreachable, threw).
    Store(PortError),
    /// A cleanup write ran out of its budget.
    BudgetSpent,
    /// The request's deadline (or its client) overtook the write; `store` is the store's failure
    /// when it answered with one after the deadline fired.
    Overtaken {
        cause: Option<Cause>,
        store: Option<PortError>,
    },
}

impl SaveFailure {
    /// The failure for the operator (`onError`), if there is one to tell: everything but a
    /// plain deadline.
    pub fn fault(&self) -> Option<Fault> {
        let error = match self {
            SaveFailure::Broken(violation) => PortError::new(violation.to_string()),
            SaveFailure::Store(error) => error.clone(),
            SaveFailure::BudgetSpent => {
                PortError::new("session.save ran out of its cleanup budget")
            }
            SaveFailure::Overtaken { store, .. } => store.clone()?,
        };
        Some(Fault::new(Stage::SessionSave, error))
    }

    /// What the client is told before its stream started: 408 / 499 for the deadline, else
    /// internal; the fault goes along for the operator.
    pub fn into_refusal(self) -> Refusal {
        let fault = self.fault();
        let error = match self {
            SaveFailure::Overtaken { cause, .. } => {
                cause.map_or(BoundaryError::Cancelled, |c| c.refusal())
            }
            _ => BoundaryError::Internal,
        };
        Refusal {
            error,
            replayed: None,
            fault,
        }
    }

    /// Tells the operator (a failure nobody else answers for: a cleanup write).
    pub fn report(&self, faults: &dyn FaultReport) {
        if let Some(fault) = self.fault() {
            faults.report(&fault);
        }
    }
}

/// Checks `write`, sends it within `budget` and answers with what happened (see the module doc).
pub async fn commit_session(
    ports: &SessionPorts<'_>,
    write: SessionWrite,
    budget: WriteBudget<'_>,
) -> Result<Saved, SaveFailure> {
    let value = check_write(&write).map_err(SaveFailure::Broken)?;
    let expected = write.expected_cursor;
    match budget {
        WriteBudget::Cleanup => within_cleanup(ports, None, &value, expected).await,
        WriteBudget::CleanupAfter(tokens) => {
            within_cleanup(ports, Some(tokens), &value, expected).await
        }
        WriteBudget::Host(token) => answered(ports.storage.save(&value, expected, token).await),
        WriteBudget::Deadline(deadline) => {
            let mut save = Box::pin(ports.storage.save(&value, expected, deadline.token()));
            match race(save.as_mut(), fired(deadline.token())).await {
                Either::Left(Err(error)) if deadline.is_fired() => Err(SaveFailure::Overtaken {
                    cause: deadline.cause(),
                    store: Some(error),
                }),
                Either::Left(answer) => answered(answer),
                Either::Right(()) => {
                    if let WriteKind::Claim { .. } = write.kind {
                        let late = Budget::new(ports.sleep, ports.cleanup_budget_ms);
                        if let Some(Ok(true)) = late.run(save).await {
                            abandon_claim(ports, &write.next).await;
                        }
                    }
                    Err(SaveFailure::Overtaken {
                        cause: deadline.cause(),
                        store: None,
                    })
                }
            }
        }
    }
}

/// Gives a claimed lease up without running its turn (a failure before the stream started, or
/// a claim that landed after its deadline): the lease is cleared at once and the turn id stays
/// free for a retry; a continuation's claimed confirmation goes back to `pending` in the same
/// write (nothing ran, so the decision may be sent again). Within the cleanup budget; a failure
/// is reported, and the lease then lapses at its expiry (a continuation's record stays in its
/// processing state, for reconciliation).
pub(crate) async fn abandon_claim(ports: &SessionPorts<'_>, claimed: &SessionEnvelope) {
    give_up_claim(ports, claimed, GiveUp::Abandon).await;
}

/// How a claim is given up before its turn was acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GiveUp {
    /// Nothing was written for the turn: the lease is cleared ([`HeldLease::abandon`]).
    Abandon,
    /// The turn may have saved its user message: the lease is kept, lapsed
    /// ([`HeldLease::lapse`]), so the next claim re-syncs the log.
    Lapse,
}

/// [`abandon_claim`], or its [`GiveUp::Lapse`] form.
pub(crate) async fn give_up_claim(
    ports: &SessionPorts<'_>,
    claimed: &SessionEnvelope,
    how: GiveUp,
) {
    let Some(active) = &claimed.active_turn else {
        return;
    };
    let held = HeldLease::new(&active.turn_id, claimed.clone());
    let at_ms = ports.clock.now_ms();
    let decided = match how {
        GiveUp::Abandon => held.abandon(at_ms),
        GiveUp::Lapse => held.lapse(at_ms),
    };
    let Ok(write) = decided else {
        return;
    };
    // Not through `commit_session` (which calls this): the same check, the same cleanup budget.
    let sent = match check_write(&write) {
        Ok(value) => within_cleanup(ports, None, &value, write.expected_cursor).await,
        Err(violation) => Err(SaveFailure::Broken(violation)),
    };
    if let Err(failure) = sent {
        failure.report(ports.faults);
    }
}

/// Sends `value` within a cleanup budget: one of `shared` when given (its token shared with the
/// cleanup steps before it), else a budget with a token of its own.
async fn within_cleanup(
    ports: &SessionPorts<'_>,
    shared: Option<&CleanupTokens>,
    value: &serde_json::Value,
    expected: Option<u64>,
) -> Result<Saved, SaveFailure> {
    let budget = match shared {
        Some(tokens) => tokens.budget(ports.sleep, ports.cleanup_budget_ms),
        None => Budget::new(ports.sleep, ports.cleanup_budget_ms),
    };
    match budget
        .run(ports.storage.save(value, expected, budget.token()))
        .await
    {
        Some(answer) => answered(answer),
        None => Err(SaveFailure::BudgetSpent),
    }
}

fn answered(answer: Result<bool, PortError>) -> Result<Saved, SaveFailure> {
    match answer {
        Ok(true) => Ok(Saved::Written),
        Ok(false) => Ok(Saved::Conflict),
        Err(error) => Err(SaveFailure::Store(error)),
    }
}
