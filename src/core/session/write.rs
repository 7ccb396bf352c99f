//! A save of the session envelope as the core decided it, and the invariants it must keep before
//! it is sent (TigerBeetle style: assert before a write, so a broken invariant never becomes a
//! stored one).
//!
//! Every transition of this module (claim, release, abandon, settle, reconcile, cursor advance)
//! returns the envelope to save; the caller wraps it in a [`SessionWrite`] with the envelope it
//! was decided on, and `turnkeep_turn::commit::commit_session` is the one function that writes
//! it. [`check_write`] is what that function asserts first. A [`WriteViolation`] is a
//! programmer error (a transition or its caller is wrong), never the client's or the store's:
//! the write is refused and the operator is told which invariant broke.

use serde_json::Value;

use super::decode::decode_session_snapshot;
use super::envelope::SessionEnvelope;

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
    /// The lease is not touched (a plain cursor advance).
    Keep,
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
        }
    }
}

impl std::error::Error for WriteViolation {}

/// Checks `write` before it is sent and returns the JSON value to store: the base and the
/// expected cursor agree, the cursor advances by one, and the envelope round-trips.
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
    round_trip(next)
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
