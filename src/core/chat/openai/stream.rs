//! Translates an OpenAI-compatible event stream into [`ModelChunk`]s.
//!
//! Each `data:` event is a `chat.completion.chunk`: `choices[0].delta.content` is text,
//! `choices[0].delta.tool_calls[]` are tool-call fragments, `choices[0].finish_reason` says why
//! the model stopped and an optional `usage` (often on a last chunk with no choices) counts
//! tokens. `data: [DONE]` ends the stream. The finish reason and usage are held back and
//! emitted as one [`ModelChunk::Finish`] when the stream ends, because usage may follow the
//! finish reason.

use serde_json::Value;

use crate::chat::model::{FinishReason, ModelChunk, Usage};
use crate::checks::safe_uint;
use crate::sse::{SseError, SseEvent, SseParser};

/// Why a stream could not be translated. Messages are fixed texts: provider error bodies are
/// never echoed, so nothing from upstream leaks to a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenAiError {
    /// The byte stream broke an event-stream size limit.
    Sse(SseError),
    /// An event's data is not a `chat.completion.chunk` this module can read.
    InvalidChunk,
    /// The provider reported an error inside the stream (`{"error": ...}` or `event: error`).
    Provider,
    /// The body ended before `[DONE]` and before any finish reason.
    Truncated,
}

impl OpenAiError {
    pub fn message(self) -> &'static str {
        match self {
            OpenAiError::Sse(e) => e.message(),
            OpenAiError::InvalidChunk => {
                "the model stream sent a chunk that is not a valid chat.completion.chunk"
            }
            OpenAiError::Provider => "the model provider reported an error in the stream",
            OpenAiError::Truncated => "the model stream ended before it finished",
        }
    }
}

impl std::fmt::Display for OpenAiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

/// The pieces one chunk carries, before the stream decides when to emit the finish.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TranslatedChunk {
    /// Text and tool-call chunks, in the order the chunk lists them.
    pub chunks: Vec<ModelChunk>,
    pub finish_reason: Option<FinishReason>,
    pub usage: Option<Usage>,
}

/// Response bytes in, model chunks out. The chunks do not depend on how the body was cut
/// into reads: a failure inside one read still delivers the chunks of the events before it.
#[derive(Debug, Default)]
pub struct OpenAiStream {
    sse: SseParser,
    finish_reason: Option<FinishReason>,
    usage: Option<Usage>,
    /// `Finish` was emitted; later bytes are ignored.
    finished: bool,
    /// The stream failed; every later call reports this.
    failed: Option<OpenAiError>,
}

impl OpenAiStream {
    pub fn new() -> Self {
        Self::default()
    }

    /// Consumes response bytes; returns the chunks they complete (a `Finish` at `[DONE]`).
    ///
    /// When an event of these bytes fails after earlier events gave chunks, those chunks are
    /// returned and the failure is kept: [`OpenAiStream::failure`] says so at once, and every
    /// later `push` or `end` returns it. (Returning only the error would drop chunks that a
    /// body cut into other reads delivers.)
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<ModelChunk>, OpenAiError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        if self.finished {
            return Ok(Vec::new());
        }
        let events = match self.sse.push(bytes) {
            Ok(events) => events,
            Err(e) => return Err(self.fail(OpenAiError::Sse(e))),
        };
        let mut out = Vec::new();
        for event in events {
            if self.finished {
                break;
            }
            if let Err(e) = self.on_event(&event, &mut out) {
                self.fail(e);
                break;
            }
        }
        match self.failed {
            Some(e) if out.is_empty() => Err(e),
            _ => Ok(out),
        }
    }

    /// The body ended. Emits the held `Finish` when a finish reason was seen without `[DONE]`;
    /// a body that ends with neither is [`OpenAiError::Truncated`].
    pub fn end(&mut self) -> Result<Vec<ModelChunk>, OpenAiError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        if self.finished {
            return Ok(Vec::new());
        }
        match self.finish_reason {
            Some(_) => Ok(vec![self.take_finish()]),
            None => Err(OpenAiError::Truncated),
        }
    }

    /// True once the `Finish` chunk was emitted.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The failure that ended the stream, if any: the caller stops reading once the chunks
    /// already returned are used up.
    pub fn failure(&self) -> Option<OpenAiError> {
        self.failed
    }

    fn fail(&mut self, e: OpenAiError) -> OpenAiError {
        self.failed = Some(e);
        e
    }

    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<ModelChunk>) -> Result<(), OpenAiError> {
        if event.event == "error" {
            return Err(OpenAiError::Provider);
        }
        if event.data.trim() == "[DONE]" {
            out.push(self.take_finish());
            return Ok(());
        }
        let value: Value =
            serde_json::from_str(&event.data).map_err(|_| OpenAiError::InvalidChunk)?;
        let translated = translate_chunk(&value)?;
        out.extend(translated.chunks);
        if translated.finish_reason.is_some() {
            self.finish_reason = translated.finish_reason;
        }
        if translated.usage.is_some() {
            self.usage = translated.usage;
        }
        Ok(())
    }

    fn take_finish(&mut self) -> ModelChunk {
        self.finished = true;
        ModelChunk::Finish {
            reason: self.finish_reason.unwrap_or(FinishReason::Stop),
            usage: self.usage,
        }
    }
}

/// Reads one `chat.completion.chunk` JSON value. Absent and `null` fields are empty; a field of
/// the wrong type is [`OpenAiError::InvalidChunk`]; `{"error": ...}` is [`OpenAiError::Provider`].
pub fn translate_chunk(value: &Value) -> Result<TranslatedChunk, OpenAiError> {
    let chunk = value.as_object().ok_or(OpenAiError::InvalidChunk)?;
    if present(chunk.get("error")).is_some() {
        return Err(OpenAiError::Provider);
    }
    let mut out = TranslatedChunk {
        usage: read_usage(chunk.get("usage"))?,
        ..TranslatedChunk::default()
    };
    let choices = optional_array(chunk.get("choices"))?;
    let Some(choice) = choices.first() else {
        return Ok(out);
    };
    let choice = choice.as_object().ok_or(OpenAiError::InvalidChunk)?;
    out.finish_reason = optional_str(choice.get("finish_reason"))?.map(finish_reason);
    let Some(delta) = present(choice.get("delta")) else {
        return Ok(out);
    };
    let delta = delta.as_object().ok_or(OpenAiError::InvalidChunk)?;
    if let Some(text) = optional_str(delta.get("content"))?.filter(|t| !t.is_empty()) {
        out.chunks.push(ModelChunk::Text(text.to_owned()));
    }
    for (position, call) in optional_array(delta.get("tool_calls"))?.iter().enumerate() {
        out.chunks.push(read_tool_call(call, position)?);
    }
    Ok(out)
}

fn read_tool_call(call: &Value, position: usize) -> Result<ModelChunk, OpenAiError> {
    let call = call.as_object().ok_or(OpenAiError::InvalidChunk)?;
    let index = match present(call.get("index")) {
        Some(v) => safe_uint(v).ok_or(OpenAiError::InvalidChunk)?,
        None => position as u64, // a few servers omit it; the list position is the index
    };
    let index = u32::try_from(index).map_err(|_| OpenAiError::InvalidChunk)?;
    let function = match present(call.get("function")) {
        Some(f) => Some(f.as_object().ok_or(OpenAiError::InvalidChunk)?),
        None => None,
    };
    let field = |key: &str| function.map_or(Ok(None), |f| optional_str(f.get(key)));
    Ok(ModelChunk::ToolCall {
        index,
        id: optional_str(call.get("id"))?
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
        name: field("name")?.filter(|s| !s.is_empty()).map(str::to_owned),
        args_delta: field("arguments")?.unwrap_or_default().to_owned(),
    })
}

fn finish_reason(s: &str) -> FinishReason {
    match s {
        "stop" => FinishReason::Stop,
        "length" => FinishReason::Length,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "content_filter" => FinishReason::ContentFilter,
        _ => FinishReason::Other,
    }
}

fn read_usage(v: Option<&Value>) -> Result<Option<Usage>, OpenAiError> {
    let Some(v) = present(v) else { return Ok(None) };
    let usage = v.as_object().ok_or(OpenAiError::InvalidChunk)?;
    let count = |key: &str| match present(usage.get(key)) {
        Some(n) => safe_uint(n).ok_or(OpenAiError::InvalidChunk),
        None => Ok(0),
    };
    let (prompt, completion) = (count("prompt_tokens")?, count("completion_tokens")?);
    let mut usage = Usage::new(prompt, completion);
    if let Some(total) = present(v.get("total_tokens")) {
        usage.total_tokens = safe_uint(total).ok_or(OpenAiError::InvalidChunk)?;
    }
    Ok(Some(usage))
}

/// `None` for an absent or `null` field.
fn present(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

fn optional_str(v: Option<&Value>) -> Result<Option<&str>, OpenAiError> {
    match present(v) {
        Some(v) => v.as_str().map(Some).ok_or(OpenAiError::InvalidChunk),
        None => Ok(None),
    }
}

fn optional_array(v: Option<&Value>) -> Result<&[Value], OpenAiError> {
    match present(v) {
        Some(v) => v
            .as_array()
            .map(Vec::as_slice)
            .ok_or(OpenAiError::InvalidChunk),
        None => Ok(&[]),
    }
}
