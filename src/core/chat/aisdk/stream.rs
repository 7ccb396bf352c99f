//! The stream parts of `doStream(options).stream`, translated into [`ModelChunk`]s:
//!
//! | part | becomes |
//! |---|---|
//! | `text-delta {delta}` | text (the deltas of every text block, in order) |
//! | `reasoning-delta {delta}` | reasoning text |
//! | `tool-call {toolCallId, toolName, input}` | one whole tool call (`input` is its JSON text) |
//! | `tool-call {providerExecuted: true}`, `tool-result`, `tool-approval-request` | nothing: the provider ran that tool itself |
//! | `tool-input-start/-delta/-end` | nothing: a preview of the `tool-call` that follows with the whole input |
//! | `finish {usage, finishReason}` | the finish; usage `inputTokens.total` + `outputTokens.total` (V3/V4) or the flat counts (V2), the total added when the model gives none |
//! | `finish` with reason `error` or `interrupted` | a failed call (the stream ended without completing) |
//! | `error {error}` | a failed call (the error goes to the operator, never to a client) |
//! | `stream-start`, `response-metadata`, `text-start/-end`, `reasoning-start/-end`, `file`, `reasoning-file`, `source`, `custom`, `raw`, `ping`, any other | nothing |
//!
//! A stream that ends before its `finish` failed too (truncated). Nothing after the finish is
//! read. Finish reasons: `stop`, `length`, `tool-calls`, `content-filter`; `other`, `unknown`
//! and any reason this crate does not know are "other" (treated as a stop).

use crate::chat::model::{FinishReason, ModelChunk, Usage};
use crate::limits::INTEGER_SAFE_MAX;

/// One stream part as the shell read it: its `type` and the fields read here, each as found
/// (absent or of another JS type: `None`). The shell reads `finishReason` as the string itself
/// (V2) or its `unified` field (V3/V4), and the token counts as numbers (V2) or their `total`
/// fields (V3/V4).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamPart {
    pub kind: String,
    /// `text-delta`, `reasoning-delta`.
    pub delta: Option<String>,
    /// `tool-call`.
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    pub input: Option<String>,
    pub provider_executed: bool,
    /// `finish`.
    pub finish_reason: Option<String>,
    pub input_tokens: Option<f64>,
    pub output_tokens: Option<f64>,
    /// V2's `totalTokens` (V3 and V4 have none).
    pub total_tokens: Option<f64>,
}

impl StreamPart {
    /// A part with only a type (tests and unknown parts).
    pub fn of(kind: &str) -> Self {
        Self {
            kind: kind.to_owned(),
            ..Self::default()
        }
    }
}

/// Why a model call failed. Fixed texts: nothing of the model's output is quoted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AiSdkError {
    /// A part of a known type without the fields it must have.
    InvalidPart(&'static str),
    /// The model streamed an `error` part.
    Reported,
    /// The model finished with reason `error` (or V4's `interrupted`: no completion signal).
    FinishedInError,
    /// The stream ended before its `finish` part.
    Truncated,
}

impl AiSdkError {
    pub fn message(self) -> &'static str {
        match self {
            Self::InvalidPart(why) => why,
            Self::Reported => "the model streamed an error part",
            Self::FinishedInError => "the model finished with an error",
            Self::Truncated => "the model stream ended before it finished",
        }
    }
}

/// The translation state of one model call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AiSdkStream {
    tool_calls: u32,
    finished: bool,
}

impl AiSdkStream {
    pub fn new() -> Self {
        Self::default()
    }

    /// True once the finish was handed out: nothing more is read.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The chunk one part stands for, if any.
    pub fn push(&mut self, part: &StreamPart) -> Result<Option<ModelChunk>, AiSdkError> {
        if self.finished {
            return Ok(None);
        }
        match part.kind.as_str() {
            "text-delta" => Ok(delta(part)?.map(ModelChunk::Text)),
            "reasoning-delta" => Ok(delta(part)?.map(ModelChunk::Reasoning)),
            "tool-call" if part.provider_executed => Ok(None),
            "tool-call" => self.tool_call(part).map(Some),
            "finish" => self.finish(part).map(Some),
            "error" => Err(AiSdkError::Reported),
            _ => Ok(None),
        }
    }

    /// The stream ended: fine after the finish, truncated before it.
    pub fn end(&mut self) -> Result<(), AiSdkError> {
        if self.finished {
            Ok(())
        } else {
            Err(AiSdkError::Truncated)
        }
    }

    fn tool_call(&mut self, part: &StreamPart) -> Result<ModelChunk, AiSdkError> {
        const BAD: AiSdkError = AiSdkError::InvalidPart(
            "a tool-call part needs a toolCallId, a toolName and its input as JSON text",
        );
        let text = |field: &Option<String>| field.clone().filter(|s| !s.is_empty());
        let (Some(id), Some(name)) = (text(&part.tool_call_id), text(&part.tool_name)) else {
            return Err(BAD);
        };
        let args = part.input.clone().ok_or(BAD)?;
        let index = self.tool_calls;
        self.tool_calls += 1;
        Ok(ModelChunk::ToolCall {
            index,
            id: Some(id),
            name: Some(name),
            args_delta: args,
        })
    }

    fn finish(&mut self, part: &StreamPart) -> Result<ModelChunk, AiSdkError> {
        self.finished = true;
        let reason = match part.finish_reason.as_deref() {
            Some("stop") => FinishReason::Stop,
            Some("length") => FinishReason::Length,
            Some("tool-calls") => FinishReason::ToolCalls,
            Some("content-filter") => FinishReason::ContentFilter,
            Some("error" | "interrupted") => return Err(AiSdkError::FinishedInError),
            _ => FinishReason::Other,
        };
        Ok(ModelChunk::Finish {
            reason,
            usage: usage(part),
        })
    }
}

fn delta(part: &StreamPart) -> Result<Option<String>, AiSdkError> {
    match &part.delta {
        Some(text) if text.is_empty() => Ok(None),
        Some(text) => Ok(Some(text.clone())),
        None => Err(AiSdkError::InvalidPart("a delta part needs a string delta")),
    }
}

/// The finish's usage; a count that is absent or not an integer >= 0 is unknown. No usage
/// when neither count is known (a provider that streamed none).
fn usage(part: &StreamPart) -> Option<Usage> {
    let input = part.input_tokens.and_then(count);
    let output = part.output_tokens.and_then(count);
    if input.is_none() && output.is_none() {
        return None;
    }
    let mut usage = Usage::new(input.unwrap_or(0), output.unwrap_or(0));
    if let Some(total) = part.total_tokens.and_then(count) {
        usage.total_tokens = total;
    }
    Some(usage)
}

fn count(n: f64) -> Option<u64> {
    (n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= INTEGER_SAFE_MAX as f64)
        .then_some(n as u64)
}
