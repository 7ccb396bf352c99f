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
//! | `{ type: 'error' }` | a failed model call (its `content` is not kept: it is the provider's text) |
//! | `reasoning`, `tool_result`, any other type | nothing (AgentsKit's controller does not render them either) |
//!
//! Nothing after the finish is read.

use serde_json::{Map, Value};

use super::model::{FinishReason, ModelChunk, Usage};
use crate::checks::safe_uint;

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
            Some("text") => text(chunk),
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

fn text(chunk: &Map<String, Value>) -> Result<Option<ModelChunk>, AgentsKitChunkError> {
    match chunk.get("content") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(ModelChunk::Text(s.clone()))),
        Some(_) => Err(AgentsKitChunkError::Invalid(
            "a text chunk's content must be a string",
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
