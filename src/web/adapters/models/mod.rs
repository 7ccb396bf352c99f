//! Model adapters for the wasm shell, chosen by [`model_from_js`] from what the host passed
//! as `defineChat({ model })`:
//!
//! | value | adapter |
//! |---|---|
//! | `{ kind: 'turnkeep.demo', chunkDelayMs? }` (`createDemoModel`) | [`DemoModel`]: the pure demo script, `chunkDelayMs` apart |
//! | `{ kind: 'turnkeep.openai-compatible', baseUrl, apiKey?, model }` (`createOpenAICompatibleModel`) | [`OpenAiModel`]: streaming `POST {baseUrl}/chat/completions` over the global `fetch` |
//! | an AI SDK language model: `specificationVersion` `'v2'` / `'v3'` / `'v4'` and `doStream(options)` (every `@ai-sdk/*` provider, `workers-ai-provider`, `ai/test`'s mocks) | [`AiSdkModel`] |
//! | any object with `stream(request, { signal })` returning an async iterable of chunks | [`JsModel`] |
//! | an AgentsKit adapter: `createSource(request)` returning `{ stream(), abort() }` | [`AgentsKitAdapter`] |
//!
//! Every stream aborts its upstream work (timer, fetch, iterator) when `abort()` is called
//! *or when it is dropped*, so a turn that stops never leaves a model running.

mod abort;
mod agentskit;
mod aisdk;
mod custom;
mod demo;
mod descriptor;
mod openai;
mod reader;

pub use crate::turn::DemoModel;
pub use agentskit::AgentsKitAdapter;
pub use aisdk::AiSdkModel;
// For the Ask service's generators and AgentsKit tools' async iterables.
pub(crate) use custom::iterator_of;
pub use custom::JsModel;
pub use demo::demo_model_from_descriptor;
pub use descriptor::{DEMO_KIND, OPENAI_COMPATIBLE_KIND};
#[cfg(feature = "ask")]
pub(crate) use openai::call_quietly;
pub(crate) use openai::swallow_rejection;
pub use openai::OpenAiModel;
#[cfg(feature = "server")]
pub(crate) use reader::ResultReader;

use wasm_bindgen::prelude::*;

use crate::ports::chat::ModelAdapter;
use crate::web::js::{get, get_fn};

/// The adapter for a model value, or a readable reason it is not one (for a config error).
pub fn model_from_js(value: &JsValue) -> Result<Box<dyn ModelAdapter>, String> {
    if !value.is_object() {
        return Err(MODEL_RULE.into());
    }
    if AiSdkModel::is_one(value) {
        return Ok(Box::new(AiSdkModel::from_js(value)?));
    }
    match get(value, "kind").as_string().as_deref() {
        Some(DEMO_KIND) => Ok(Box::new(demo_model_from_descriptor(value)?)),
        Some(OPENAI_COMPATIBLE_KIND) => Ok(Box::new(OpenAiModel::from_descriptor(value)?)),
        Some(other) if other.starts_with("turnkeep.") => Err(format!(
            "model.kind {other:?} is not a model this build knows"
        )),
        _ if get_fn(value, "stream").is_some() => Ok(Box::new(JsModel::from_js(value)?)),
        _ if get_fn(value, "createSource").is_some() => {
            Ok(Box::new(AgentsKitAdapter::from_js(value)?))
        }
        _ => Err(MODEL_RULE.into()),
    }
}

const MODEL_RULE: &str = "model must be an AI SDK language model (specificationVersion and doStream), createDemoModel(), createOpenAICompatibleModel(), an object with stream() or an AgentsKit adapter (createSource)";
