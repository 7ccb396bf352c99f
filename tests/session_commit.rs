//! The one commit site of the session envelope (`turn::commit_session`): what it refuses before
//! anything is sent (each invariant of `core::session::check_write` fed a write that breaks it:
//! the cursor it expects, the cursor advancing by one, the identity, the decision's time, one
//! lease holder, the envelope's round trip), and how each budget ends a write (the store's failure,
//! a cleanup budget spent, a deadline that overtakes a claim, which is then abandoned if it
//! landed), each failure with its cause for the operator.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use std::cell::Cell;
use std::future::Future;
use std::task::{Context, Poll, Waker};

use futures::executor::block_on;
use serde_json::Value;
use turnkeep::core::protocol::BoundaryError;
use turnkeep::core::session::{
    claim_turn, decode_session_snapshot, new_session, ActiveTurn, ClaimDecision, SessionEnvelope,
    SessionIdentity, SessionWrite, TerminalTurn, TurnOutcome, WriteKind, WriteViolation,
};
use turnkeep::ports::chat::{Clock, Sleep};
use turnkeep::ports::session::SessionStorage;
use turnkeep::ports::{CancelToken, LocalFuture, PortError};
use turnkeep::storage::MemorySessionStorage;
use turnkeep::turn::{
    commit_session, Cause, IgnoreFaults, Interrupt, SaveFailure, Saved, SessionPorts, Stage,
    WriteBudget,
};

const NOW_MS: u64 = 1_783_738_800_000;
const LEASE_MS: u64 = 45_000;

fn identity() -> SessionIdentity {
    SessionIdentity {
        session_id: "s1".into(),
        definition_id: "d1".into(),
        definition_revision: 1,
        conversation: None,
    }
}

/// How the store answers a save.
#[derive(Clone, Copy, PartialEq)]
enum Answer {
    /// At once, as the memory store does.
    AtOnce,
    /// With an error.
    Fails,
    /// Never.
    Never,
    /// After `deadline` fired: the first poll fires it, the second writes.
    AfterDeadline,
}

/// The memory store behind a chosen answer, counting the saves that reached it.
struct Store<'d> {
    inner: MemorySessionStorage,
    answer: Answer,
    deadline: &'d Interrupt,
    saves: Cell<u32>,
}

impl<'d> Store<'d> {
    fn new(answer: Answer, deadline: &'d Interrupt) -> Self {
        Self {
            inner: MemorySessionStorage::new(),
            answer,
            deadline,
            saves: Cell::new(0),
        }
    }

    fn stored(&self) -> Option<SessionEnvelope> {
        let value = block_on(self.inner.load("s1", &CancelToken::new())).expect("load");
        value.map(|v| decode_session_snapshot(&v).expect("stored envelope decodes"))
    }
}

impl SessionStorage for Store<'_> {
    fn load<'a>(
        &'a self,
        id: &'a str,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Option<Value>, PortError>> {
        self.inner.load(id, cancel)
    }

    fn save<'a>(
        &'a self,
        snapshot: &'a Value,
        expected: Option<u64>,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<bool, PortError>> {
        self.saves.set(self.saves.get() + 1);
        let mut polled = false;
        let answer = self.answer;
        Box::pin(std::future::poll_fn(move |cx| match answer {
            Answer::AtOnce => Poll::Ready(at_once(self.inner.save(snapshot, expected, cancel))),
            Answer::Fails => Poll::Ready(Err(PortError::new("the store is unreachable"))),
            Answer::Never => Poll::Pending,
            Answer::AfterDeadline if !polled => {
                polled = true;
                self.deadline.fire(Cause::Timeout);
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Answer::AfterDeadline => {
                Poll::Ready(at_once(self.inner.save(snapshot, expected, cancel)))
            }
        }))
    }
}

/// The answer of a future that is ready at its first poll (the memory store's), from inside
/// another future's poll.
fn at_once<T>(future: LocalFuture<'_, T>) -> T {
    let mut future = future;
    let mut cx = Context::from_waker(Waker::noop());
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(value) => value,
        Poll::Pending => panic!("the memory store answers at once"),
    }
}

struct At(u64);
impl Clock for At {
    fn now_ms(&self) -> u64 {
        self.0
    }
}

/// A sleep over at once: a budget raced against a pending save runs out.
struct AtOnce;
impl Sleep for AtOnce {
    fn sleep(&self, _ms: u64) -> LocalFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }
}

/// A sleep that never ends: no budget runs out.
struct Never;
impl Sleep for Never {
    fn sleep(&self, _ms: u64) -> LocalFuture<'_, ()> {
        Box::pin(std::future::pending())
    }
}

fn ports<'a>(store: &'a Store<'_>, sleep: &'a dyn Sleep) -> SessionPorts<'a> {
    SessionPorts {
        storage: store,
        clock: &At(NOW_MS + 1),
        sleep,
        faults: &IgnoreFaults,
        cleanup_budget_ms: 1_000,
    }
}

/// The first claim of a new session: decided on the session no save created yet.
fn first_claim() -> SessionWrite {
    let base = new_session(&identity(), NOW_MS);
    let Ok(ClaimDecision::Claimed(next)) = claim_turn(&base, "t1", NOW_MS, LEASE_MS) else {
        panic!("claim")
    };
    let kind = WriteKind::Claim {
        turn_id: "t1".into(),
    };
    SessionWrite::on_loaded(kind, &base, None, next, NOW_MS)
}

fn commit<F: Future>(future: F) -> F::Output {
    block_on(future)
}

/// (what breaks the write, the violation `check_write` names). Each is refused before anything
/// reaches the store, and answered as an internal error with the violation for the operator.
#[test]
fn a_broken_write_is_refused_before_it_is_sent() {
    type Break = fn(&mut SessionWrite);
    let cases: [(&str, Break, WriteViolation); 15] = [
        (
            "expects another cursor than its base's",
            |w| w.expected_cursor = Some(7),
            WriteViolation::Fence {
                expected: Some(7),
                base_cursor: 0,
            },
        ),
        (
            "creates a session on a stored base",
            |w| w.base.cursor = 3,
            WriteViolation::Fence {
                expected: None,
                base_cursor: 3,
            },
        ),
        (
            "does not advance the cursor",
            |w| w.next.cursor = 0,
            WriteViolation::CursorNotAdvanced { from: 0, to: 0 },
        ),
        (
            "advances the cursor by two",
            |w| w.next.cursor = 2,
            WriteViolation::CursorNotAdvanced { from: 0, to: 2 },
        ),
        (
            "holds an envelope that does not decode",
            |w| {
                w.next.terminal_turns = vec![TerminalTurn {
                    turn_id: "not a safe id".into(),
                    outcome: TurnOutcome::Completed,
                }]
            },
            WriteViolation::RoundTrip {
                detail: String::new(),
            },
        ),
        (
            "moves the session to another id",
            |w| w.next.session_id = "s2".into(),
            WriteViolation::IdentityChanged,
        ),
        (
            "changes the definition's revision",
            |w| w.next.definition_revision = 2,
            WriteViolation::IdentityChanged,
        ),
        (
            "is stamped at another time than it was decided",
            |w| w.at_ms += 5,
            WriteViolation::NotStampedAtDecision {
                updated_at: "2026-07-11T03:00:00.000Z".into(),
                at_ms: NOW_MS + 5,
            },
        ),
        (
            "claims a turn that finished",
            |w| {
                w.base.terminal_turns = vec![TerminalTurn {
                    turn_id: "t1".into(),
                    outcome: TurnOutcome::Completed,
                }]
            },
            WriteViolation::ClaimOfFinishedTurn {
                turn_id: "t1".into(),
            },
        ),
        (
            "claims over another turn's live lease (two holders)",
            |w| {
                w.base.active_turn = Some(ActiveTurn {
                    turn_id: "other".into(),
                    expires_at: NOW_MS + 1,
                })
            },
            WriteViolation::ClaimOverLiveLease {
                turn_id: "t1".into(),
                holder: "other".into(),
            },
        ),
        (
            "claims and leaves its turn without a live lease",
            |w| w.next.active_turn.as_mut().expect("lease").expires_at = NOW_MS,
            WriteViolation::ClaimNotHeld {
                turn_id: "t1".into(),
            },
        ),
        (
            "releases its turn but keeps the lease",
            |w| {
                w.kind = WriteKind::Release {
                    turn_id: "t1".into(),
                };
                w.base.active_turn = w.next.active_turn.clone();
            },
            WriteViolation::LeaseChanged {
                kind: WriteKind::Release {
                    turn_id: "t1".into(),
                },
            },
        ),
        (
            "gives its lease up lapsed but leaves it live",
            |w| {
                w.kind = WriteKind::Lapse {
                    turn_id: "t1".into(),
                };
                w.base.active_turn = w.next.active_turn.clone();
            },
            WriteViolation::LeaseChanged {
                kind: WriteKind::Lapse {
                    turn_id: "t1".into(),
                },
            },
        ),
        (
            "gives its lease up lapsed but clears it",
            |w| {
                w.kind = WriteKind::Lapse {
                    turn_id: "t1".into(),
                };
                w.base.active_turn = w.next.active_turn.clone();
                w.next.active_turn = None;
            },
            WriteViolation::LeaseChanged {
                kind: WriteKind::Lapse {
                    turn_id: "t1".into(),
                },
            },
        ),
        (
            "grants a lease in a plain save",
            |w| w.kind = WriteKind::Keep,
            WriteViolation::LeaseChanged {
                kind: WriteKind::Keep,
            },
        ),
    ];
    for (label, breaks, expected) in cases {
        let deadline = Interrupt::new();
        let store = Store::new(Answer::AtOnce, &deadline);
        let mut write = first_claim();
        breaks(&mut write);
        let got = commit(commit_session(
            &ports(&store, &Never),
            write,
            WriteBudget::Cleanup,
        ));
        let Err(SaveFailure::Broken(violation)) = &got else {
            panic!("{label}: {got:?}")
        };
        match (violation, &expected) {
            (WriteViolation::RoundTrip { detail }, WriteViolation::RoundTrip { .. }) => {
                assert!(detail.contains("terminalTurns"), "{label}: {detail}")
            }
            _ => assert_eq!(violation, &expected, "{label}"),
        }
        assert_eq!(store.saves.get(), 0, "{label}: nothing reached the store");
        let refusal = got.unwrap_err().into_refusal();
        assert_eq!(refusal.error, BoundaryError::Internal, "{label}");
        let fault = refusal.fault.expect("the operator hears of it");
        assert_eq!(fault.stage, Stage::SessionSave, "{label}");
        assert!(
            fault.error.message.contains("an invariant broke"),
            "{label}: {}",
            fault.error.message
        );
    }
    // The same write unbroken goes through.
    let deadline = Interrupt::new();
    let store = Store::new(Answer::AtOnce, &deadline);
    let got = commit(commit_session(
        &ports(&store, &Never),
        first_claim(),
        WriteBudget::Cleanup,
    ));
    assert_eq!(got, Ok(Saved::Written));
    assert_eq!(store.stored().map(|e| e.cursor), Some(1));
}

#[test]
fn a_lost_race_is_a_conflict_and_a_failed_store_keeps_its_cause() {
    let deadline = Interrupt::new();
    let store = Store::new(Answer::AtOnce, &deadline);
    let session = ports(&store, &Never);
    assert_eq!(
        commit(commit_session(
            &session,
            first_claim(),
            WriteBudget::Cleanup
        )),
        Ok(Saved::Written)
    );
    // The same create again: a record exists now.
    assert_eq!(
        commit(commit_session(
            &session,
            first_claim(),
            WriteBudget::Cleanup
        )),
        Ok(Saved::Conflict)
    );
    let failing = Store::new(Answer::Fails, &deadline);
    let got = commit(commit_session(
        &ports(&failing, &Never),
        first_claim(),
        WriteBudget::Cleanup,
    ));
    let refusal = got.expect_err("failed").into_refusal();
    assert_eq!(refusal.error, BoundaryError::Internal);
    assert_eq!(
        refusal.fault.map(|f| f.error.message),
        Some("the store is unreachable".into())
    );
}

#[test]
fn a_cleanup_write_that_outlives_its_budget_is_reported() {
    let deadline = Interrupt::new();
    let store = Store::new(Answer::Never, &deadline);
    let got = commit(commit_session(
        &ports(&store, &AtOnce),
        first_claim(),
        WriteBudget::Cleanup,
    ));
    assert_eq!(got, Err(SaveFailure::BudgetSpent));
    let fault = got.unwrap_err().fault().expect("reported");
    assert!(fault.error.message.contains("cleanup budget"));
}

/// A claim the deadline overtakes is awaited within the cleanup budget; when it landed, it is
/// abandoned (no lease outlives a refused request) and the client gets the deadline's answer.
/// A write that is not a claim is dropped at once.
#[test]
fn a_claim_overtaken_by_the_deadline_is_abandoned_when_it_lands() {
    let deadline = Interrupt::new();
    let store = Store::new(Answer::AfterDeadline, &deadline);
    let got = commit(commit_session(
        &ports(&store, &Never),
        first_claim(),
        WriteBudget::Deadline(&deadline),
    ));
    let refusal = got.expect_err("overtaken").into_refusal();
    assert_eq!(refusal.error, BoundaryError::Timeout);
    assert_eq!(refusal.fault, None, "a deadline is no fault of the store");
    let stored = store.stored().expect("the claim landed");
    assert_eq!(stored.cursor, 2, "the claim, then its abandon");
    assert_eq!(stored.active_turn, None, "no lease is left behind");
    assert!(stored.terminal_turns.is_empty(), "the turn id stays free");

    let deadline = Interrupt::new();
    let store = Store::new(Answer::AfterDeadline, &deadline);
    let mut write = first_claim();
    write.kind = WriteKind::Keep;
    write.next.active_turn = None;
    let got = commit(commit_session(
        &ports(&store, &Never),
        write,
        WriteBudget::Deadline(&deadline),
    ));
    assert!(matches!(got, Err(SaveFailure::Overtaken { .. })));
    assert_eq!(store.stored(), None, "not awaited: the write was dropped");
}
