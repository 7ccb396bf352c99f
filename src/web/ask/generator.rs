//! The Ask generator: either AgentsKit's `{ generate(input) }` returning an async iterable of
//! `{ type: 'text', delta }` / `{ type: 'usage', usage }`, or a turnkeep chat model
//! (`createDemoModel()`, `createOpenAICompatibleModel()`, `{ stream() }`) sent the grounded
//! prompt of `core::ask::prompt`. Both end up as one stream of [`GenerationChunk`]s.

use js_sys::Function;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::core::ask::answer::{decode_chunk, GenerationChunk};
use crate::core::ask::prompt::{ask_usage, grounded_request};
use crate::core::ask::request::AskMessage;
use crate::core::ask::sources::Source;
use crate::core::chat::model::ModelChunk;
use crate::ports::chat::{ModelAdapter, ModelStream};
use crate::web::adapters::host::describe;
use crate::web::adapters::models::{call_quietly, iterator_of, model_from_js};
use crate::web::convert::to_json;
use crate::web::js::{get, get_fn, resolve};

pub enum GeneratorSource {
    Js { host: JsValue, generate: Function },
    Model(Box<dyn ModelAdapter>),
}

/// What a generation is about. `input` is the JS object a `{ generate }` generator receives.
pub struct GenerationInput<'a> {
    pub input: JsValue,
    pub conversation: &'a [AskMessage],
    pub sources: &'a [Source],
    pub created_at: String,
}

impl GeneratorSource {
    pub fn from_js(value: &JsValue) -> Result<Self, String> {
        if let Some(generate) = get_fn(value, "generate") {
            return Ok(Self::Js {
                host: value.clone(),
                generate,
            });
        }
        model_from_js(value).map(Self::Model).map_err(|why| {
            format!("generator must be {{ generate(input) }} or a chat model: {why}")
        })
    }

    /// Starts one generation. `Err` carries the cause (for the operator).
    pub async fn start(&self, input: GenerationInput<'_>) -> Result<Generation, String> {
        match self {
            Self::Js { host, generate } => {
                let args = js_sys::Array::of1(&input.input);
                let iterable = resolve(generate.apply(host, &args))
                    .await
                    .map_err(|e| format!("generator.generate failed: {}", describe(&e)))?;
                let iterator = iterator_of(&iterable)
                    .ok_or("generator.generate must return an async iterable")?;
                Ok(Generation::Js {
                    iterator,
                    done: false,
                })
            }
            Self::Model(model) => {
                let request =
                    grounded_request(input.conversation, input.sources, &input.created_at);
                let stream = model.start(request).await.map_err(|e| e.to_string())?;
                Ok(Generation::Model(stream))
            }
        }
    }
}

pub enum Generation {
    Js { iterator: JsValue, done: bool },
    Model(Box<dyn ModelStream>),
}

impl Generation {
    /// The next chunk; `None` at the end; `Some(Err(cause))` when the generator failed.
    pub async fn next(&mut self) -> Option<Result<GenerationChunk, String>> {
        match self {
            Self::Js { iterator, done } => {
                if *done {
                    return None;
                }
                let next = get_fn(iterator, "next")?;
                let step = match resolve(next.call0(iterator)).await {
                    Ok(step) => step,
                    Err(e) => {
                        *done = true;
                        return Some(Err(format!("the generator failed: {}", describe(&e))));
                    }
                };
                if get(&step, "done").as_bool() == Some(true) {
                    *done = true;
                    return None;
                }
                let chunk = to_json(&get(&step, "value"))
                    .and_then(|v: Value| decode_chunk(&v).map_err(|e| e.message()))
                    .map_err(|why| format!("the generator yielded an invalid chunk: {why}"));
                Some(chunk)
            }
            Self::Model(stream) => loop {
                match stream.next_chunk().await? {
                    Err(e) => return Some(Err(e.to_string())),
                    Ok(ModelChunk::Text(text)) => return Some(Ok(GenerationChunk::Text(text))),
                    Ok(ModelChunk::Finish {
                        usage: Some(usage), ..
                    }) => return Some(Ok(GenerationChunk::Usage(ask_usage(usage)))),
                    // No tool runs in an Ask answer, a finish without usage says nothing, and
                    // the answer is the model's text, not its reasoning.
                    Ok(
                        ModelChunk::ToolCall { .. }
                        | ModelChunk::Reasoning(_)
                        | ModelChunk::Finish { usage: None, .. },
                    ) => {}
                }
            },
        }
    }

    /// Stops the generator now (its `return()` runs, or the model call is aborted).
    pub fn stop(&mut self) {
        match self {
            Self::Js { iterator, done } => {
                if !*done {
                    *done = true;
                    call_quietly(iterator, "return");
                }
            }
            Self::Model(stream) => stream.abort(),
        }
    }
}

impl Drop for Generation {
    fn drop(&mut self) {
        self.stop();
    }
}
