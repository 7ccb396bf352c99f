//! A conversation as the AI SDK's `UIMessage[]`: what `useChat({ messages })` starts from (a
//! server-rendered first paint) and what a resumed stream rebuilds.
//!
//! One UI assistant message per turn: the assistant messages (and tool results) that follow a
//! user message are the steps of one UI message, whose id is the first of them — the id every
//! stream of that turn names in its `start` chunk ([`super::chunks`]), so a page's messages and
//! its streams agree. Each canonical assistant message is a step (`step-start`), its text a
//! `text` part, each tool call a `tool-<name>` part whose state says what the call and its
//! confirmation record say.

use serde_json::{json, Map, Value};

use crate::projection::{LogConfirmation, Projection};
use crate::protocol::{Message, MessageStatus, Part, Role, ToolCall, ToolCallStatus};
use crate::session::{Confirmation, ConfirmationStatus};

/// The confirmation records of a conversation, by tool call: its token (the UI `approvalId`)
/// and status.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolConfirmations {
    records: Vec<(String, String, ConfirmationStatus)>,
}

impl ToolConfirmations {
    /// From a session envelope's records.
    pub fn from_records(records: &[Confirmation]) -> Self {
        Self {
            records: records
                .iter()
                .map(|r| (r.tool_call_id.clone(), r.token.clone(), r.status))
                .collect(),
        }
    }

    /// From what a session log shows ([`crate::projection::Projection::confirmations`]).
    pub fn from_log(records: &[LogConfirmation]) -> Self {
        Self {
            records: records
                .iter()
                .map(|r| (r.tool_call_id.clone(), r.token.clone(), r.status))
                .collect(),
        }
    }

    /// The tool call a token's record is for.
    pub fn call_of(&self, token: &str) -> Option<&str> {
        self.records
            .iter()
            .find(|(_, t, _)| t == token)
            .map(|(call, _, _)| call.as_str())
    }

    /// Whether a record has this token.
    pub fn has_token(&self, token: &str) -> bool {
        self.records.iter().any(|(_, t, _)| t == token)
    }

    /// The newest record of `tool_call_id`: (token, status).
    pub fn of(&self, tool_call_id: &str) -> Option<(&str, ConfirmationStatus)> {
        self.records
            .iter()
            .rev()
            .find(|(call, _, _)| call == tool_call_id)
            .map(|(_, token, status)| (token.as_str(), *status))
    }
}

/// `messages` as `UIMessage[]` (see the module comment). Tool messages become their calls'
/// outputs; system messages are kept (with their text).
pub fn ui_messages(messages: &[Message], confirmations: &ToolConfirmations) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    // The UI assistant message being filled: (index in `out`).
    let mut turn: Option<usize> = None;
    for message in messages {
        match message.role {
            Role::User | Role::System => {
                turn = None;
                out.push(json!({
                    "id": message.id,
                    "role": if message.role == Role::User { "user" } else { "system" },
                    "parts": user_parts(message),
                }));
            }
            Role::Assistant => {
                let index = *turn.get_or_insert_with(|| {
                    out.push(json!({ "id": message.id, "role": "assistant", "parts": [] }));
                    out.len() - 1
                });
                let parts = out[index]["parts"]
                    .as_array_mut()
                    .expect("parts is an array");
                parts.extend(assistant_parts(message, confirmations));
            }
            Role::Tool => {} // its call's part carries the output
        }
    }
    out
}

/// The answer of the conversation's last turn so far: the messages after its last user
/// message (all of them when there is none) — one UI message's steps.
pub fn turn_answer(messages: &[Message]) -> &[Message] {
    let from = messages
        .iter()
        .rposition(|m| m.role == Role::User)
        .map_or(0, |at| at + 1);
    &messages[from..]
}

/// What a stream joining `projection`'s last run shows first: a continuation's (`continues`)
/// answer so far, which it adds to; a new turn's answer so far, none before the run has written
/// its user's message (the answer before it is the previous turn's).
pub fn run_answer(projection: &Projection, continues: bool) -> Vec<Message> {
    if continues {
        return turn_answer(&projection.to_messages()).to_vec();
    }
    let run: Vec<Message> = projection.last_run_messages().cloned().collect();
    if run.iter().any(|m| m.role == Role::User) {
        turn_answer(&run).to_vec()
    } else {
        Vec::new()
    }
}

/// A user (or system) message's parts: its file parts, then its text (the order `useChat`
/// builds them in).
fn user_parts(message: &Message) -> Vec<Value> {
    let mut parts: Vec<Value> = message
        .parts
        .iter()
        .flatten()
        .filter_map(file_part)
        .collect();
    if !message.content.is_empty() {
        parts.push(json!({ "type": "text", "text": message.content }));
    }
    parts
}

/// A stored file or image part as a UI `file` part (`url` is the stored source: a URL or a
/// `data:` URL).
fn file_part(part: &Part) -> Option<Value> {
    let (url, media_type, filename) = match part {
        Part::File(f) => (&f.source, f.mime_type.as_deref(), f.filename.as_deref()),
        Part::Image(i) => (&i.source, i.mime_type.as_deref(), None),
        Part::Audio(m) | Part::Video(m) => (&m.source, m.mime_type.as_deref(), None),
        Part::Text { .. } => return None,
    };
    let mut file = json!({
        "type": "file",
        "mediaType": media_type.unwrap_or("application/octet-stream"),
        "url": url,
    });
    if let Some(name) = filename {
        file["filename"] = json!(name);
    }
    Some(file)
}

/// One canonical assistant message as one step: `step-start`, its text, its tool calls.
fn assistant_parts(message: &Message, confirmations: &ToolConfirmations) -> Vec<Value> {
    let mut parts = vec![json!({ "type": "step-start" })];
    let state = if message.status == MessageStatus::Streaming {
        "streaming"
    } else {
        "done"
    };
    if !message.reasoning().is_empty() {
        parts.push(json!({ "type": "reasoning", "text": message.reasoning(), "state": state }));
    }
    if !message.content.is_empty() {
        parts.push(json!({ "type": "text", "text": message.content, "state": state }));
    }
    for call in message.tool_calls.iter().flatten() {
        parts.push(tool_part(call, confirmations.of(&call.id)));
    }
    parts
}

/// A tool call as a `tool-<name>` part.
pub(crate) fn tool_part(call: &ToolCall, record: Option<(&str, ConfirmationStatus)>) -> Value {
    let mut part = Map::new();
    part.insert("type".into(), json!(format!("tool-{}", call.name)));
    part.insert("toolCallId".into(), json!(call.id));
    let state = tool_state(call, record.map(|(_, status)| status));
    part.insert("state".into(), json!(state.as_str()));
    part.insert("input".into(), Value::Object(call.args.clone()));
    match state {
        ToolState::OutputAvailable => {
            part.insert(
                "output".into(),
                json!(call.result.clone().unwrap_or_default()),
            );
        }
        ToolState::OutputError => {
            let text = call
                .error
                .clone()
                .unwrap_or_else(|| "the tool call failed".into());
            part.insert("errorText".into(), json!(text));
        }
        _ => {}
    }
    if let Some((token, status)) = record {
        let mut approval = json!({ "id": token });
        match status {
            ConfirmationStatus::Approving | ConfirmationStatus::Approved => {
                approval["approved"] = json!(true)
            }
            ConfirmationStatus::Rejecting
            | ConfirmationStatus::Rejected
            | ConfirmationStatus::Expiring
            | ConfirmationStatus::Expired => approval["approved"] = json!(false),
            ConfirmationStatus::Pending => {}
        }
        part.insert("approval".into(), approval);
    }
    Value::Object(part)
}

/// The AI SDK's tool part states turnkeep's calls map to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ToolState {
    InputAvailable,
    ApprovalRequested,
    OutputAvailable,
    OutputError,
    OutputDenied,
}

impl ToolState {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::InputAvailable => "input-available",
            Self::ApprovalRequested => "approval-requested",
            Self::OutputAvailable => "output-available",
            Self::OutputError => "output-error",
            Self::OutputDenied => "output-denied",
        }
    }
}

/// A call's UI state: its own status, and a rejection (or expiry) of its confirmation, which
/// the AI SDK shows as a denial rather than a failure.
pub(crate) fn tool_state(call: &ToolCall, record: Option<ConfirmationStatus>) -> ToolState {
    let denied = matches!(
        record,
        Some(
            ConfirmationStatus::Rejecting
                | ConfirmationStatus::Rejected
                | ConfirmationStatus::Expiring
                | ConfirmationStatus::Expired
        )
    );
    match call.status {
        ToolCallStatus::RequiresConfirmation => ToolState::ApprovalRequested,
        ToolCallStatus::Pending | ToolCallStatus::Running => ToolState::InputAvailable,
        ToolCallStatus::Complete => ToolState::OutputAvailable,
        ToolCallStatus::Error if denied => ToolState::OutputDenied,
        ToolCallStatus::Error => ToolState::OutputError,
    }
}
