//! Turn events: the envelope every event carries and the three v1 event bodies.
//! There are no confirmation, resume or ack events in v1 (turnkeep adds, additively, the
//! request `client.confirmation.resolve` (`request.rs`) and a snapshot's `confirmations`).

use serde::{Deserialize, Serialize};

use super::diagnostic::TurnDiagnostic;
use super::message::Message;
use crate::session::Confirmation;

/// The `protocol` literal of every turn event.
pub const TURN_PROTOCOL: &str = "agentskit.chat.turn";
/// The only `version` this codec speaks. Versions are never coerced (`"1"` is not `1`).
pub const TURN_PROTOCOL_VERSION: u32 = 1;

/// One turn event: envelope plus body.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnEvent {
    pub envelope: Envelope,
    pub body: EventBody,
}

/// Fields common to every event (after `protocol` and `version`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Envelope {
    /// SafeId.
    pub event_id: String,
    /// SafeId.
    pub session_id: String,
    /// SafeId.
    pub turn_id: String,
    /// Safe integer >= 0; strictly increasing across a session's snapshots (gaps allowed).
    pub sequence: u64,
    /// Timestamp with offset; turnkeep writes `toISOString()` form.
    pub emitted_at: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum EventBody {
    /// `client.turn.submit`: `input` is non-blank (JavaScript `trim()` semantics).
    Submit { input: String },
    /// `server.turn.snapshot`: a full projection of the conversation, not a delta.
    Snapshot(SnapshotPayload),
    /// `server.turn.diagnostic`: an in-stream failure; the stream closes after it.
    Diagnostic(TurnDiagnostic),
}

/// The `event` discriminator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    Submit,
    Snapshot,
    Diagnostic,
}

impl EventKind {
    pub const ALL: [EventKind; 3] = [Self::Submit, Self::Snapshot, Self::Diagnostic];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Submit => "client.turn.submit",
            Self::Snapshot => "server.turn.snapshot",
            Self::Diagnostic => "server.turn.diagnostic",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl EventBody {
    pub fn kind(&self) -> EventKind {
        match self {
            Self::Submit { .. } => EventKind::Submit,
            Self::Snapshot(_) => EventKind::Snapshot,
            Self::Diagnostic(_) => EventKind::Diagnostic,
        }
    }
}

/// `server.turn.snapshot` payload; field order is the wire key order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SnapshotPayload {
    pub messages: Vec<Message>,
    pub status: TurnStatus,
    pub usage: Usage,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<TurnDiagnostic>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lineage: Option<Lineage>,
    /// turnkeep's additive field: the session's tool confirmations that are not final, and any
    /// this turn resolved or created, as the envelope holds them (`{ token, action, input,
    /// toolCallId, expiresAt, status }`). Omitted when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub confirmations: Vec<Confirmation>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TurnStatus {
    Idle,
    Streaming,
    Complete,
    Error,
}

/// Token counts, each a safe integer >= 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
}

/// How the turn relates to earlier ones, discriminated on `operation`.
/// The handler only ever produces `Submit`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "operation", rename_all = "lowercase")]
pub enum Lineage {
    Submit,
    Retry(LineageSource),
    Edit(LineageSource),
    Regenerate(LineageSource),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LineageSource {
    /// SafeId.
    pub parent_turn_id: String,
    /// SafeId.
    pub source_message_id: String,
}
