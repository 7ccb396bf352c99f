//! The chat pipeline's ports over the session's Durable Objects, in Rust: `SessionStorage` and
//! `ChatMemory` over the `ChatSession` object's RPC methods, and the `SessionLog` over the
//! `SessionStream` object through its stub's `fetch` (the Durable Streams protocol, no hop
//! through the Worker and no token: the route's auth guards only requests from outside).
//!
//! Values cross as JSON text: the object stores text and the ports speak `serde_json`, so no JS
//! object is built on either side (see ARCHITECTURE.md, "Crossing into JS").
//!
//! Signals: a Durable Object RPC call cannot be cancelled mid-flight, and cleanup must save even
//! after the client left, so the ports' cancel tokens are deliberately not forwarded.

use js_sys::{Function, Promise};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use worker::Env;

use super::env::stub;
use super::routes::chat_session_name;
use super::streams::route::{chat_stream_name, STREAM_PREFIX};
use super::streams::shell::SESSION_STREAM_BINDING;
use crate::core::checks::is_safe_id;
use crate::core::protocol::message::{decode_messages, messages_to_value};
use crate::core::protocol::Message;
use crate::ports::chat::ChatMemory;
use crate::ports::session::SessionStorage;
use crate::ports::{CancelToken, LocalFuture, PortError};
use crate::web::adapters::host::port_error;
use crate::web::adapters::http_log::HttpLog;

/// The binding of the `ChatSession` namespace (wrangler.toml).
pub const CHAT_SESSION_BINDING: &str = "CHAT_SESSION";

#[wasm_bindgen]
extern "C" {
    /// A `ChatSession` stub, seen through its RPC methods (`chat_session.rs`).
    #[wasm_bindgen(extends = js_sys::Object)]
    pub type ChatSessionRpc;
    #[wasm_bindgen(method, js_name = loadSession)]
    fn load_session(this: &ChatSessionRpc, session_id: &str) -> Promise;
    #[wasm_bindgen(method, js_name = saveSession)]
    fn save_session(this: &ChatSessionRpc, snapshot: &str, expected_cursor: JsValue) -> Promise;
    #[wasm_bindgen(method, js_name = loadMessagesJson)]
    fn load_messages_json(this: &ChatSessionRpc) -> Promise;
    #[wasm_bindgen(method, js_name = saveMessages)]
    fn save_messages(this: &ChatSessionRpc, messages_json: &str, fence: JsValue) -> Promise;
    #[wasm_bindgen(method)]
    fn view(this: &ChatSessionRpc, session_id: &str) -> Promise;
}

/// The `ChatSession` object of `session_id` of `tenant` (both SafeIds, checked).
pub fn chat_session(
    env: &Env,
    tenant: &str,
    session_id: &str,
) -> Result<ChatSessionRpc, PortError> {
    if !is_safe_id(tenant) || !is_safe_id(session_id) {
        return Err(PortError::new("tenant and session id must be SafeIds"));
    }
    stub(
        env,
        CHAT_SESSION_BINDING,
        &chat_session_name(tenant, session_id),
    )
    .map(|s| s.into_rpc::<ChatSessionRpc>())
    .map_err(|e| PortError::new(format!("the ChatSession binding failed: {e}")))
}

async fn call(what: &str, promise: Promise) -> Result<JsValue, PortError> {
    JsFuture::from(promise)
        .await
        .map_err(|e| port_error(what, &e))
}

/// The SessionStorage of one tenant: each call goes to the object of the session it names,
/// where compare-and-set runs as one transaction.
pub struct TenantSessionStorage {
    pub env: Env,
    pub tenant: String,
}

impl SessionStorage for TenantSessionStorage {
    fn load<'a>(
        &'a self,
        session_id: &'a str,
        _cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Option<Value>, PortError>> {
        Box::pin(async move {
            let object = chat_session(&self.env, &self.tenant, session_id)?;
            let text = call("ChatSession.loadSession", object.load_session(session_id)).await?;
            match text.as_string() {
                None => Ok(None),
                Some(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
                    PortError::new(format!("a stored session is not valid JSON: {e}"))
                }),
            }
        })
    }

    fn save<'a>(
        &'a self,
        snapshot: &'a Value,
        expected_cursor: Option<u64>,
        _cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<bool, PortError>> {
        Box::pin(async move {
            let session_id = snapshot
                .get("sessionId")
                .and_then(Value::as_str)
                .ok_or_else(|| PortError::new("the snapshot has no sessionId"))?;
            let object = chat_session(&self.env, &self.tenant, session_id)?;
            // Cursors are safe integers (checked by the envelope decoder): f64 holds them exactly.
            let expected = expected_cursor.map_or(JsValue::NULL, |c| JsValue::from_f64(c as f64));
            let saved = call(
                "ChatSession.saveSession",
                object.save_session(&snapshot.to_string(), expected),
            )
            .await?;
            saved
                .as_bool()
                .ok_or_else(|| PortError::new("ChatSession.saveSession did not answer a boolean"))
        })
    }
}

/// The ChatMemory of one session: its canonical messages, in the same object.
pub struct SessionMemory {
    pub object: ChatSessionRpc,
}

impl ChatMemory for SessionMemory {
    fn load<'a>(
        &'a self,
        _cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Vec<Message>, PortError>> {
        Box::pin(async move {
            let text = call(
                "ChatSession.loadMessagesJson",
                self.object.load_messages_json(),
            )
            .await?
            .as_string()
            .unwrap_or_default();
            let json: Value = serde_json::from_str(&text)
                .map_err(|e| PortError::new(format!("stored messages are not valid JSON: {e}")))?;
            decode_messages(&json)
                .map_err(|e| PortError::new(format!("stored messages are invalid: {e}")))
        })
    }

    /// `saveMessages(text, fence)` on the object (`undefined`: an unfenced save).
    fn save<'a>(
        &'a self,
        messages: &'a [Message],
        fence: Option<u64>,
        _cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<(), PortError>> {
        Box::pin(async move {
            let text = messages_to_value(messages).to_string();
            let fence = fence.map_or(JsValue::UNDEFINED, |f| JsValue::from(f as f64));
            call(
                "ChatSession.saveMessages",
                self.object.save_messages(&text, fence),
            )
            .await
            .map(|_| ())
        })
    }
}

/// `{ session, messages }` of one session as stored (JSON texts), read in one step inside its
/// object.
pub async fn read_session_view(
    env: &Env,
    tenant: &str,
    session_id: &str,
) -> Result<(Option<Value>, Value), PortError> {
    let object = chat_session(env, tenant, session_id)?;
    let view = call("ChatSession.view", object.view(session_id)).await?;
    let field = |key: &str| {
        js_sys::Reflect::get(&view, &key.into())
            .ok()
            .and_then(|v| v.as_string())
    };
    let parse = |text: String| {
        serde_json::from_str::<Value>(&text)
            .map_err(|e| PortError::new(format!("a stored value is not valid JSON: {e}")))
    };
    let session = field("session").map(parse).transpose()?;
    let messages = parse(field("messages").unwrap_or_else(|| "[]".into()))?;
    Ok((session, messages))
}

/// The session log of a chat session: `chat/<tenant>/<sessionId>` through its object's stub.
pub fn session_stream_log(env: &Env, tenant: &str, session_id: &str) -> Result<HttpLog, PortError> {
    let name = chat_stream_name(tenant, session_id);
    let stub = stub(env, SESSION_STREAM_BINDING, &name)
        .map_err(|e| PortError::new(format!("the SessionStream binding failed: {e}")))?
        .into_rpc::<JsValue>();
    let fetch = js_sys::Reflect::get(&stub, &"fetch".into())
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
        .ok_or_else(|| PortError::new("the SessionStream stub has no fetch"))?;
    let url = format!("https://session-stream.internal{STREAM_PREFIX}{name}");
    // The demo Worker's own SessionStream object gives item seqs (core::streams::producer).
    Ok(HttpLog::over(url, fetch, stub).with_item_seqs())
}
