//! What a turn is given: its ports (owned, so a running turn can outlive the call that started
//! it), its limits, the submission and the chat it runs.

use std::rc::Rc;

use super::commit::SessionPorts;
use super::fault::FaultReport;
use turnkeep_core::chat::controller::ChatConfig;
use turnkeep_core::protocol::Message;
use turnkeep_core::session::SessionIdentity;
use turnkeep_ports::chat::{ChatMemory, Clock, Ids, ModelAdapter, Sleep, Tool};
use turnkeep_ports::log::SessionLog;
use turnkeep_ports::session::SessionStorage;

/// Everything a turn reaches the world through.
#[derive(Clone)]
pub struct Ports {
    pub storage: Rc<dyn SessionStorage>,
    pub memory: Rc<dyn ChatMemory>,
    /// The session's durable stream, when the host configured one. With it every turn is
    /// published as it runs, and losing the sending client no longer stops the turn.
    pub log: Option<Rc<dyn SessionLog>>,
    pub model: Rc<dyn ModelAdapter>,
    pub tools: Rc<Vec<Box<dyn Tool>>>,
    pub clock: Rc<dyn Clock>,
    pub ids: Rc<dyn Ids>,
    pub sleep: Rc<dyn Sleep>,
    pub faults: Rc<dyn FaultReport>,
}

impl Ports {
    /// What the session's writes go through ([`super::commit::commit_session`]).
    pub fn session(&self, limits: &TurnLimits) -> SessionPorts<'_> {
        SessionPorts {
            storage: self.storage.as_ref(),
            clock: self.clock.as_ref(),
            sleep: self.sleep.as_ref(),
            faults: self.faults.as_ref(),
            cleanup_budget_ms: limits.cleanup_budget_ms,
        }
    }
}

/// The bounds of one turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TurnLimits {
    /// How long a claim holds the session (`limits::lease_ms`: the turn plus three cleanup budgets).
    pub lease_ms: u64,
    /// Each cleanup step (settle, publish the end, save messages, release) gets this long.
    pub cleanup_budget_ms: u64,
    /// How long a tool confirmation this turn proposes stays approvable.
    pub confirmation_ttl_ms: u64,
    /// How long a model stream may go quiet after its first chunk before the turn ends as a
    /// model failure (`limits::MODEL_STALL_MS_DEFAULT`).
    pub model_stall_ms: u64,
}

/// A validated `client.turn.submit`.
#[derive(Clone, Debug, PartialEq)]
pub struct Submission {
    pub session_id: String,
    pub turn_id: String,
    pub input: String,
    /// What a client protocol adds to the user's message (its id, file parts, metadata): on
    /// the turn protocol's `client.turn.submit`, what its `payload.message` holds.
    pub message: MessageExtras,
    /// Answer the last user message again instead of sending `input` (the AI SDK's
    /// `regenerate-message`).
    pub regenerate: bool,
}

/// The user message's id, file parts and metadata (see [`Submission::message`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MessageExtras {
    pub id: Option<String>,
    pub files: Vec<turnkeep_core::protocol::Part>,
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
}

impl Submission {
    /// A turn protocol submission: text only.
    pub fn text(session_id: &str, turn_id: &str, input: &str) -> Self {
        Self {
            session_id: session_id.to_owned(),
            turn_id: turn_id.to_owned(),
            input: input.to_owned(),
            message: MessageExtras::default(),
            regenerate: false,
        }
    }
}

/// The chat definition's part the turn needs besides its ports.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatSetup {
    /// Who the stored session must belong to (session id, definition id and revision).
    pub identity: SessionIdentity,
    pub config: ChatConfig,
    /// The conversation a session starts with when its memory is empty.
    pub initial_messages: Vec<Message>,
}
