//! Translates the chunks an AgentsKit adapter streams (`@agentskit/core` `StreamChunk`, from
//! `adapter.createSource(request).stream()`) into [`ModelChunk`]s, so an AgentsKit adapter runs
//! a turnkeep turn unchanged:
//!
//! | chunk | becomes |
//! |---|---|
//! | `{ type: 'text', content }` | text (an absent or empty `content` adds nothing) |
//! | `{ type: 'tool_call', toolCall: { id, name, args } }` | one whole tool call (`args` is its JSON text; absent means `{}`) |
//! | `{ type: 'usage', usage: { promptTokens, completionTokens, totalTokens? } }` | the usage of the finish |
//! | `{ type: 'done' }`, or the end of the stream | the finish: reason `tool-calls` when the response called tools, else `stop` |
//! | `{ type: 'reasoning', content }` | reasoning text (the message's `metadata.reasoning`, where AgentsKit's controller puts it) |
//! | `{ type: 'error' }` | a failed model call (its `content` is not kept: it is the provider's text) |
//! | `tool_result`, any other type | nothing |
//!
//! Nothing after the finish is read. [`adapter_messages`] is the conversation an adapter is
//! handed: AgentsKit's, with the definition's `systemPrompt` first as its controller puts it.

use serde_json::{Map, Value};

use super::model::{FinishReason, ModelChunk, Usage};
use crate::checks::safe_uint;
use crate::protocol::{Message, MessageStatus, Role};

/// The id of the system message [`adapter_messages`] adds (it is never saved).
pub const SYSTEM_PROMPT_MESSAGE_ID: &str = "system-prompt";

/// The messages of an adapter request: `messages`, preceded by a system message with
/// `system_prompt` unless one with exactly that text is there already (AgentsKit's rule, so a
/// prompt is not sent twice). It is dated like the first message (epoch 0 without one).
pub fn adapter_messages(messages: &[Message], system_prompt: Option<&str>) -> Vec<Message> {
    let prompt = system_prompt.filter(|p| !p.is_empty());
    let present = |p: &str| {
        messages
            .iter()
            .any(|m| m.role == Role::System && m.content == p)
    };
    let mut out = Vec::with_capacity(messages.len() + 1);
    if let Some(prompt) = prompt.filter(|p| !present(p)) {
        out.push(Message {
            id: SYSTEM_PROMPT_MESSAGE_ID.to_owned(),
            role: Role::System,
            content: prompt.to_owned(),
            status: MessageStatus::Complete,
            created_at: messages.first().map_or_else(
                || "1970-01-01T00:00:00.000Z".to_owned(),
                |m| m.created_at.clone(),
            ),
            parts: None,
            tool_calls: None,
            tool_call_id: None,
            metadata: None,
        });
    }
    out.extend_from_slice(messages);
    out
}

/// Why an adapter's stream cannot go on. Fixed texts: nothing of the chunk is quoted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentsKitChunkError {
    /// Not an object with a string `type`, or a known type with fields of the wrong shape.
    Invalid(&'static str),
    /// The adapter streamed `{ type: 'error' }`.
    Reported,
}

impl AgentsKitChunkError {
    pub fn message(self) -> &'static str {
        match self {
            Self::Invalid(why) => why,
            Self::Reported => "the AgentsKit adapter streamed an error chunk",
        }
    }
}

/// The translation state of one model call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AgentsKitStream {
    tool_calls: u32,
    usage: Option<Usage>,
    finished: bool,
}

impl AgentsKitStream {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the finish was handed out (nothing more is read).
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The chunks one adapter chunk stands for (none, one text or tool call, or the finish).
    pub fn push(&mut self, chunk: &Value) -> Result<Option<ModelChunk>, AgentsKitChunkError> {
        if self.finished {
            return Ok(None);
        }
        let chunk = chunk
            .as_object()
            .ok_or(AgentsKitChunkError::Invalid("a chunk must be an object"))?;
        match chunk.get("type").and_then(Value::as_str) {
            Some("text") => text(chunk).map(|t| t.map(ModelChunk::Text)),
            Some("reasoning") => text(chunk).map(|t| t.map(ModelChunk::Reasoning)),
            Some("tool_call") => self.tool_call(chunk).map(Some),
            Some("usage") => {
                self.usage = Some(usage(chunk.get("usage"))?);
                Ok(None)
            }
            Some("done") => Ok(self.end()),
            Some("error") => Err(AgentsKitChunkError::Reported),
            Some(_) => Ok(None),
            None => Err(AgentsKitChunkError::Invalid("a chunk needs a string type")),
        }
    }

    /// The finish, when the stream ended without `done` (`None` once it was handed out).
    pub fn end(&mut self) -> Option<ModelChunk> {
        if self.finished {
            return None;
        }
        self.finished = true;
        let reason = if self.tool_calls > 0 {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        };
        Some(ModelChunk::Finish {
            reason,
            usage: self.usage,
        })
    }

    fn tool_call(&mut self, chunk: &Map<String, Value>) -> Result<ModelChunk, AgentsKitChunkError> {
        const BAD: AgentsKitChunkError = AgentsKitChunkError::Invalid(
            "a tool_call chunk needs toolCall { id, name, args? } with non-empty strings",
        );
        let call = chunk
            .get("toolCall")
            .and_then(Value::as_object)
            .ok_or(BAD)?;
        let text = |key: &str| {
            call.get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        let (Some(id), Some(name)) = (text("id"), text("name")) else {
            return Err(BAD);
        };
        let args = match call.get("args") {
            None | Some(Value::Null) => "{}".to_owned(),
            Some(Value::String(s)) if s.is_empty() => "{}".to_owned(),
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err(BAD),
        };
        let index = self.tool_calls;
        self.tool_calls += 1;
        Ok(ModelChunk::ToolCall {
            index,
            id: Some(id.to_owned()),
            name: Some(name.to_owned()),
            args_delta: args,
        })
    }
}

/// A text or reasoning chunk's `content` (absent or empty: nothing).
fn text(chunk: &Map<String, Value>) -> Result<Option<String>, AgentsKitChunkError> {
    match chunk.get("content") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(AgentsKitChunkError::Invalid(
            "a text or reasoning chunk's content must be a string",
        )),
    }
}

fn usage(value: Option<&Value>) -> Result<Usage, AgentsKitChunkError> {
    const BAD: AgentsKitChunkError = AgentsKitChunkError::Invalid(
        "a usage chunk needs usage { promptTokens, completionTokens } as integers >= 0",
    );
    let value = value.and_then(Value::as_object).ok_or(BAD)?;
    let count = |key: &str| value.get(key).and_then(safe_uint).ok_or(BAD);
    let mut usage = Usage::new(count("promptTokens")?, count("completionTokens")?);
    if let Some(total) = value.get("totalTokens").filter(|v| !v.is_null()) {
        usage.total_tokens = safe_uint(total).ok_or(BAD)?;
    }
    Ok(usage)
}
