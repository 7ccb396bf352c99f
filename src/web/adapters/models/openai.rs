//! The OpenAI-compatible model over the host's global `fetch`: `POST {baseUrl}/chat/completions`
//! with the body from `core::chat::openai::request_body` (`stream: true`) and
//! `Authorization: Bearer <apiKey>` when a key is set. The response body is read chunk by
//! chunk as the controller asks for model chunks and fed to the pure `OpenAiStream` parser, so
//! nothing is buffered beyond one network read.
//!
//! Failures are `PortError`s with fixed texts (an HTTP status number at most): provider error
//! bodies and network error messages are never quoted, so nothing upstream leaks. The fetch
//! is aborted through an `AbortController` on `abort()`, on drop, and when `start` is dropped
//! before the response arrived.

use std::collections::VecDeque;

use js_sys::{Object, Uint8Array};
use wasm_bindgen::prelude::*;

use super::abort::AbortOnDrop;
use super::descriptor::{openai_settings, OpenAiSettings};
use crate::core::chat::model::{ModelChunk, ModelRequest};
use crate::core::chat::openai::{request_body, OpenAiRequestOptions, OpenAiStream};
use crate::ports::chat::{ModelAdapter, ModelInfo, ModelStream};
use crate::ports::{LocalFuture, PortError};
use crate::web::js::{call_method, get, get_fn, resolve, set};

/// An OpenAI-compatible streaming chat endpoint.
#[derive(Clone, Debug)]
pub struct OpenAiModel {
    settings: OpenAiSettings,
}

impl OpenAiModel {
    /// From `{ kind: 'turnkeep.openai-compatible', baseUrl, apiKey?, model, includeUsage? }`.
    pub fn from_descriptor(descriptor: &JsValue) -> Result<Self, String> {
        openai_settings(descriptor).map(|settings| Self { settings })
    }

    /// `{baseUrl}/chat/completions`.
    pub fn endpoint(&self) -> String {
        format!("{}/chat/completions", self.settings.base_url)
    }

    fn fetch_init(&self, request: &ModelRequest, abort: &AbortOnDrop) -> JsValue {
        let options = OpenAiRequestOptions {
            model: self.settings.model.clone(),
            include_usage: self.settings.include_usage,
        };
        let headers = Object::new();
        set(&headers, "content-type", "application/json");
        set(&headers, "accept", "text/event-stream");
        if let Some(key) = &self.settings.api_key {
            set(&headers, "authorization", format!("Bearer {key}"));
        }
        let init = Object::new();
        set(&init, "method", "POST");
        set(&init, "headers", headers);
        set(&init, "body", request_body(request, &options).to_string());
        if let Some(signal) = abort.signal() {
            set(&init, "signal", signal);
        }
        init.into()
    }
}

impl ModelAdapter for OpenAiModel {
    fn start(
        &self,
        request: ModelRequest,
    ) -> LocalFuture<'_, Result<Box<dyn ModelStream>, PortError>> {
        Box::pin(async move {
            let abort =
                AbortOnDrop::new().ok_or_else(|| PortError::new("AbortController is missing"))?;
            let global = js_sys::global();
            let fetch = get_fn(&global, "fetch")
                .ok_or_else(|| PortError::new("the global fetch is missing"))?;
            let init = self.fetch_init(&request, &abort);
            let url = JsValue::from_str(&self.endpoint());
            let response = resolve(fetch.call2(&global, &url, &init))
                .await
                .map_err(|_| PortError::new("the model endpoint could not be reached"))?;
            let status = get(&response, "status").as_f64().unwrap_or(0.0);
            let body = get(&response, "body");
            if !(200.0..300.0).contains(&status) {
                call_quietly(&body, "cancel"); // a body nobody will read
                return Err(PortError::new(format!(
                    "the model endpoint answered HTTP {status}"
                )));
            }
            let reader = call_method(&body, "getReader", &[])
                .await
                .map_err(|_| PortError::new("the model endpoint sent no response body"))?;
            Ok(Box::new(OpenAiModelStream {
                abort,
                reader,
                parser: OpenAiStream::new(),
                queue: VecDeque::new(),
                done: false,
            }) as Box<dyn ModelStream>)
        })
    }

    /// The model it names; the provider behind an OpenAI-compatible endpoint is unknown.
    fn describe(&self) -> ModelInfo {
        ModelInfo {
            provider: None,
            model: Some(self.settings.model.clone()),
        }
    }
}

struct OpenAiModelStream {
    abort: AbortOnDrop,
    /// The response body's `ReadableStreamDefaultReader`.
    reader: JsValue,
    parser: OpenAiStream,
    /// Chunks parsed from one network read, handed out one per `next_chunk`.
    queue: VecDeque<ModelChunk>,
    /// No more reads: the stream finished, failed or was aborted.
    done: bool,
}

impl OpenAiModelStream {
    /// The next network read: `Ok(None)` at the end of the body.
    async fn read(&self) -> Result<Option<Vec<u8>>, PortError> {
        let broke = || PortError::new("the model stream broke off");
        let result = call_method(&self.reader, "read", &[])
            .await
            .map_err(|_| broke())?;
        if get(&result, "done").as_bool() == Some(true) {
            return Ok(None);
        }
        let value = get(&result, "value");
        if !value.is_object() {
            return Err(broke());
        }
        Ok(Some(Uint8Array::new(&value).to_vec()))
    }

    /// Stops reading; the connection is released (finished) or torn down (failed, aborted).
    fn close(&mut self, finished_cleanly: bool) {
        self.done = true;
        if finished_cleanly {
            self.abort.disarm();
        } else {
            self.abort.abort();
        }
        call_quietly(&self.reader, "cancel");
    }

    fn fail(&mut self, message: &str) -> Option<Result<ModelChunk, PortError>> {
        self.queue.clear();
        self.close(false);
        Some(Err(PortError::new(message)))
    }
}

impl ModelStream for OpenAiModelStream {
    fn next_chunk(&mut self) -> LocalFuture<'_, Option<Result<ModelChunk, PortError>>> {
        Box::pin(async move {
            loop {
                if let Some(chunk) = self.queue.pop_front() {
                    return Some(Ok(chunk));
                }
                if self.done {
                    return None;
                }
                // A read that failed part way gave its earlier chunks first (now used up).
                if let Some(e) = self.parser.failure() {
                    return self.fail(e.message());
                }
                let parsed = match self.read().await {
                    Ok(Some(bytes)) => self.parser.push(&bytes),
                    Ok(None) => {
                        self.done = true;
                        self.parser.end()
                    }
                    Err(e) => return self.fail(&e.message),
                };
                match parsed {
                    Ok(chunks) => self.queue.extend(chunks),
                    Err(e) => return self.fail(e.message()),
                }
                if self.parser.is_finished() && !self.done {
                    self.close(true); // `[DONE]` came: later bytes mean nothing
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

impl Drop for OpenAiModelStream {
    fn drop(&mut self) {
        if !self.done {
            self.close(false);
        }
    }
}

/// Calls `obj[method]()` if it is a function, fire and forget: a throw is ignored and a
/// returned promise's rejection swallowed (see [`swallow_rejection`]).
pub(crate) fn call_quietly(obj: &JsValue, method: &str) {
    if let Some(f) = get_fn(obj, method) {
        if let Ok(p) = f.call0(obj) {
            swallow_rejection(&p);
        }
    }
}

/// Attaches a no-op rejection handler so a fire-and-forget promise never reports as unhandled.
pub(crate) fn swallow_rejection(value: &JsValue) {
    if let Some(catch) = get_fn(value, "catch") {
        let noop = Closure::once_into_js(|_: JsValue| {});
        let _ = catch.call1(value, &noop);
    }
}
