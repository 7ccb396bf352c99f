//! The one projection (`core::projection`), exported: `projectChatSnapshot(chunks)`, the incremental
//! `ChatProjection` class for live clients, and the markup of render parts. Server and browser
//! run this same compiled reducer (every wasm build has it); `resolveChatSnapshot`, which reads
//! a session log, is the server's (`super::resolve`).

use js_sys::{Array, Object};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::core::projection::html::{render_conversation_html, render_messages_html};
use crate::core::projection::{render_parts, Identity, IdentityMismatch, Projection};
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
    set(&out, "inFlight", from_json(&projection.in_flight()));
    out
}

/// The identity a renderer was prepared for: `options.sessionId` and
/// `options.definitionRevision` (absent: unchecked).
pub(crate) fn identity_of(options: &JsValue, what: &str) -> Result<Identity, JsValue> {
    let id = get(options, "sessionId");
    let revision = get(options, "definitionRevision");
    let id = match id.as_string() {
        Some(id) => Some(id),
        None if id.is_undefined() || id.is_null() => None,
        None => return Err(js_error(&format!("{what}: sessionId must be a SafeId"))),
    };
    let revision = match revision.as_f64() {
        Some(r) => Some(r),
        None if revision.is_undefined() || revision.is_null() => None,
        None => Some(f64::NAN),
    };
    Identity::expect(id.as_deref(), revision).map_err(|m| js_error(&format!("{what}: {m}")))
}

/// The error a renderer throws for a refused chunk or snapshot: `code` and the versioned
/// `diagnostic`, and nothing rendered.
pub(crate) fn mismatch_error(mismatch: IdentityMismatch) -> JsValue {
    let d = mismatch.diagnostic();
    let error = js_sys::Error::new(&d.message);
    set(&error, "name", "ChatIdentityError");
    set(&error, "code", d.code.as_str());
    let diagnostic = serde_json::json!({ "version": 1, "code": d.code, "message": d.message, "retryable": d.retryable });
    set(&error, "diagnostic", from_json(&diagnostic));
    error.into()
}

/// True for a seed given whole (`resolveChatSnapshot`'s answer, `snapshot()`): an object with
/// a `messages` array, not a list of messages.
fn is_seed(value: &JsValue) -> bool {
    value.is_object() && !Array::is_array(value) && Array::is_array(&get(value, "messages"))
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

fn feed_all(
    projection: &mut Projection,
    identity: &Identity,
    chunks: &JsValue,
) -> Result<(), JsValue> {
    let list = chunks
        .dyn_ref::<Array>()
        .ok_or_else(|| js_error("chunks must be an array"))?;
    let chunks = list
        .iter()
        .map(|item| chunk_of(&item).map_err(|m| js_error(&m)))
        .collect::<Result<Vec<_>, _>>()?;
    identity.check_all(&chunks).map_err(mismatch_error)?;
    projection.feed_all(&chunks);
    Ok(())
}

/// `projectChatSnapshot(chunks)` → `{ messages, renderParts, nativeMessages, confirmations,
/// activeRunId }`.
#[wasm_bindgen(js_name = projectChatSnapshot)]
pub fn project_chat_snapshot(chunks: JsValue) -> Result<JsValue, JsValue> {
    let mut projection = Projection::new();
    feed_all(&mut projection, &Identity::default(), &chunks)?;
    Ok(snapshot_of(&projection).into())
}

/// `new ChatProjection()`: feed chunks as they arrive, read the state at any point.
#[wasm_bindgen(js_name = ChatProjection)]
pub struct ChatProjectionHandle {
    inner: Projection,
    identity: Identity,
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
    /// `new ChatProjection(initial?, options?)`: empty, or starting from what the client
    /// already holds: a whole seed (`resolveChatSnapshot`'s answer, a `snapshot()`: its
    /// `messages`, `activeRunId`, `confirmations` and `inFlight`), or messages (a seed's
    /// `messages` or `nativeMessages`, any TanStack UI messages) with `options.activeRunId`,
    /// `options.confirmations` and `options.inFlight`. `options.sessionId` and
    /// `options.definitionRevision`: what the projection was prepared for; a seed or a chunk
    /// naming another is refused (`ChatIdentityError`, nothing projected).
    #[wasm_bindgen(constructor)]
    pub fn new(initial: JsValue, options: JsValue) -> Result<ChatProjectionHandle, JsValue> {
        let identity = identity_of(&options, "ChatProjection")?;
        let (initial_messages, state) = if is_seed(&initial) {
            let seed = to_json(&initial).map_err(|m| js_error(&format!("ChatProjection: {m}")))?;
            identity.check(&seed).map_err(mismatch_error)?;
            (get(&initial, "messages"), initial.clone())
        } else {
            (initial, options.clone())
        };
        let run = get(&state, "activeRunId").as_string();
        let mut inner = projection_from(&initial_messages, run.as_deref())
            .map_err(|m| js_error(&format!("ChatProjection: {m}")))?;
        for (key, apply) in [
            (
                "confirmations",
                Projection::with_confirmations as fn(Projection, &Value) -> Projection,
            ),
            ("inFlight", Projection::with_in_flight),
        ] {
            let value = get(&state, key);
            if !(value.is_undefined() || value.is_null()) {
                let seed = to_json(&value)
                    .map_err(|m| js_error(&format!("ChatProjection: {key}: {m}")))?;
                inner = apply(inner, &seed);
            }
        }
        Ok(ChatProjectionHandle { inner, identity })
    }

    /// Feeds one chunk (a value or its JSON text).
    pub fn feed(&mut self, chunk: JsValue) -> Result<(), JsValue> {
        let chunk = chunk_of(&chunk).map_err(|m| js_error(&m))?;
        self.identity.check(&chunk).map_err(mismatch_error)?;
        self.inner.feed(&chunk);
        Ok(())
    }

    /// Feeds chunks in order.
    #[wasm_bindgen(js_name = feedAll)]
    pub fn feed_all(&mut self, chunks: JsValue) -> Result<(), JsValue> {
        feed_all(&mut self.inner, &self.identity, &chunks)
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

/// The render parts to draw: `input` is render parts, or a seed holding them (`renderParts`),
/// checked against `options`' identity (a seed of another session or revision is refused).
fn parts_of(input: &JsValue, options: &JsValue, what: &str) -> Result<Vec<Value>, JsValue> {
    let identity = identity_of(options, what)?;
    let value =
        to_json(input).map_err(|_| js_error("renderParts must be an array of render parts"))?;
    let parts = match value {
        Value::Array(parts) => parts,
        Value::Object(ref seed) if seed.get("renderParts").is_some_and(Value::is_array) => {
            identity.check(&value).map_err(mismatch_error)?;
            seed["renderParts"].as_array().cloned().unwrap_or_default()
        }
        _ => {
            return Err(js_error(
                "renderParts must be an array of render parts (or a seed with renderParts)",
            ))
        }
    };
    Ok(parts)
}

/// `renderChatHtml(renderParts | seed, { sessionId?, definitionRevision? }?)`: the
/// conversation's markup (one `<article>` per message, every value escaped), e.g. for a
/// server-rendered first paint. A seed of another session or revision renders nothing: it throws
/// a `ChatIdentityError`.
#[wasm_bindgen(js_name = renderChatHtml)]
pub fn render_chat_html(render_parts: JsValue, options: JsValue) -> Result<String, JsValue> {
    Ok(render_conversation_html(&parts_of(
        &render_parts,
        &options,
        "renderChatHtml",
    )?))
}

/// `renderChatMessages(renderParts | seed, identity?)` → `[{ id, html }]`: the same markup per
/// message, so a live page replaces only the messages that changed.
#[wasm_bindgen(js_name = renderChatMessages)]
pub fn render_chat_messages(render_parts: JsValue, options: JsValue) -> Result<Array, JsValue> {
    Ok(messages_html_js(&parts_of(
        &render_parts,
        &options,
        "renderChatMessages",
    )?))
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
