//! ChatMemory adapters: `JsChatMemory` over a host object `{ load({ signal }), save(messages,
//! { signal }) }`, and `MemoryChatMemory`, the in-memory store behind `createMemoryChatMemory()`
//! (tests and demos only: **not durable**, lost with the wasm instance).
//!
//! Loaded messages are validated through the wire decoder (`decode_messages`): a store that
//! hands back something that is not a valid message array is a `PortError`, never a half-read
//! conversation. Saved messages are their canonical JSON projection, as plain objects; for an
//! AgentsKit memory (`with_dates`) `createdAt` is a `Date`, as AgentsKit's `Message` has it.

use std::rc::Rc;

use js_sys::Object;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::host::{port_error, signal_of, signal_options, LoadSave};
use crate::core::protocol::message::{decode_messages, messages_to_value};
use crate::core::protocol::Message;
use crate::ports::chat::ChatMemory;
use crate::ports::{CancelToken, LocalFuture, PortError};
pub use crate::storage::MemoryChatMemory;
use crate::web::convert::{from_json, js_error, messages_with_dates, optional_safe_uint, to_json};
use crate::web::js::resolve;

/// A host object implementing chat memory. Each call gets `{ signal }`, aborted when the
/// caller's cancel token fires.
pub struct JsChatMemory {
    inner: LoadSave,
    /// Save messages with `createdAt` as a `Date` (an AgentsKit `ChatMemory`).
    dates: bool,
}

impl JsChatMemory {
    /// Wraps `host` after checking that `load` and `save` are functions.
    pub fn from_js(host: &JsValue) -> Result<Self, String> {
        LoadSave::from_js(host, "memory").map(|inner| Self {
            inner,
            dates: false,
        })
    }

    /// The same memory, handing `save` AgentsKit `Message`s (`createdAt` a `Date`) when `dates`.
    pub fn with_dates(self, dates: bool) -> Self {
        Self { dates, ..self }
    }
}

fn options(cancel: &CancelToken) -> Object {
    signal_options(Some(&signal_of(cancel)))
}

impl ChatMemory for JsChatMemory {
    fn load<'a>(
        &'a self,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Vec<Message>, PortError>> {
        Box::pin(async move {
            let load = self.inner.load_now();
            let value = resolve(load.call1(&self.inner.host, &options(cancel)))
                .await
                .map_err(|e| port_error("memory.load", &e))?;
            if value.is_null() || value.is_undefined() {
                return Ok(Vec::new());
            }
            let json = to_json(&value).map_err(|m| {
                PortError::new(format!(
                    "memory.load returned a value with no JSON form: {m}"
                ))
            })?;
            decode_messages(&json)
                .map_err(|e| PortError::new(format!("memory.load returned invalid messages: {e}")))
        })
    }

    /// `save(messages, { signal, fence })`: `fence` only for a turn's save (a store that keeps
    /// fences refuses a lower one; one that does not ignores it, as AgentsKit's memories do).
    fn save<'a>(
        &'a self,
        messages: &'a [Message],
        fence: Option<u64>,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<(), PortError>> {
        Box::pin(async move {
            let messages = if self.dates {
                messages_with_dates(messages)
            } else {
                from_json(&messages_to_value(messages))
            };
            let options = options(cancel);
            if let Some(fence) = fence {
                crate::web::js::set(&options, "fence", fence as f64);
            }
            let save = self.inner.save_now();
            resolve(save.call2(&self.inner.host, &messages, &options))
                .await
                .map(|_| ())
                .map_err(|e| port_error("memory.save", &e))
        })
    }
}

/// The JS face of [`MemoryChatMemory`]: `load()` and `save(messages)` returning Promises, the
/// shape any host memory has, so it can be passed as `defineChat({ memory })`. Not durable.
#[wasm_bindgen(js_name = MemoryChatMemory)]
pub struct MemoryChatMemoryHandle {
    inner: Rc<MemoryChatMemory>,
}

/// `createMemoryChatMemory()`: a fresh, empty in-memory chat memory (tests and demos; not durable).
#[wasm_bindgen(js_name = createMemoryChatMemory)]
pub fn create_memory_chat_memory() -> MemoryChatMemoryHandle {
    MemoryChatMemoryHandle {
        inner: Rc::new(MemoryChatMemory::new()),
    }
}

#[wasm_bindgen(js_class = MemoryChatMemory)]
impl MemoryChatMemoryHandle {
    /// `load()` -> Promise of the saved messages (canonical JSON; `[]` when none).
    pub fn load(&self) -> js_sys::Promise {
        let inner = Rc::clone(&self.inner);
        future_to_promise(async move {
            let messages = inner
                .load(&CancelToken::new())
                .await
                .map_err(|e| js_error(&e.message))?;
            Ok(from_json(&messages_to_value(&messages)))
        })
    }

    /// `save(messages, { fence }?)` -> Promise of `undefined`. Rejects with the first invalid
    /// field when `messages` is not a valid message array, and when a save under a higher
    /// `fence` landed first (nothing is stored then).
    pub fn save(&self, messages: JsValue, options: JsValue) -> js_sys::Promise {
        let inner = Rc::clone(&self.inner);
        future_to_promise(async move {
            let fail = |m: String| js_error(&format!("MemoryChatMemory.save: {m}"));
            let json = to_json(&messages).map_err(fail)?;
            let decoded = decode_messages(&json).map_err(|e| fail(e.message()))?;
            let fence = fence_of(&options).map_err(fail)?;
            inner
                .save(&decoded, fence, &CancelToken::new())
                .await
                .map_err(|e| fail(e.message))?;
            Ok(JsValue::UNDEFINED)
        })
    }
}

/// The `fence` of a save's options (see [`read_fence`]).
fn fence_of(options: &JsValue) -> Result<Option<u64>, String> {
    read_fence(&crate::web::js::get(options, "fence"))
}

/// A save's memory fence as JS passed it: none for `undefined`/`null`, else a non-negative safe
/// integer (anything else is refused). The Durable Object's `saveMessages` reads it the same way.
pub fn read_fence(fence: &JsValue) -> Result<Option<u64>, String> {
    optional_safe_uint(fence)
        .map_err(|()| "fence must be a non-negative safe integer when given".to_string())
}
