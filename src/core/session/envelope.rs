//! The session envelope v1 as typed values, and its canonical serialization.
//!
//! The envelope holds the durable facts of one chat session: its identity, the CAS cursor, the
//! turn lease, the terminal-turn history and pending confirmations. Messages are never stored
//! here (they live in ChatMemory). Values of these types are only built by the decoder or by the
//! pure transitions of this module, so they always satisfy the wire limits.

use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `protocol` of every v1 envelope. `wire`
pub const SESSION_PROTOCOL: &str = "agentskit.chat.session";
/// `version` written by this crate. `wire`
pub const SESSION_VERSION: u64 = 1;

/// One session's durable state (`agentskit.chat.session` v1).
#[derive(Clone, Debug, PartialEq)]
pub struct SessionEnvelope {
    pub session_id: String,
    pub definition_id: String,
    /// Always > 0.
    pub definition_revision: u64,
    /// Rewritten with the current time on every save.
    pub updated_at: String,
    /// The CAS cursor; every successful save advances it by one.
    pub cursor: u64,
    pub active_turn: Option<ActiveTurn>,
    /// Oldest first, at most `TERMINAL_TURNS_MAX`, turn ids unique.
    pub terminal_turns: Vec<TerminalTurn>,
    /// Present exactly when the chat definition has a conversation statechart.
    pub conversation: Option<Conversation>,
    /// Carried unchanged through every save that does not act on a confirmation.
    pub confirmations: Vec<Confirmation>,
    /// The running turn's journal (`turnJournal`, turnkeep's addition to the v1 envelope: a
    /// decoder that does not know it drops it): present from a turn's first record to its
    /// release.
    pub turn_journal: Option<super::journal::TurnJournal>,
}

/// The lease of the turn that is running now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActiveTurn {
    pub turn_id: String,
    /// Epoch milliseconds; the lease is live while `expires_at > now`.
    pub expires_at: u64,
}

/// A finished turn, remembered so that a replayed submission is refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalTurn {
    pub turn_id: String,
    pub outcome: TurnOutcome,
}

/// How a turn ended: `indeterminate` when the message save failed or timed out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TurnOutcome {
    Completed,
    Indeterminate,
}

/// State of a deterministic conversation statechart and the decisions that led to it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Conversation {
    /// 1 to `CONVERSATION_STATE_CHARS_MAX` characters.
    pub state: String,
    /// At most `DECISIONS_MAX`, message ids unique.
    pub decisions: Vec<Decision>,
}

/// One routing decision of the conversation statechart.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub message_id: String,
    pub input: String,
    pub route_id: String,
    pub kind: DecisionKind,
    pub content: String,
    pub from_state: String,
    pub to_state: String,
}

/// How a route was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DecisionKind {
    Deterministic,
    Repaired,
    Fallback,
}

/// A tool call waiting for (or past) a person's approval.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Confirmation {
    pub token: String,
    pub action: String,
    /// A plain object within the bounded-JSON limits.
    pub input: Map<String, Value>,
    pub tool_call_id: String,
    /// Epoch milliseconds.
    pub expires_at: u64,
    pub status: ConfirmationStatus,
}

/// `pending`, a claimed processing state, or a final state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConfirmationStatus {
    Pending,
    Approving,
    Rejecting,
    Expiring,
    Approved,
    Rejected,
    Expired,
}

impl TurnOutcome {
    /// The wire literal.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Indeterminate => "indeterminate",
        }
    }
}

impl ConfirmationStatus {
    /// `approved`, `rejected` or `expired`: nothing will change the record again.
    pub fn is_final(self) -> bool {
        matches!(self, Self::Approved | Self::Rejected | Self::Expired)
    }

    /// `approving`, `rejecting` or `expiring`: a request claimed the decision and is carrying
    /// it out (or crashed doing so).
    pub fn is_processing(self) -> bool {
        matches!(self, Self::Approving | Self::Rejecting | Self::Expiring)
    }

    /// The wire literal.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approving => "approving",
            Self::Rejecting => "rejecting",
            Self::Expiring => "expiring",
            Self::Approved => "approved",
            Self::Rejected => "rejected",
            Self::Expired => "expired",
        }
    }
}

impl SessionEnvelope {
    /// The canonical JSON text: schema key order, `activeTurn`/`conversation`/`turnJournal`
    /// omitted when absent and `terminalTurns` when empty.
    pub fn to_json_string(&self) -> String {
        // Serializing plain strings, integers and maps into a String cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The envelope as a JSON value, e.g. for `SessionStorage::save`. Keeps the schema key order
    /// (serde_json is built with `preserve_order`).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Looks up a terminal turn by id.
    pub fn terminal_turn(&self, turn_id: &str) -> Option<&TerminalTurn> {
        self.terminal_turns.iter().find(|t| t.turn_id == turn_id)
    }
}

impl Serialize for SessionEnvelope {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("SessionEnvelope", 12)?;
        s.serialize_field("protocol", SESSION_PROTOCOL)?;
        s.serialize_field("version", &SESSION_VERSION)?;
        s.serialize_field("sessionId", &self.session_id)?;
        s.serialize_field("definitionId", &self.definition_id)?;
        s.serialize_field("definitionRevision", &self.definition_revision)?;
        s.serialize_field("updatedAt", &self.updated_at)?;
        s.serialize_field("cursor", &self.cursor)?;
        match &self.active_turn {
            Some(turn) => s.serialize_field("activeTurn", turn)?,
            None => s.skip_field("activeTurn")?,
        }
        if self.terminal_turns.is_empty() {
            s.skip_field("terminalTurns")?;
        } else {
            s.serialize_field("terminalTurns", &self.terminal_turns)?;
        }
        match &self.conversation {
            Some(conversation) => s.serialize_field("conversation", conversation)?,
            None => s.skip_field("conversation")?,
        }
        s.serialize_field("confirmations", &self.confirmations)?;
        match &self.turn_journal {
            Some(journal) => s.serialize_field("turnJournal", journal)?,
            None => s.skip_field("turnJournal")?,
        }
        s.end()
    }
}
