//! What the controller exposes: the state every snapshot is built from, and its errors.

use crate::chat::model::Usage;
use crate::protocol::Message;

/// The observable state of one chat turn. The handler builds every snapshot from this and
/// nothing else (one reducer per concern).
#[derive(Clone, Debug, PartialEq)]
pub struct ChatState {
    /// The whole conversation: the history the controller started with, then this turn's
    /// user, assistant and tool messages.
    pub messages: Vec<Message>,
    pub status: ChatStatus,
    /// Summed over every model call of this turn.
    pub usage: Usage,
    /// Why the turn failed; set exactly when `status` is `Error`.
    pub error: Option<ChatError>,
}

/// The turn's status, as the snapshot payload spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChatStatus {
    /// Nothing sent yet.
    Idle,
    /// A model call or tool batch is in progress.
    Streaming,
    /// The turn ended normally (also after `stop()`, or with a call awaiting confirmation).
    Complete,
    /// The turn ended in failure; see [`ChatState::error`].
    Error,
}

impl ChatStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ChatStatus::Idle => "idle",
            ChatStatus::Streaming => "streaming",
            ChatStatus::Complete => "complete",
            ChatStatus::Error => "error",
        }
    }
}

/// Why a turn ended in `error`. Codes and messages are fixed texts, safe for any client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChatError {
    /// The model adapter failed (threw, or its stream broke).
    ModelFailed,
    /// The model kept asking for tools after `max` tool rounds.
    ToolIterationsExceeded { max: u32 },
    /// One response streamed more text than `ASSISTANT_CONTENT_BYTES_MAX`.
    ResponseTooLarge,
    /// One response asked for more tool calls than `TOOL_CALLS_PER_RESPONSE_MAX`.
    TooManyToolCalls,
    /// One tool call's arguments exceeded `TOOL_ARGS_BYTES_MAX`.
    ToolArgsTooLarge,
}

impl ChatError {
    pub fn code(self) -> &'static str {
        match self {
            ChatError::ModelFailed => "CHAT_MODEL_FAILED",
            ChatError::ToolIterationsExceeded { .. } => "CHAT_TOOL_ITERATIONS_EXCEEDED",
            ChatError::ResponseTooLarge => "CHAT_RESPONSE_TOO_LARGE",
            ChatError::TooManyToolCalls => "CHAT_TOO_MANY_TOOL_CALLS",
            ChatError::ToolArgsTooLarge => "CHAT_TOOL_ARGS_TOO_LARGE",
        }
    }

    pub fn message(self) -> String {
        match self {
            ChatError::ModelFailed => "The model failed to answer.".into(),
            ChatError::ToolIterationsExceeded { max } => {
                format!("The model asked for tools more than {max} times in one turn.")
            }
            ChatError::ResponseTooLarge => "The model response is too large.".into(),
            ChatError::TooManyToolCalls => {
                "The model asked for too many tool calls at once.".into()
            }
            ChatError::ToolArgsTooLarge => {
                "The model sent tool arguments that are too large.".into()
            }
        }
    }
}

impl std::fmt::Display for ChatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code(), self.message())
    }
}
