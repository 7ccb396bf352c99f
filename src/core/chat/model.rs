//! What a model call is made of: the request, the streamed chunks, the tool specs and token
//! usage. Adapter-neutral: the demo model, an OpenAI-compatible endpoint or a JS host model all
//! translate to and from these types.

use serde_json::Value;

use super::settings::CallSettings;
use crate::hash::FixedHashSet;
use crate::limits::INTEGER_SAFE_MAX;
use crate::protocol::{Message, Role};

/// One model call: the conversation so far, the tools the model may call and the definition's
/// call settings (instructions, temperature, ...).
#[derive(Clone, Debug, PartialEq)]
pub struct ModelRequest {
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub settings: CallSettings,
}

impl ModelRequest {
    /// A request with no call settings.
    pub fn new(messages: Vec<Message>, tools: Vec<ToolSpec>) -> Self {
        Self {
            messages,
            tools,
            settings: CallSettings::default(),
        }
    }

    /// The ids of the tool calls a `tool` message answers. Only these calls are sent to a
    /// model: every provider refuses a call without its result (a call still waiting for a
    /// person has none yet).
    pub fn answered_calls(&self) -> FixedHashSet<&str> {
        self.messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .filter_map(|m| m.tool_call_id.as_deref())
            .collect()
    }
}

/// A tool as the model sees it, plus whether a person must approve it before it runs.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// A JSON Schema object describing the arguments.
    pub parameters: Value,
    /// When true the controller never runs the tool: the turn ends with the call waiting in
    /// status `requires_confirmation`.
    pub requires_confirmation: bool,
    /// The host checks the input itself (its schema is one the core cannot read, such as a
    /// Standard Schema object; `parameters` is then its JSON Schema form, for the model only),
    /// so the controller does not check it against `parameters`.
    pub host_validates: bool,
}

/// One piece of a streamed model response.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelChunk {
    /// Assistant text to append.
    Text(String),
    /// Reasoning text (a model's thinking) to append; kept beside the text, never in it.
    Reasoning(String),
    /// A fragment of tool call number `index`. `id` and `name` may arrive on the first fragment
    /// only or be repeated on every one (the first wins); `args_delta` fragments of the same
    /// index concatenate to the call's JSON arguments.
    ToolCall {
        index: u32,
        id: Option<String>,
        name: Option<String>,
        args_delta: String,
    },
    /// The model says it is done and why; usage when the adapter knows it.
    Finish {
        reason: FinishReason,
        usage: Option<Usage>,
    },
}

/// Why a model stopped producing output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    Length,
    ToolCalls,
    ContentFilter,
    /// A reason this crate does not know; treated like `Stop`.
    Other,
}

/// Token usage. Snapshots carry it as `{promptTokens, completionTokens, totalTokens}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
}

impl Usage {
    /// Usage whose total is the sum of its parts.
    pub fn new(prompt_tokens: u64, completion_tokens: u64) -> Self {
        Self {
            prompt_tokens: prompt_tokens.min(INTEGER_SAFE_MAX),
            completion_tokens: completion_tokens.min(INTEGER_SAFE_MAX),
            total_tokens: safe_sum(prompt_tokens, completion_tokens),
        }
    }

    /// Field-wise sum (one turn may call the model several times), capped at the largest safe
    /// integer so the wire (`int()` in zod) always accepts it.
    pub(crate) fn plus(self, other: Usage) -> Usage {
        Usage {
            prompt_tokens: safe_sum(self.prompt_tokens, other.prompt_tokens),
            completion_tokens: safe_sum(self.completion_tokens, other.completion_tokens),
            total_tokens: safe_sum(self.total_tokens, other.total_tokens),
        }
    }
}

fn safe_sum(a: u64, b: u64) -> u64 {
    a.saturating_add(b).min(INTEGER_SAFE_MAX)
}
