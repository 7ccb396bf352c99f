//! A save of the session envelope as the core decided it, and the invariants a write must keep
//! before it is sent and a read after it returned (assert before a write and after a read, so a
//! broken invariant never becomes a stored one).
//!
//! Every transition of this module (claim, release, abandon, settle, reconcile, cursor advance)
//! returns the envelope to save; the caller wraps it in a [`SessionWrite`] with the envelope it
//! was decided on, and `turnkeep_turn::commit::commit_session` is the one function that writes
//! it. [`check_write`] is what that function asserts first; [`check_reread`] is what a request
//! that loads the session more than once asserts after each load. A [`WriteViolation`] or
//! [`ReadViolation`] is a programmer error (a transition, its caller or a non-conformant store
//! is wrong), never the client's: the write is not sent, the client gets an internal
//! diagnostic, and the operator is told which invariant broke.

use serde_json::Value;

use super::decode::decode_session_snapshot;
use super::envelope::{ActiveTurn, SessionEnvelope};
use crate::checks::format_iso_millis_at;

/// What a write does with the turn lease: the invariants it is checked against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteKind {
    /// `turn_id` takes the lease (a submission's claim, a confirmation's claim, a lapsed lease
    /// taken back by its own turn): afterwards it holds a live lease, and before it no other
    /// turn held a live one.
    Claim { turn_id: String },
    /// `turn_id` gives the lease up (a release, an abandon, a reconciliation of its record):
    /// its own lease is cleared, another turn's is left as it is.
    Release { turn_id: String },
    /// `turn_id` gives its lease up lapsed ([`super::lapse_turn`]): its own lease keeps its turn
    /// id and expires by the write's instant; another turn's is left as it is.
    Lapse { turn_id: String },
    /// The lease is not touched (a plain cursor advance).
    Keep,
    /// `turn_id` records its journal: it holds a live lease, which is not touched, and the
    /// journal stored is its own.
    Record { turn_id: String },
}

/// One save of the session envelope, as decided: the only value the commit writes.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionWrite {
    pub kind: WriteKind,
    /// The envelope the transition was decided on: as loaded, or as this process's own last
    /// write saved it (a lease holder never reloads: that write's cursor is its fence).
    pub base: SessionEnvelope,
    /// The cursor the compare-and-set expects: `Some(base.cursor)`, or `None` when no save has
    /// created the session yet (the base is then a new session, at cursor 0).
    pub expected_cursor: Option<u64>,
    /// The envelope to store.
    pub next: SessionEnvelope,
    /// When the transition was decided (`now_ms`): `next.updatedAt`, and the instant a lease's
    /// liveness is judged at.
    pub at_ms: u64,
}

impl SessionWrite {
    /// A write decided on `base` as this process holds it (its own last write, or a load that
    /// found a stored record): the compare-and-set expects `base.cursor`.
    pub fn on_stored(
        kind: WriteKind,
        base: &SessionEnvelope,
        next: SessionEnvelope,
        at_ms: u64,
    ) -> Self {
        Self {
            kind,
            expected_cursor: Some(base.cursor),
            base: base.clone(),
            next,
            at_ms,
        }
    }

    /// A write decided on a session as loaded: `expected_cursor` is what the load said
    /// (`Resumed::expected_cursor`, `None` for a session never saved).
    pub fn on_loaded(
        kind: WriteKind,
        base: &SessionEnvelope,
        expected_cursor: Option<u64>,
        next: SessionEnvelope,
        at_ms: u64,
    ) -> Self {
        Self {
            kind,
            expected_cursor,
            base: base.clone(),
            next,
            at_ms,
        }
    }
}

/// An invariant a write broke (see the module doc). `Display` is the operator's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteViolation {
    /// The encoded envelope does not decode back to the same envelope (what would be stored is
    /// not what was decided).
    RoundTrip { detail: String },
    /// The expected cursor is not the base's (or a create's base is not a new session).
    Fence {
        expected: Option<u64>,
        base_cursor: u64,
    },
    /// The save does not move the cursor exactly one past the base's.
    CursorNotAdvanced { from: u64, to: u64 },
    /// The save changes whose session it is (session id, definition id or revision).
    IdentityChanged,
    /// `updatedAt` is not the decision's time.
    NotStampedAtDecision { updated_at: String, at_ms: u64 },
    /// A claim of a turn the terminal history holds: a finished turn never runs again.
    ClaimOfFinishedTurn { turn_id: String },
    /// A claim over a live lease of another turn: two turns would both hold it.
    ClaimOverLiveLease { turn_id: String, holder: String },
    /// A claim after which its turn does not hold a live lease.
    ClaimNotHeld { turn_id: String },
    /// A release or a plain save that changes a lease it does not own.
    LeaseChanged { kind: WriteKind },
}

impl std::fmt::Display for WriteViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("session write refused, an invariant broke: ")?;
        match self {
            Self::RoundTrip { detail } => {
                write!(f, "the envelope does not decode to itself ({detail})")
            }
            Self::Fence {
                expected,
                base_cursor,
            } => write!(
                f,
                "the save expects cursor {expected:?} but was decided on cursor {base_cursor}"
            ),
            Self::CursorNotAdvanced { from, to } => {
                write!(f, "the cursor moves from {from} to {to}, not by one")
            }
            Self::IdentityChanged => f.write_str("the save changes the session's identity"),
            Self::NotStampedAtDecision { updated_at, at_ms } => write!(
                f,
                "updatedAt {updated_at} is not the decision's time ({at_ms} ms)"
            ),
            Self::ClaimOfFinishedTurn { turn_id } => {
                write!(f, "turn {turn_id} is claimed although it finished")
            }
            Self::ClaimOverLiveLease { turn_id, holder } => write!(
                f,
                "turn {turn_id} is claimed while turn {holder} holds a live lease"
            ),
            Self::ClaimNotHeld { turn_id } => {
                write!(
                    f,
                    "turn {turn_id} does not hold a live lease after its claim"
                )
            }
            Self::LeaseChanged { kind } => {
                write!(f, "a {kind:?} save changes a lease it does not own")
            }
        }
    }
}

impl std::error::Error for WriteViolation {}

/// Checks `write` before it is sent and returns the JSON value to store: the base and the
/// expected cursor agree, the cursor advances by one, the identity is kept, the envelope is
/// stamped with the decision's time and round-trips, and the lease moves only as the write's
/// kind allows (at most one turn holds a live lease).
pub fn check_write(write: &SessionWrite) -> Result<Value, WriteViolation> {
    let (base, next) = (&write.base, &write.next);
    let fenced = match write.expected_cursor {
        Some(expected) => expected == base.cursor,
        None => base.cursor == 0,
    };
    if !fenced {
        return Err(WriteViolation::Fence {
            expected: write.expected_cursor,
            base_cursor: base.cursor,
        });
    }
    if base.cursor.checked_add(1) != Some(next.cursor) {
        return Err(WriteViolation::CursorNotAdvanced {
            from: base.cursor,
            to: next.cursor,
        });
    }
    let same_identity = base.session_id == next.session_id
        && base.definition_id == next.definition_id
        && base.definition_revision == next.definition_revision;
    if !same_identity {
        return Err(WriteViolation::IdentityChanged);
    }
    if next.updated_at != format_iso_millis_at(write.at_ms) {
        return Err(WriteViolation::NotStampedAtDecision {
            updated_at: next.updated_at.clone(),
            at_ms: write.at_ms,
        });
    }
    check_lease(write)?;
    round_trip(next)
}

/// The lease rules of [`WriteKind`].
fn check_lease(write: &SessionWrite) -> Result<(), WriteViolation> {
    let (base, next) = (&write.base, &write.next);
    let live = |lease: &Option<ActiveTurn>| {
        lease
            .as_ref()
            .filter(|a| a.expires_at > write.at_ms)
            .map(|a| a.turn_id.clone())
    };
    // Whether the base's lease, live or lapsed, is `turn_id`'s.
    let owns = |turn_id: &str| {
        base.active_turn
            .as_ref()
            .is_some_and(|a| a.turn_id == turn_id)
    };
    match &write.kind {
        WriteKind::Claim { turn_id } => {
            if base.terminal_turn(turn_id).is_some() {
                return Err(WriteViolation::ClaimOfFinishedTurn {
                    turn_id: turn_id.clone(),
                });
            }
            if let Some(holder) = live(&base.active_turn).filter(|h| h != turn_id) {
                return Err(WriteViolation::ClaimOverLiveLease {
                    turn_id: turn_id.clone(),
                    holder,
                });
            }
            if live(&next.active_turn).as_ref() != Some(turn_id) {
                return Err(WriteViolation::ClaimNotHeld {
                    turn_id: turn_id.clone(),
                });
            }
            Ok(())
        }
        WriteKind::Release { turn_id } => {
            let kept = if owns(turn_id) {
                next.active_turn.is_none()
            } else {
                next.active_turn == base.active_turn
            };
            kept.then_some(()).ok_or(WriteViolation::LeaseChanged {
                kind: write.kind.clone(),
            })
        }
        WriteKind::Lapse { turn_id } => {
            let kept = if owns(turn_id) {
                next.active_turn
                    .as_ref()
                    .is_some_and(|a| a.turn_id == *turn_id && live(&next.active_turn).is_none())
            } else {
                next.active_turn == base.active_turn
            };
            kept.then_some(()).ok_or(WriteViolation::LeaseChanged {
                kind: write.kind.clone(),
            })
        }
        WriteKind::Record { turn_id } => {
            let holds = live(&base.active_turn).as_ref() == Some(turn_id)
                && next.active_turn == base.active_turn;
            let own = next.turn_journal.as_ref().map(|j| &j.turn_id) == Some(turn_id);
            (holds && own)
                .then_some(())
                .ok_or(WriteViolation::LeaseChanged {
                    kind: write.kind.clone(),
                })
        }
        WriteKind::Keep => (next.active_turn == base.active_turn).then_some(()).ok_or(
            WriteViolation::LeaseChanged {
                kind: WriteKind::Keep,
            },
        ),
    }
}

/// The value to store, once it decodes back to `next`.
fn round_trip(next: &SessionEnvelope) -> Result<Value, WriteViolation> {
    let value = next.to_value();
    match decode_session_snapshot(&value) {
        Ok(decoded) if decoded == *next => Ok(value),
        Ok(_) => Err(WriteViolation::RoundTrip {
            detail: "it decodes to another envelope".into(),
        }),
        Err(e) => Err(WriteViolation::RoundTrip {
            detail: e.to_string(),
        }),
    }
}

/// An invariant a read broke: what the store returned cannot follow what this request saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadViolation {
    /// The stored cursor went back. A compare-and-set store never moves a record's cursor back,
    /// so a lower one means it lost acknowledged writes (or answers for another record), and a
    /// write decided on it could overwrite newer state.
    CursorWentBack { seen: u64, loaded: u64 },
}

impl std::fmt::Display for ReadViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::CursorWentBack { seen, loaded } => write!(
                f,
                "session read refused, an invariant broke: the stored cursor went back from {seen} to {loaded}"
            ),
        }
    }
}

impl std::error::Error for ReadViolation {}

/// Checks a session loaded again within one request: `loaded` (the stored cursor, `None` when
/// there is no record) against `seen`, the highest cursor the request's earlier loads returned.
/// Returns what the next load is checked against. A record that is gone is not a step back: its
/// host deleted it, and what is saved next starts a new session from cursor 0.
pub fn check_reread(seen: Option<u64>, loaded: Option<u64>) -> Result<Option<u64>, ReadViolation> {
    match (seen, loaded) {
        (Some(seen), Some(loaded)) if loaded < seen => {
            Err(ReadViolation::CursorWentBack { seen, loaded })
        }
        (_, loaded) => Ok(loaded),
    }
}
