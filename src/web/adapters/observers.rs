//! AgentsKit's `chat.observers` (`{ name, on(event) }`) and `chat.onError(error)`, honoured: the
//! definition's model, tools and memory are wrapped so that each observer is told AgentsKit's
//! `AgentEvent`s as a turn runs:
//!
//! | event | when |
//! |---|---|
//! | `{ type: 'llm:start', messageCount }` | a model call starts |
//! | `{ type: 'llm:first-token', latencyMs }` | its first text arrives |
//! | `{ type: 'llm:end', content, usage?, durationMs }` | it finished (`usage` `{ promptTokens, completionTokens }`) |
//! | `{ type: 'tool:start', name, args }` / `{ type: 'tool:end', name, result, durationMs }` | a tool runs (a failed one ends with `result: 'Error: …'`) |
//! | `{ type: 'memory:load', messageCount }` / `{ type: 'memory:save', messageCount }` | the conversation was loaded / saved |
//! | `{ type: 'error', error }` | a model call or a tool failed (`onError` gets the same error) |
//!
//! The error is what the model or tool threw when there is one, else an `Error` with the
//! failure's fixed text. An observer that throws or rejects is ignored (as it cannot change the
//! turn). Times come from the host's `Date.now()`: they are measurements, not decisions.

use std::rc::Rc;

use js_sys::{Array, Function, Object};
use serde_json::{Map, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::models::swallow_rejection;
use crate::core::chat::model::{ModelChunk, ModelRequest, ToolSpec};
use crate::core::limits::OBSERVERS_PER_CHAT_MAX;
use crate::core::protocol::Message;
use crate::ports::chat::{
    CancelToken, ChatMemory, ModelAdapter, ModelStream, Tool, ToolContext, ToolFailure,
};
use crate::ports::{LocalFuture, PortError};
use crate::web::convert::from_json;
use crate::web::js::{get_fn, set};

/// The observers and `onError` of one definition.
pub struct Observers {
    list: Vec<(JsValue, Function)>,
    on_error: Option<Function>,
}

impl Observers {
    /// From `chat.observers` and `chat.onError`; `None` when neither is set.
    pub fn from_js(observers: &JsValue, on_error: &JsValue) -> Result<Option<Rc<Self>>, String> {
        let mut list = Vec::new();
        if !observers.is_undefined() && !observers.is_null() {
            let array = observers
                .dyn_ref::<Array>()
                .ok_or("chat.observers must be an array of { name, on(event) }")?;
            if array.length() as usize > OBSERVERS_PER_CHAT_MAX {
                return Err(format!(
                    "chat.observers has more than {OBSERVERS_PER_CHAT_MAX} observers"
                ));
            }
            for (i, observer) in array.iter().enumerate() {
                let on = get_fn(&observer, "on").ok_or_else(|| {
                    format!("chat.observers[{i}] must be an object with on(event)")
                })?;
                list.push((observer, on));
            }
        }
        let on_error = match on_error {
            f if f.is_undefined() || f.is_null() => None,
            f => Some(
                f.dyn_ref::<Function>()
                    .cloned()
                    .ok_or("chat.onError must be a function")?,
            ),
        };
        if list.is_empty() && on_error.is_none() {
            return Ok(None);
        }
        Ok(Some(Rc::new(Self { list, on_error })))
    }

    fn emit(&self, kind: &str, fields: &[(&str, JsValue)]) {
        if self.list.is_empty() {
            return;
        }
        let event = Object::new();
        set(&event, "type", kind);
        for (key, value) in fields {
            set(&event, key, value.clone());
        }
        for (host, on) in &self.list {
            if let Ok(returned) = on.call1(host, &event) {
                swallow_rejection(&returned);
            }
        }
    }

    /// An `error` event and `onError`, with the failure's cause when it is an `Error`.
    fn failed(&self, error: &PortError) {
        let value = error
            .cause
            .as_ref()
            .and_then(|c| c.downcast_ref::<JsValue>())
            .filter(|v| v.is_instance_of::<js_sys::Error>())
            .cloned()
            .unwrap_or_else(|| js_sys::Error::new(&error.message).into());
        self.emit("error", &[("error", value.clone())]);
        if let Some(on_error) = &self.on_error {
            if let Ok(returned) = on_error.call1(&JsValue::NULL, &value) {
                swallow_rejection(&returned);
            }
        }
    }
}

fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// A model whose calls the observers are told about.
pub struct ObservedModel {
    pub inner: Rc<dyn ModelAdapter>,
    pub observers: Rc<Observers>,
}

impl ModelAdapter for ObservedModel {
    fn start(
        &self,
        request: ModelRequest,
    ) -> LocalFuture<'_, Result<Box<dyn ModelStream>, PortError>> {
        Box::pin(async move {
            let began = now_ms();
            let count = request.messages.len() as f64;
            self.observers
                .emit("llm:start", &[("messageCount", JsValue::from(count))]);
            match self.inner.start(request).await {
                Ok(stream) => Ok(Box::new(ObservedStream {
                    inner: stream,
                    observers: self.observers.clone(),
                    began,
                    first: false,
                    content: String::new(),
                    usage: None,
                }) as Box<dyn ModelStream>),
                Err(e) => {
                    self.observers.failed(&e);
                    Err(e)
                }
            }
        })
    }

    fn describe(&self) -> crate::ports::chat::ModelInfo {
        self.inner.describe()
    }
}

struct ObservedStream {
    inner: Box<dyn ModelStream>,
    observers: Rc<Observers>,
    began: f64,
    first: bool,
    content: String,
    usage: Option<(u64, u64)>,
}

impl ModelStream for ObservedStream {
    fn next_chunk(&mut self) -> LocalFuture<'_, Option<Result<ModelChunk, PortError>>> {
        Box::pin(async move {
            let next = self.inner.next_chunk().await;
            match &next {
                Some(Ok(ModelChunk::Text(text))) => {
                    if !self.first {
                        self.first = true;
                        let latency = now_ms() - self.began;
                        self.observers
                            .emit("llm:first-token", &[("latencyMs", JsValue::from(latency))]);
                    }
                    self.content.push_str(text);
                }
                Some(Ok(ModelChunk::Finish { usage: Some(u), .. })) => {
                    self.usage = Some((u.prompt_tokens, u.completion_tokens));
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => self.observers.failed(e),
                None => {
                    let mut fields = vec![("content", JsValue::from_str(&self.content))];
                    if let Some((prompt, completion)) = self.usage {
                        let usage = Object::new();
                        set(&usage, "promptTokens", prompt as f64);
                        set(&usage, "completionTokens", completion as f64);
                        fields.push(("usage", usage.into()));
                    }
                    fields.push(("durationMs", JsValue::from(now_ms() - self.began)));
                    self.observers.emit("llm:end", &fields);
                }
            }
            next
        })
    }

    fn abort(&mut self) {
        self.inner.abort();
    }
}

/// A tool whose runs the observers are told about.
pub struct ObservedTool {
    pub inner: Box<dyn Tool>,
    pub observers: Rc<Observers>,
}

impl Tool for ObservedTool {
    fn spec(&self) -> &ToolSpec {
        self.inner.spec()
    }

    fn execute(
        &self,
        args: Map<String, Value>,
        context: ToolContext,
    ) -> LocalFuture<'_, Result<String, ToolFailure>> {
        Box::pin(async move {
            let name = JsValue::from_str(&self.spec().name);
            let began = now_ms();
            self.observers.emit(
                "tool:start",
                &[
                    ("name", name.clone()),
                    ("args", from_json(&Value::Object(args.clone()))),
                ],
            );
            let outcome = self.inner.execute(args, context).await;
            let result = match &outcome {
                Ok(text) => text.clone(),
                Err(ToolFailure::Failed(e)) => {
                    self.observers.failed(e);
                    format!("Error: {}", e.message)
                }
                Err(ToolFailure::InvalidInput(issues)) => issues.text(&self.spec().name),
            };
            self.observers.emit(
                "tool:end",
                &[
                    ("name", name),
                    ("result", JsValue::from_str(&result)),
                    ("durationMs", JsValue::from(now_ms() - began)),
                ],
            );
            outcome
        })
    }
}

/// A memory whose loads and saves the observers are told about.
pub struct ObservedMemory {
    pub inner: Rc<dyn ChatMemory>,
    pub observers: Rc<Observers>,
}

impl ChatMemory for ObservedMemory {
    fn load<'a>(
        &'a self,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Vec<Message>, PortError>> {
        Box::pin(async move {
            let loaded = self.inner.load(cancel).await?;
            if !loaded.is_empty() {
                let count = JsValue::from(loaded.len() as f64);
                self.observers
                    .emit("memory:load", &[("messageCount", count)]);
            }
            Ok(loaded)
        })
    }

    fn save<'a>(
        &'a self,
        messages: &'a [Message],
        fence: Option<u64>,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<(), PortError>> {
        Box::pin(async move {
            self.inner.save(messages, fence, cancel).await?;
            let count = JsValue::from(messages.len() as f64);
            self.observers
                .emit("memory:save", &[("messageCount", count)]);
            Ok(())
        })
    }
}
