//! The client-side snapshot cursor (AgentsKit `createTurnSnapshotCursor`, ADR-0010).
//! It fixes one session and lets through only snapshots that move that session forward:
//! the first valid snapshot whatever its sequence, then strictly greater sequences only.
//! Duplicates, stale snapshots, diagnostics, other sessions and undecodable input are inert.

use serde_json::Value;

use super::decode::{decode_turn_event, decode_turn_event_text};
use super::event::{EventBody, TurnEvent};
use super::field::{FieldError, MUST_BE_SAFE_ID};
use crate::checks;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnSnapshotCursor {
    session_id: String,
    last_sequence: Option<u64>,
}

/// What the cursor would do with one input (pure; see [`TurnSnapshotCursor::decide`]).
#[derive(Clone, Debug, PartialEq)]
pub enum CursorDecision {
    Accept(Box<TurnEvent>),
    Ignore(IgnoreReason),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IgnoreReason {
    /// Not a valid turn event.
    Undecodable,
    /// A valid event that is not `server.turn.snapshot` (diagnostics never move the cursor).
    NotSnapshot,
    /// A snapshot of another session.
    OtherSession,
    /// A sequence at or below the last accepted one.
    NotNewer,
}

impl TurnSnapshotCursor {
    /// A cursor for `session_id`, which must be a SafeId.
    pub fn new(session_id: &str) -> Result<Self, FieldError> {
        if !checks::is_safe_id(session_id) {
            return Err(FieldError::new("sessionId", MUST_BE_SAFE_ID));
        }
        Ok(Self {
            session_id: session_id.to_owned(),
            last_sequence: None,
        })
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The sequence of the last accepted snapshot; `None` before the first.
    pub fn last_sequence(&self) -> Option<u64> {
        self.last_sequence
    }

    /// Decides without moving the cursor.
    pub fn decide(&self, v: &Value) -> CursorDecision {
        match decode_turn_event(v) {
            Ok(event) => self.decide_event(event),
            Err(_) => CursorDecision::Ignore(IgnoreReason::Undecodable),
        }
    }

    /// Decides on an already-decoded event without moving the cursor.
    pub(crate) fn decide_event(&self, event: TurnEvent) -> CursorDecision {
        if !matches!(event.body, EventBody::Snapshot(_)) {
            return CursorDecision::Ignore(IgnoreReason::NotSnapshot);
        }
        if event.envelope.session_id != self.session_id {
            return CursorDecision::Ignore(IgnoreReason::OtherSession);
        }
        if self
            .last_sequence
            .is_some_and(|last| event.envelope.sequence <= last)
        {
            return CursorDecision::Ignore(IgnoreReason::NotNewer);
        }
        CursorDecision::Accept(Box::new(event))
    }

    /// Decides and commits: returns the snapshot event when accepted.
    pub fn accept(&mut self, v: &Value) -> Option<TurnEvent> {
        self.commit(self.decide(v))
    }

    /// [`accept`](Self::accept) for JSON text (one NDJSON line).
    pub fn accept_text(&mut self, text: &str) -> Option<TurnEvent> {
        let decision = match decode_turn_event_text(text) {
            Ok(event) => self.decide_event(event),
            Err(_) => CursorDecision::Ignore(IgnoreReason::Undecodable),
        };
        self.commit(decision)
    }

    /// [`accept`](Self::accept) for an already-decoded event.
    pub fn accept_event(&mut self, event: TurnEvent) -> Option<TurnEvent> {
        self.commit(self.decide_event(event))
    }

    /// The one place the cursor moves. Private: a decision is only committed right after it
    /// was made against the current state.
    fn commit(&mut self, decision: CursorDecision) -> Option<TurnEvent> {
        match decision {
            CursorDecision::Accept(event) => {
                self.last_sequence = Some(event.envelope.sequence);
                Some(*event)
            }
            CursorDecision::Ignore(_) => None,
        }
    }
}
