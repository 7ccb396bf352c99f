//! The one projection (`core::projection`), exported: `projectChatSnapshot(chunks)`, the incremental
//! `ChatProjection` class for live clients, and the markup of render parts. Server and browser
//! run this same compiled reducer (every wasm build has it); `resolveChatSnapshot`, which reads
//! a session log, is the server's (`super::resolve`).

use js_sys::{Array, Object};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::core::projection::html::{render_conversation_html, render_messages_html};
use crate::core::projection::{render_parts, Projection};
use crate::core::protocol::messages_to_value;
use crate::web::convert::{from_json, js_error, to_json};
use crate::web::js::{get, set};

/// `{ messages, renderParts, nativeMessages, confirmations, activeRunId }` of a projection
/// (`activeRunId`: the run started and not ended, `null` when none).
pub(crate) fn snapshot_of(projection: &Projection) -> Object {
    let out = Object::new();
    let messages: Vec<_> = projection.to_messages();
    set(&out, "messages", from_json(&messages_to_value(&messages)));
    let parts = serde_json::to_value(render_parts(&messages)).unwrap_or(Value::Null);
    set(&out, "renderParts", from_json(&parts));
    set(
        &out,
        "nativeMessages",
        from_json(&Value::Array(projection.native_messages())),
    );
    set(
        &out,
        "activeRunId",
        projection
            .active_run()
            .map_or(JsValue::NULL, JsValue::from_str),
    );
    let confirmations = serde_json::to_value(projection.confirmations()).unwrap_or(Value::Null);
    set(&out, "confirmations", from_json(&confirmations));
    out
}

/// One chunk given as a value or as its JSON text.
fn chunk_of(value: &JsValue) -> Result<Value, String> {
    match value.as_string() {
        Some(text) => {
            serde_json::from_str(&text).map_err(|_| "a chunk given as text must be JSON".into())
        }
        None => to_json(value),
    }
}

fn feed_all(projection: &mut Projection, chunks: &JsValue) -> Result<(), JsValue> {
    let list = chunks
        .dyn_ref::<Array>()
        .ok_or_else(|| js_error("chunks must be an array"))?;
    for item in list.iter() {
        projection.feed(&chunk_of(&item).map_err(|m| js_error(&m))?);
    }
    Ok(())
}

/// `projectChatSnapshot(chunks)` → `{ messages, renderParts, nativeMessages, confirmations,
/// activeRunId }`.
#[wasm_bindgen(js_name = projectChatSnapshot)]
pub fn project_chat_snapshot(chunks: JsValue) -> Result<JsValue, JsValue> {
    let mut projection = Projection::new();
    feed_all(&mut projection, &chunks)?;
    Ok(snapshot_of(&projection).into())
}

/// `new ChatProjection()`: feed chunks as they arrive, read the state at any point.
#[wasm_bindgen(js_name = ChatProjection)]
pub struct ChatProjectionHandle {
    inner: Projection,
}

/// A projection seeded with `initialMessages` (absent: empty) and the run still going.
pub(crate) fn projection_from(
    initial_messages: &JsValue,
    active_run: Option<&str>,
) -> Result<Projection, String> {
    if initial_messages.is_undefined() || initial_messages.is_null() {
        return Ok(Projection::from_initial(&Value::Null, active_run));
    }
    let value = to_json(initial_messages)?;
    if !value.is_array() {
        return Err("initialMessages must be an array of messages".into());
    }
    Ok(Projection::from_initial(&value, active_run))
}

#[wasm_bindgen(js_class = ChatProjection)]
impl ChatProjectionHandle {
    /// `new ChatProjection(initialMessages?)`: empty, or starting from messages the client
    /// already holds (a seed's `messages` or `nativeMessages`, any TanStack UI messages).
    /// `options.activeRunId`: the run still going when the messages were taken;
    /// `options.confirmations`: the tool confirmations known then (a seed's `confirmations`).
    #[wasm_bindgen(constructor)]
    pub fn new(
        initial_messages: JsValue,
        options: JsValue,
    ) -> Result<ChatProjectionHandle, JsValue> {
        let run = get(&options, "activeRunId").as_string();
        let inner = projection_from(&initial_messages, run.as_deref())
            .map_err(|m| js_error(&format!("ChatProjection: {m}")))?;
        let confirmations = get(&options, "confirmations");
        let inner = if confirmations.is_undefined() || confirmations.is_null() {
            inner
        } else {
            let seed = to_json(&confirmations)
                .map_err(|m| js_error(&format!("ChatProjection: options.confirmations: {m}")))?;
            inner.with_confirmations(&seed)
        };
        Ok(ChatProjectionHandle { inner })
    }

    /// Feeds one chunk (a value or its JSON text).
    pub fn feed(&mut self, chunk: JsValue) -> Result<(), JsValue> {
        let chunk = chunk_of(&chunk).map_err(|m| js_error(&m))?;
        self.inner.feed(&chunk);
        Ok(())
    }

    /// Feeds chunks in order.
    #[wasm_bindgen(js_name = feedAll)]
    pub fn feed_all(&mut self, chunks: JsValue) -> Result<(), JsValue> {
        feed_all(&mut self.inner, &chunks)
    }

    /// `{ messages, renderParts, nativeMessages, confirmations, activeRunId }` now.
    pub fn snapshot(&self) -> JsValue {
        snapshot_of(&self.inner).into()
    }

    /// `[{ id, html }]`: the markup of each message now (`renderChatMessages` of the render
    /// parts, without building the rest of a snapshot: what a live page redraws from).
    #[wasm_bindgen(js_name = renderMessages)]
    pub fn render_messages(&self) -> Array {
        let parts =
            serde_json::to_value(render_parts(self.inner.messages())).unwrap_or(Value::Null);
        messages_html_js(parts.as_array().map_or(&[][..], Vec::as_slice))
    }

    /// The tool confirmations the log shows now (`snapshot().confirmations`, without building
    /// the rest of a snapshot).
    #[wasm_bindgen(getter)]
    pub fn confirmations(&self) -> JsValue {
        from_json(&serde_json::to_value(self.inner.confirmations()).unwrap_or(Value::Null))
    }

    /// The run started and not yet ended, if any.
    #[wasm_bindgen(getter, js_name = activeRunId)]
    pub fn active_run_id(&self) -> Option<String> {
        self.inner.active_run().map(str::to_owned)
    }

    /// Chunks fed so far.
    #[wasm_bindgen(getter, js_name = chunkCount)]
    pub fn chunk_count(&self) -> f64 {
        self.inner.chunk_count() as f64
    }
}

fn parts_of(render_parts: &JsValue) -> Result<Vec<Value>, JsValue> {
    match to_json(render_parts) {
        Ok(Value::Array(parts)) => Ok(parts),
        _ => Err(js_error("renderParts must be an array of render parts")),
    }
}

/// `renderChatHtml(renderParts)`: the conversation's markup (one `<article>` per message, every
/// value escaped), e.g. for a server-rendered first paint.
#[wasm_bindgen(js_name = renderChatHtml)]
pub fn render_chat_html(render_parts: JsValue) -> Result<String, JsValue> {
    Ok(render_conversation_html(&parts_of(&render_parts)?))
}

/// `renderChatMessages(renderParts)` → `[{ id, html }]`: the same markup per message, so a live
/// page replaces only the messages that changed.
#[wasm_bindgen(js_name = renderChatMessages)]
pub fn render_chat_messages(render_parts: JsValue) -> Result<Array, JsValue> {
    Ok(messages_html_js(&parts_of(&render_parts)?))
}

fn messages_html_js(parts: &[Value]) -> Array {
    let out = Array::new();
    for message in render_messages_html(parts) {
        let item = Object::new();
        set(&item, "id", message.id);
        set(&item, "html", message.html);
        out.push(&item);
    }
    out
}
