//! The generated answer as it streams: what the generator yields (text deltas and usage), the
//! answer's bound, and the usage record a `done` event and the metrics report.

use serde_json::Value;

use super::diagnostic::AskFailure;
use super::fields::strict;
use super::text::{js_trim, trimmed_text};
use crate::checks::{safe_uint, utf16_len};
use crate::limits::{ASK_ANSWER_UNITS_MAX, ASK_MODEL_UNITS_MAX};
use crate::protocol::field::{FieldError, MUST_BE_SAFE_UINT};

/// One item a generator yields.
#[derive(Clone, Debug, PartialEq)]
pub enum GenerationChunk {
    /// `{ type: 'text', delta }`
    Text(String),
    /// `{ type: 'usage', usage }`
    Usage(AskUsage),
}

/// AgentsKit's usage record (every field optional).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AskUsage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub total_tokens: Option<u64>,
    pub cost_usd: Option<f64>,
    pub model: Option<String>,
}

pub fn decode_chunk(v: &Value) -> Result<GenerationChunk, FieldError> {
    match v.get("type").and_then(Value::as_str) {
        Some("text") => {
            let o = strict(v, "", &["type", "delta"])?;
            Ok(GenerationChunk::Text(o.string("delta")?))
        }
        Some("usage") => {
            let o = strict(v, "", &["type", "usage"])?;
            let usage = o
                .get("usage")
                .ok_or_else(|| FieldError::new("usage", "is required"))?;
            Ok(GenerationChunk::Usage(decode_usage(usage)?))
        }
        _ => Err(FieldError::new("type", "must be \"text\" or \"usage\"")),
    }
}

pub(crate) fn decode_usage(v: &Value) -> Result<AskUsage, FieldError> {
    let o = strict(
        v,
        "usage",
        &[
            "inputTokens",
            "outputTokens",
            "totalTokens",
            "costUsd",
            "model",
        ],
    )?;
    Ok(AskUsage {
        input_tokens: o.optional("inputTokens", MUST_BE_SAFE_UINT, safe_uint)?,
        output_tokens: o.optional("outputTokens", MUST_BE_SAFE_UINT, safe_uint)?,
        total_tokens: o.optional("totalTokens", MUST_BE_SAFE_UINT, safe_uint)?,
        cost_usd: o.optional("costUsd", "must be a finite number >= 0", |v| {
            v.as_f64().filter(|n| n.is_finite() && *n >= 0.0)
        })?,
        model: o.optional(
            "model",
            "must be a string of 1 to 256 UTF-16 units after trimming",
            |v| {
                v.as_str()
                    .and_then(|s| trimmed_text(s, ASK_MODEL_UNITS_MAX))
            },
        )?,
    })
}

/// The answer so far. [`Answer::push`] says whether a delta may be streamed.
#[derive(Debug, Default)]
pub struct Answer {
    text: String,
    units: usize,
}

impl Answer {
    /// Appends a delta. `Ok(false)`: an empty delta, nothing to stream. `Err`: the answer would
    /// pass its bound (the delta is not streamed).
    pub fn push(&mut self, delta: &str) -> Result<bool, AskFailure> {
        if delta.is_empty() {
            return Ok(false);
        }
        self.units += utf16_len(delta);
        if self.units > ASK_ANSWER_UNITS_MAX {
            return Err(AskFailure::AnswerTooLong);
        }
        self.text.push_str(delta);
        Ok(true)
    }

    /// The complete answer, or `AnswerEmpty` when it is blank.
    pub fn finish(&self) -> Result<&str, AskFailure> {
        if js_trim(&self.text).is_empty() {
            Err(AskFailure::AnswerEmpty)
        } else {
            Ok(&self.text)
        }
    }
}
