//! An AgentsKit adapter (`@agentskit/core` `AdapterFactory`) as a model: any object with
//! `createSource(request)` returning a `StreamSource` `{ stream(), abort() }`, so the adapters
//! of an AgentsKit server (`chat: { adapter }`) run turnkeep turns unchanged.
//!
//! `request` is AgentsKit's `AdapterRequest`: `{ messages, context: { systemPrompt?,
//! temperature?, maxTokens?, tools } }`, messages with `createdAt` as a `Date` (the definition's
//! instructions first, as AgentsKit's controller puts its `systemPrompt`:
//! `core::chat::agentskit::adapter_messages`), tools as `{ name, description, schema,
//! requiresConfirmation }`.
//! The chunks `stream()` yields are translated by `core::chat::agentskit`. `abort()` is called
//! when the turn stops the call, when it is dropped and when a chunk fails it; the iterator's
//! `return()` runs too, so an async generator's `finally` runs.

use std::collections::VecDeque;

use js_sys::Function;
use wasm_bindgen::prelude::*;

use super::custom::iterator_of;
use super::openai::call_quietly;
use super::reader::ResultReader;
use crate::core::chat::agentskit::{adapter_messages, AgentsKitStream};
use crate::core::chat::model::{ModelChunk, ModelRequest, ToolSpec};
use crate::ports::chat::{ModelAdapter, ModelStream};
use crate::ports::{LocalFuture, PortError};
use crate::web::adapters::host::port_error;
use crate::web::convert::{from_json, messages_with_dates, to_json};
use crate::web::js::{get_fn, set};

/// A host object with `createSource(request)`.
pub struct AgentsKitAdapter {
    host: JsValue,
    create_source: Function,
}

impl AgentsKitAdapter {
    pub fn from_js(value: &JsValue) -> Result<Self, String> {
        let create_source =
            get_fn(value, "createSource").ok_or("adapter.createSource must be a function")?;
        Ok(Self {
            host: value.clone(),
            create_source,
        })
    }
}

impl ModelAdapter for AgentsKitAdapter {
    fn start(
        &self,
        request: ModelRequest,
    ) -> LocalFuture<'_, Result<Box<dyn ModelStream>, PortError>> {
        Box::pin(async move {
            let source = self
                .create_source
                .call1(&self.host, &request_js(&request))
                .map_err(|e| port_error("adapter.createSource", &e))?;
            let stream = get_fn(&source, "stream").ok_or_else(|| {
                PortError::new("adapter.createSource must return { stream, abort }")
            })?;
            let iterable = stream
                .call0(&source)
                .map_err(|e| port_error("source.stream", &e))?;
            let iterator = iterator_of(&iterable)
                .or_else(|| get_fn(&iterable, "next").map(|_| iterable.clone()))
                .ok_or_else(|| {
                    PortError::new("source.stream() must return an async iterator of chunks")
                })?;
            Ok(Box::new(AgentsKitModelStream {
                source,
                iterator,
                reader: ResultReader::new(),
                chunks: AgentsKitStream::new(),
                queue: VecDeque::new(),
                done: false,
            }) as Box<dyn ModelStream>)
        })
    }
}

/// AgentsKit's `AdapterRequest`.
fn request_js(request: &ModelRequest) -> JsValue {
    let settings = &request.settings;
    let tools = js_sys::Array::new();
    for tool in &request.tools {
        tools.push(&tool_js(tool));
    }
    let context = js_sys::Object::new();
    if let Some(prompt) = &settings.instructions {
        set(&context, "systemPrompt", prompt.as_str());
    }
    if let Some(t) = settings.temperature {
        set(&context, "temperature", t);
    }
    if let Some(n) = settings.max_output_tokens {
        set(&context, "maxTokens", n as f64);
    }
    set(&context, "tools", tools);
    let messages = adapter_messages(&request.messages, settings.instructions.as_deref());
    let out = js_sys::Object::new();
    set(&out, "messages", messages_with_dates(&messages));
    set(&out, "context", context);
    out.into()
}

fn tool_js(tool: &ToolSpec) -> JsValue {
    let out = js_sys::Object::new();
    set(&out, "name", tool.name.as_str());
    set(&out, "description", tool.description.as_str());
    set(&out, "schema", from_json(&tool.parameters));
    set(&out, "requiresConfirmation", tool.requires_confirmation);
    out.into()
}

struct AgentsKitModelStream {
    source: JsValue,
    iterator: JsValue,
    reader: ResultReader,
    chunks: AgentsKitStream,
    queue: VecDeque<ModelChunk>,
    /// No more `next()` calls: the iterator ended, failed, finished or was aborted.
    done: bool,
}

impl AgentsKitModelStream {
    /// Stops reading. A finished call only releases the iterator; any other end also aborts
    /// the source.
    fn close(&mut self, finished: bool) {
        self.done = true;
        if !finished {
            call_quietly(&self.source, "abort");
        }
        call_quietly(&self.iterator, "return");
    }

    fn fail(&mut self, error: PortError) -> Option<Result<ModelChunk, PortError>> {
        self.queue.clear();
        self.close(false);
        Some(Err(error))
    }
}

impl ModelStream for AgentsKitModelStream {
    fn next_chunk(&mut self) -> LocalFuture<'_, Option<Result<ModelChunk, PortError>>> {
        Box::pin(async move {
            loop {
                if let Some(chunk) = self.queue.pop_front() {
                    return Some(Ok(chunk));
                }
                if self.done {
                    return None;
                }
                let Some(next) = get_fn(&self.iterator, "next") else {
                    return self.fail(PortError::new("the adapter's iterator has no next()"));
                };
                let result = match self.reader.read(&self.iterator, &next).await {
                    Ok(result) => result,
                    Err(e) => return self.fail(port_error("source.stream", &e)),
                };
                if result.done.as_bool() == Some(true) {
                    self.done = true;
                    return self.chunks.end().map(Ok);
                }
                let pushed = to_json(&result.value)
                    .map_err(|_| "the adapter yielded a chunk with no JSON form")
                    .and_then(|chunk| self.chunks.push(&chunk).map_err(|e| e.message()));
                match pushed {
                    Ok(chunk) => self.queue.extend(chunk),
                    Err(why) => return self.fail(PortError::new(why)),
                }
                if self.chunks.is_finished() {
                    self.close(true); // `done`: nothing after it is read
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

impl Drop for AgentsKitModelStream {
    fn drop(&mut self) {
        if !self.done {
            self.close(false);
        }
    }
}
