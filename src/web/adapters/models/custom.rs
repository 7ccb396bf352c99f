//! A host model: any object with `stream(request, { signal })` returning an async iterable (or
//! a Promise of one; a plain iterable also works) of chunks:
//!
//! - `{ type: 'text', text }`
//! - `{ type: 'reasoning', text }` (the model's thinking, kept in `metadata.reasoning`)
//! - `{ type: 'tool-call', index, id?, name?, argsDelta? }` (`argsDelta` defaults to `''`)
//! - `{ type: 'finish', reason, usage? }` with `reason` one of `stop`, `length`, `tool-calls`,
//!   `content-filter` (underscores accepted too; any other string counts as "other") and
//!   `usage` `{ promptTokens, completionTokens, totalTokens? }`.
//!
//! `request` is `{ messages, tools, settings }`: canonical messages, `{ name, description,
//! parameters, requiresConfirmation }` per tool, and the definition's call settings in the AI
//! SDK's names (`instructions`, `temperature`, `maxOutputTokens`, ...: only those set). A chunk of any other shape fails the call. An iterable that
//! ends without a finish chunk finishes with reason `stop`; nothing after a finish chunk is
//! read. `abort()` (or dropping the stream) aborts `signal` and calls the iterator's `return()`
//! so a generator's `finally` runs.

use js_sys::{Function, Symbol};
use serde_json::{json, Map, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::abort::AbortOnDrop;
use super::openai::call_quietly;
use super::reader::{ReadResult, ResultReader};
use crate::core::chat::model::{FinishReason, ModelChunk, ModelRequest, ToolSpec, Usage};
use crate::core::checks::safe_uint;
use crate::core::protocol::message::messages_to_value;
use crate::ports::chat::{ModelAdapter, ModelStream};
use crate::ports::{LocalFuture, PortError};
use crate::web::adapters::host::{port_error, signal_options};
use crate::web::convert::{from_json, to_json};
use crate::web::js::{get_fn, is_key, resolve};

/// A host object with `stream(request, { signal })`.
pub struct JsModel {
    host: JsValue,
    stream: Function,
}

impl JsModel {
    pub fn from_js(value: &JsValue) -> Result<Self, String> {
        let stream = get_fn(value, "stream").ok_or("model.stream must be a function")?;
        Ok(Self {
            host: value.clone(),
            stream,
        })
    }
}

impl ModelAdapter for JsModel {
    fn start(
        &self,
        request: ModelRequest,
    ) -> LocalFuture<'_, Result<Box<dyn ModelStream>, PortError>> {
        Box::pin(async move {
            let abort =
                AbortOnDrop::new().ok_or_else(|| PortError::new("AbortController is missing"))?;
            let options = signal_options(abort.signal().as_ref());
            let request = from_json(&request_value(&request));
            let iterable = resolve(self.stream.call2(&self.host, &request, &options))
                .await
                .map_err(|e| port_error("model.stream", &e))?;
            let iterator = iterator_of(&iterable).ok_or_else(|| {
                PortError::new("model.stream must return an async iterable of chunks")
            })?;
            Ok(Box::new(JsModelStream {
                abort,
                iterator,
                reader: ResultReader::new(),
                next: None,
                done: false,
                finished: false,
            }) as Box<dyn ModelStream>)
        })
    }
}

struct JsModelStream {
    abort: AbortOnDrop,
    iterator: JsValue,
    reader: ResultReader,
    /// The iterator's `next`, read once (as `for await` reads it once per loop).
    next: Option<Function>,
    /// No more `next()` calls: the iterator ended, failed, finished or was aborted.
    done: bool,
    /// A finish chunk was handed out.
    finished: bool,
}

impl JsModelStream {
    /// Stops the iterator: aborts the signal and calls `return()` (fire and forget).
    fn close(&mut self, clean: bool) {
        self.done = true;
        if clean {
            self.abort.disarm();
        } else {
            self.abort.abort();
        }
        call_quietly(&self.iterator, "return");
    }

    fn fail(&mut self, error: PortError) -> Option<Result<ModelChunk, PortError>> {
        self.close(false);
        Some(Err(error))
    }
}

impl ModelStream for JsModelStream {
    fn next_chunk(&mut self) -> LocalFuture<'_, Option<Result<ModelChunk, PortError>>> {
        Box::pin(async move {
            if self.done {
                return None;
            }
            if self.next.is_none() {
                self.next = get_fn(&self.iterator, "next");
            }
            let Some(next) = &self.next else {
                return self.fail(PortError::new("the model's iterator has no next()"));
            };
            let result = match self.reader.read(&self.iterator, next).await {
                Ok(result) => result,
                Err(e) => return self.fail(port_error("model.stream", &e)),
            };
            if result.done.as_bool() == Some(true) {
                self.done = true;
                self.abort.disarm();
                if self.finished {
                    return None;
                }
                self.finished = true;
                return Some(Ok(ModelChunk::Finish {
                    reason: FinishReason::Stop,
                    usage: None,
                }));
            }
            let chunk = match text_chunk(&result) {
                Some(text) => Ok(text),
                None => to_json(&result.value)
                    .map_err(|_| "it has no JSON form".to_string())
                    .and_then(|v| chunk_from_value(&v)),
            };
            match chunk {
                Ok(chunk) => {
                    if matches!(chunk, ModelChunk::Finish { .. }) {
                        self.finished = true;
                        self.close(true); // nothing after a finish is read
                    }
                    Some(Ok(chunk))
                }
                Err(why) => self.fail(PortError::new(format!(
                    "the model yielded an invalid chunk: {why}"
                ))),
            }
        })
    }

    fn abort(&mut self) {
        if !self.done {
            self.close(false);
        }
    }
}

impl Drop for JsModelStream {
    fn drop(&mut self) {
        if !self.done {
            self.close(false);
        }
    }
}

/// A `{ type: 'text', text }` chunk judged by its two fields, without a trip through JSON text:
/// a model yields one per token. Any other chunk (or a text chunk whose `text` is not a
/// string, for its diagnostic) goes through [`chunk_from_value`].
fn text_chunk(result: &ReadResult) -> Option<ModelChunk> {
    if !is_key(&result.kind, "text") {
        return None;
    }
    result.text.as_string().map(ModelChunk::Text)
}

/// `value[Symbol.asyncIterator]()`, else `value[Symbol.iterator]()`.
pub(crate) fn iterator_of(value: &JsValue) -> Option<JsValue> {
    if !value.is_object() {
        return None;
    }
    for symbol in [Symbol::async_iterator(), Symbol::iterator()] {
        let method = js_sys::Reflect::get(value, &symbol).ok()?;
        if let Ok(method) = method.dyn_into::<Function>() {
            let iterator = method.call0(value).ok()?;
            return iterator.is_object().then_some(iterator);
        }
    }
    None
}

/// The request as the host model sees it: `{ messages, tools, settings }`.
pub fn request_value(request: &ModelRequest) -> Value {
    json!({
        "messages": messages_to_value(&request.messages),
        "tools": request.tools.iter().map(tool_value).collect::<Vec<_>>(),
        "settings": request.settings.to_value(),
    })
}

fn tool_value(tool: &ToolSpec) -> Value {
    json!({
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        "requiresConfirmation": tool.requires_confirmation,
    })
}

/// Reads one chunk object; `Err` says what is wrong with it (never quoting its values).
pub fn chunk_from_value(value: &Value) -> Result<ModelChunk, String> {
    let chunk = value.as_object().ok_or("a chunk must be an object")?;
    match chunk.get("type").and_then(Value::as_str) {
        Some("text") => {
            let text = chunk
                .get("text")
                .and_then(Value::as_str)
                .ok_or("a text chunk needs a string text")?;
            Ok(ModelChunk::Text(text.to_owned()))
        }
        Some("reasoning") => {
            let text = chunk
                .get("text")
                .and_then(Value::as_str)
                .ok_or("a reasoning chunk needs a string text")?;
            Ok(ModelChunk::Reasoning(text.to_owned()))
        }
        Some("tool-call") => tool_call(chunk),
        Some("finish") => finish(chunk),
        _ => Err("a chunk's type must be 'text', 'reasoning', 'tool-call' or 'finish'".into()),
    }
}

fn tool_call(chunk: &Map<String, Value>) -> Result<ModelChunk, String> {
    let index = chunk
        .get("index")
        .and_then(safe_uint)
        .and_then(|i| u32::try_from(i).ok())
        .ok_or("a tool-call chunk needs an integer index >= 0")?;
    let text = |key: &str| -> Result<Option<String>, String> {
        match chunk.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!(
                "a tool-call chunk's {key} must be a string when given"
            )),
        }
    };
    Ok(ModelChunk::ToolCall {
        index,
        id: text("id")?.filter(|s| !s.is_empty()),
        name: text("name")?.filter(|s| !s.is_empty()),
        args_delta: text("argsDelta")?.unwrap_or_default(),
    })
}

fn finish(chunk: &Map<String, Value>) -> Result<ModelChunk, String> {
    let reason = match chunk.get("reason").and_then(Value::as_str) {
        Some("stop") => FinishReason::Stop,
        Some("length") => FinishReason::Length,
        Some("tool-calls" | "tool_calls") => FinishReason::ToolCalls,
        Some("content-filter" | "content_filter") => FinishReason::ContentFilter,
        Some(_) => FinishReason::Other,
        None => return Err("a finish chunk needs a string reason".into()),
    };
    let usage = match chunk.get("usage") {
        None | Some(Value::Null) => None,
        Some(u) => Some(usage(u)?),
    };
    Ok(ModelChunk::Finish { reason, usage })
}

fn usage(value: &Value) -> Result<Usage, String> {
    let bad = || {
        "usage must be { promptTokens, completionTokens, totalTokens? } of integers >= 0"
            .to_string()
    };
    let count = |key: &str| value.get(key).and_then(safe_uint).ok_or_else(bad);
    let mut usage = Usage::new(count("promptTokens")?, count("completionTokens")?);
    match value.get("totalTokens") {
        None | Some(Value::Null) => {}
        Some(total) => usage.total_tokens = safe_uint(total).ok_or_else(bad)?,
    }
    Ok(usage)
}
