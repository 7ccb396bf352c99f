//! An AI SDK language model as a model: any object with `specificationVersion` `'v2'`, `'v3'`
//! or `'v4'` and `doStream(options)` (every `@ai-sdk/*` provider's model, `workers-ai-provider`,
//! `ai/test`'s mocks), driven directly: no `ai` package at run time.
//!
//! `doStream` gets the call options `core::chat::aisdk::call_options` built (the `URL`s it
//! lists made here) and `abortSignal`, which aborts when the turn stops the call or drops it.
//! Its `stream` (a `ReadableStream`, or any async iterable) is read one part at a time; each
//! part's fields are read here one by one into a `StreamPart` (parts are JS objects: a `Date`
//! in `response-metadata`, an `Error` or a plain object in `error`, bytes in `file`), and
//! `core::chat::aisdk::AiSdkStream` decides what it means. A rejected `doStream`, a read that
//! throws and an `error` part fail the call with fixed texts; what the model threw or streamed
//! is the `PortError`'s cause, for the operator's `onError`.

use std::collections::VecDeque;

use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::abort::AbortOnDrop;
use super::custom::iterator_of;
use super::openai::call_quietly;
use super::reader::{ReadResult, ResultReader};
use crate::core::chat::aisdk::{call_options, AiSdkError, AiSdkStream, SpecVersion, StreamPart};
use crate::core::chat::model::{ModelChunk, ModelRequest};
use crate::core::limits;
use crate::ports::chat::{ModelAdapter, ModelInfo, ModelStream};
use crate::ports::{LocalFuture, PortError};
use crate::web::adapters::host::port_error;
use crate::web::convert::from_json;
use crate::web::js::{get, get_fn, resolve, set};

/// A host's AI SDK model.
pub struct AiSdkModel {
    host: JsValue,
    do_stream: Function,
    version: SpecVersion,
    /// Its `provider` and `modelId`, for traces.
    info: ModelInfo,
}

impl AiSdkModel {
    /// True for what looks like an AI SDK model (a `specificationVersion` and a `doStream`).
    pub fn is_one(value: &JsValue) -> bool {
        get(value, "specificationVersion").is_string() && get_fn(value, "doStream").is_some()
    }

    pub fn from_js(value: &JsValue) -> Result<Self, String> {
        let version = get(value, "specificationVersion")
            .as_string()
            .and_then(|v| SpecVersion::parse(&v))
            .ok_or(
                "model.specificationVersion must be 'v2', 'v3' or 'v4' (an AI SDK language model)",
            )?;
        let do_stream = get_fn(value, "doStream").ok_or("model.doStream must be a function")?;
        // The AI SDK names providers `openai.chat`, `anthropic.messages`: the part before the
        // first dot is the OpenTelemetry provider name. Bounded like a descriptor's model name.
        let name = |key: &str| {
            get(value, key)
                .as_string()
                .filter(|s| !s.is_empty())
                .map(|s| {
                    s.chars()
                        .take(limits::MODEL_NAME_CHARS_MAX)
                        .collect::<String>()
                })
        };
        let info = ModelInfo {
            provider: name("provider").map(|p| p.split('.').next().unwrap_or_default().to_owned()),
            model: name("modelId"),
        };
        Ok(Self {
            host: value.clone(),
            do_stream,
            version,
            info,
        })
    }
}

impl ModelAdapter for AiSdkModel {
    fn start(
        &self,
        request: ModelRequest,
    ) -> LocalFuture<'_, Result<Box<dyn ModelStream>, PortError>> {
        Box::pin(async move {
            let abort =
                AbortOnDrop::new().ok_or_else(|| PortError::new("AbortController is missing"))?;
            let built = call_options(&request, self.version);
            let options = from_json(&built.value);
            for pointer in &built.urls {
                make_url(&options, pointer)?;
            }
            if let (Some(signal), Some(object)) =
                (abort.signal(), options.dyn_ref::<js_sys::Object>())
            {
                set(object, "abortSignal", signal);
            }
            let result = resolve(self.do_stream.call1(&self.host, &options))
                .await
                .map_err(|e| port_error("model.doStream", &e))?;
            let parts = get(&result, "stream");
            let (source, next) = reader_of(&parts).ok_or_else(|| {
                PortError::new("model.doStream must resolve to { stream: ReadableStream }")
            })?;
            Ok(Box::new(AiSdkModelStream {
                abort,
                source,
                next,
                reader: ResultReader::new(),
                parts: AiSdkStream::new(),
                queue: VecDeque::new(),
                done: false,
            }) as Box<dyn ModelStream>)
        })
    }

    fn describe(&self) -> ModelInfo {
        self.info.clone()
    }
}

/// The stream's reader and its `read` (or an async iterator and its `next`).
fn reader_of(stream: &JsValue) -> Option<(JsValue, Function)> {
    if let Some(get_reader) = get_fn(stream, "getReader") {
        let reader = get_reader.call0(stream).ok()?;
        let read = get_fn(&reader, "read")?;
        return Some((reader, read));
    }
    let iterator = iterator_of(stream)?;
    let next = get_fn(&iterator, "next")?;
    Some((iterator, next))
}

/// Replaces the string at JSON pointer `pointer` of `options` with `new URL(string)`.
fn make_url(options: &JsValue, pointer: &str) -> Result<(), PortError> {
    let bad = || PortError::new("a file part's source is not a valid URL");
    let steps: Vec<&str> = pointer.split('/').skip(1).collect();
    let Some((last, path)) = steps.split_last() else {
        return Err(bad());
    };
    let mut at = options.clone();
    for step in path {
        at = js_sys::Reflect::get(&at, &JsValue::from_str(step)).map_err(|_| bad())?;
    }
    let text = js_sys::Reflect::get(&at, &JsValue::from_str(last))
        .ok()
        .and_then(|v| v.as_string())
        .ok_or_else(bad)?;
    let url = web_sys::Url::new(&text).map_err(|_| bad())?;
    js_sys::Reflect::set(&at, &JsValue::from_str(last), &url).map_err(|_| bad())?;
    Ok(())
}

struct AiSdkModelStream {
    abort: AbortOnDrop,
    /// The stream's reader (or iterator).
    source: JsValue,
    /// Its `read` (or `next`).
    next: Function,
    reader: ResultReader,
    parts: AiSdkStream,
    queue: VecDeque<ModelChunk>,
    /// No more reads: the stream finished, failed or was aborted.
    done: bool,
}

impl AiSdkModelStream {
    /// Stops reading. A finished call only releases the stream; any other end aborts the call.
    fn close(&mut self, finished: bool) {
        self.done = true;
        if finished {
            self.abort.disarm();
        } else {
            self.abort.abort();
        }
        call_quietly(&self.source, "cancel");
        call_quietly(&self.source, "return");
    }

    fn fail(&mut self, error: PortError) -> Option<Result<ModelChunk, PortError>> {
        self.queue.clear();
        self.close(false);
        Some(Err(error))
    }
}

impl ModelStream for AiSdkModelStream {
    fn next_chunk(&mut self) -> LocalFuture<'_, Option<Result<ModelChunk, PortError>>> {
        Box::pin(async move {
            loop {
                if let Some(chunk) = self.queue.pop_front() {
                    return Some(Ok(chunk));
                }
                if self.done {
                    return None;
                }
                let result = match self.reader.read(&self.source, &self.next).await {
                    Ok(result) => result,
                    Err(e) => return self.fail(port_error("model stream", &e)),
                };
                if result.done.as_bool() == Some(true) {
                    self.done = true;
                    return match self.parts.end() {
                        Ok(()) => None,
                        Err(e) => self.fail(PortError::new(e.message())),
                    };
                }
                let part = read_part(&result);
                match self.parts.push(&part) {
                    Ok(chunk) => self.queue.extend(chunk),
                    Err(e @ AiSdkError::Reported) => {
                        let cause = get(&result.value, "error");
                        return self
                            .fail(PortError::with_cause(e.message(), std::rc::Rc::new(cause)));
                    }
                    Err(e) => return self.fail(PortError::new(e.message())),
                }
                if self.parts.is_finished() {
                    self.close(true); // nothing after the finish is read
                }
            }
        })
    }

    fn abort(&mut self) {
        self.queue.clear();
        if !self.done {
            self.close(false);
        }
    }
}

impl Drop for AiSdkModelStream {
    fn drop(&mut self) {
        if !self.done {
            self.close(false);
        }
    }
}

/// The fields of one part this adapter reads, by its type (nothing is judged here).
fn read_part(result: &ReadResult) -> StreamPart {
    let value = &result.value;
    let kind = result.kind.as_string().unwrap_or_default();
    let text = |key: &str| get(value, key).as_string();
    let mut part = StreamPart {
        kind,
        ..StreamPart::default()
    };
    match part.kind.as_str() {
        "text-delta" | "reasoning-delta" => part.delta = text("delta"),
        "tool-call" => {
            part.tool_call_id = text("toolCallId");
            part.tool_name = text("toolName");
            part.input = text("input");
            part.provider_executed = get(value, "providerExecuted").as_bool() == Some(true);
        }
        "finish" => {
            // V2: a string; V3 and V4: `{ unified, raw }`.
            let reason = get(value, "finishReason");
            part.finish_reason = reason
                .as_string()
                .or_else(|| get(&reason, "unified").as_string());
            // V2: flat numbers; V3 and V4: `{ total, ... }` per direction.
            let usage = get(value, "usage");
            let count = |key: &str| {
                let n = get(&usage, key);
                n.as_f64().or_else(|| get(&n, "total").as_f64())
            };
            part.input_tokens = count("inputTokens");
            part.output_tokens = count("outputTokens");
            part.total_tokens = get(&usage, "totalTokens").as_f64();
        }
        _ => {}
    }
    part
}
