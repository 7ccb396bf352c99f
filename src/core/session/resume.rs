//! Resume: what a stored value means for the session a request expects.
//!
//! Missing → a new session at cursor 0, whose first save passes no expected cursor. Anything
//! else must decode and belong to the same session and the same chat definition; each way of
//! failing is a distinct `ResumeError` so the host can log and alert on it precisely (all of
//! them surface to the client as the same internal error).

use serde_json::Value;

use super::conversation::ConversationChart;
use super::decode::{decode_session_snapshot, SessionDecodeCode, SessionDecodeError};
use super::envelope::SessionEnvelope;
use crate::checks::{format_iso_millis_at, is_safe_id};
use crate::limits;

/// The session a request expects, from the request and the resolved chat definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionIdentity {
    pub session_id: String,
    pub definition_id: String,
    /// `definition.revision`, 1 when the definition sets none; must be > 0.
    pub definition_revision: u64,
    /// The definition's conversation statechart, if it has one: a stored conversation must
    /// replay through it.
    pub conversation: Option<ConversationChart>,
}

/// A session ready for its next save.
#[derive(Clone, Debug, PartialEq)]
pub struct Resumed {
    pub envelope: SessionEnvelope,
    /// The cursor to pass to the next `save`: `None` for a session never saved.
    pub expected_cursor: Option<u64>,
}

/// Why a stored session cannot be resumed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResumeError {
    /// The stored value is not a session envelope (`SESSION_INVALID_SNAPSHOT`).
    Corrupt(SessionDecodeError),
    /// The stored envelope has a version this crate does not read (`SESSION_UNSUPPORTED_VERSION`).
    UnsupportedVersion(SessionDecodeError),
    /// The stored envelope belongs to another session id.
    ForeignSession { stored: String, expected: String },
    /// The stored envelope was written for another chat definition: id or revision differ, it
    /// holds a conversation the definition has no statechart for, or its conversation does not
    /// replay through the definition's statechart.
    IncompatibleDefinition { detail: String },
    /// The expected identity itself is not valid (not a SafeId, revision 0, a bad statechart).
    InvalidIdentity { detail: String },
}

impl ResumeError {
    /// A stable name for logs and metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Corrupt(_) => "SESSION_INVALID_SNAPSHOT",
            Self::UnsupportedVersion(_) => "SESSION_UNSUPPORTED_VERSION",
            Self::ForeignSession { .. } => "SESSION_FOREIGN",
            Self::IncompatibleDefinition { .. } => {
                crate::diagnostics::chat::SESSION_INCOMPATIBLE.code
            }
            Self::InvalidIdentity { .. } => "SESSION_INVALID_IDENTITY",
        }
    }
}

impl std::fmt::Display for ResumeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Corrupt(e) | Self::UnsupportedVersion(e) => write!(f, "{e}"),
            Self::ForeignSession { stored, expected } => {
                write!(
                    f,
                    "{}: stored session {stored:?} is not {expected:?}",
                    self.kind()
                )
            }
            Self::IncompatibleDefinition { detail } | Self::InvalidIdentity { detail } => {
                write!(f, "{}: {detail}", self.kind())
            }
        }
    }
}

impl std::error::Error for ResumeError {}

/// Resumes the session `expected` from what storage returned (`None` when absent).
/// `now_ms` stamps a new session's `updatedAt`. A stored session without a conversation resumed
/// by a definition with a statechart starts the conversation at the initial state (saved with
/// the next write).
pub fn resume_session(
    stored: Option<&Value>,
    expected: &SessionIdentity,
    now_ms: u64,
) -> Result<Resumed, ResumeError> {
    check_identity(expected)?;
    let Some(value) = stored.filter(|v| !v.is_null()) else {
        return Ok(Resumed {
            envelope: new_session(expected, now_ms),
            expected_cursor: None,
        });
    };
    let envelope = decode_session_snapshot(value).map_err(|e| match e.code {
        SessionDecodeCode::UnsupportedVersion => ResumeError::UnsupportedVersion(e),
        SessionDecodeCode::InvalidSnapshot => ResumeError::Corrupt(e),
    })?;
    let mut envelope = envelope;
    check_compatible(&envelope, expected)?;
    if let (None, Some(chart)) = (&envelope.conversation, &expected.conversation) {
        envelope.conversation = Some(chart.start());
    }
    let expected_cursor = Some(envelope.cursor);
    Ok(Resumed {
        envelope,
        expected_cursor,
    })
}

/// A session that was never saved: cursor 0, no lease, no history, the initial conversation.
pub fn new_session(identity: &SessionIdentity, now_ms: u64) -> SessionEnvelope {
    SessionEnvelope {
        session_id: identity.session_id.clone(),
        definition_id: identity.definition_id.clone(),
        definition_revision: identity.definition_revision,
        updated_at: format_iso_millis_at(now_ms),
        cursor: 0,
        active_turn: None,
        terminal_turns: Vec::new(),
        conversation: identity.conversation.as_ref().map(ConversationChart::start),
        confirmations: Vec::new(),
        turn_journal: None,
    }
}

fn check_identity(id: &SessionIdentity) -> Result<(), ResumeError> {
    let invalid = |detail: String| Err(ResumeError::InvalidIdentity { detail });
    if !is_safe_id(&id.session_id) {
        return invalid("sessionId is not a SafeId".into());
    }
    if !is_safe_id(&id.definition_id) {
        return invalid("definitionId is not a SafeId".into());
    }
    if id.definition_revision == 0 || id.definition_revision > limits::INTEGER_SAFE_MAX {
        return invalid(format!(
            "definitionRevision {} is not a safe integer > 0",
            id.definition_revision
        ));
    }
    if let Some(chart) = &id.conversation {
        chart
            .check()
            .or_else(|detail| invalid(format!("conversation: {detail}")))?;
    }
    Ok(())
}

fn check_compatible(env: &SessionEnvelope, expected: &SessionIdentity) -> Result<(), ResumeError> {
    if env.session_id != expected.session_id {
        return Err(ResumeError::ForeignSession {
            stored: env.session_id.clone(),
            expected: expected.session_id.clone(),
        });
    }
    let incompatible = |detail: String| Err(ResumeError::IncompatibleDefinition { detail });
    if env.definition_id != expected.definition_id {
        return incompatible(format!(
            "stored definitionId {:?}, expected {:?}",
            env.definition_id, expected.definition_id
        ));
    }
    if env.definition_revision != expected.definition_revision {
        return incompatible(format!(
            "stored definitionRevision {}, expected {}",
            env.definition_revision, expected.definition_revision
        ));
    }
    match (&env.conversation, &expected.conversation) {
        (Some(_), None) => incompatible("stored conversation, but the definition has none".into()),
        (Some(stored), Some(chart)) => chart.replay(stored).or_else(incompatible),
        (None, _) => Ok(()),
    }
}
