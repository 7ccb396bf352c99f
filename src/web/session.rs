//! `decodeSessionSnapshot`, with AgentsKit Chat's result shape: `{ ok: true, snapshot }` or
//! `{ ok: false, diagnostic: { code, message, retryable: false } }` with the reference
//! decoder's literal messages. A corrupt record is data the host must handle, not a bug, so it
//! never throws. (`resumeChatSession` is in `chat_session.rs`.)

use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use super::convert::{from_json, to_json};
use super::strict_json::to_json_strict;
use crate::core::session::{self, SessionDecodeError};

/// `decodeSessionSnapshot(input)`: a stored value (object or JSON text) -> `{ ok: true, snapshot }`
/// with a v0 envelope migrated to v1, or `{ ok: false, diagnostic }`.
#[wasm_bindgen(js_name = decodeSessionSnapshot)]
pub fn decode_session_snapshot(input: JsValue) -> JsValue {
    let decoded = match input.as_string() {
        Some(text) => session::decode_session_snapshot(&Value::String(text)),
        None => match to_json_strict(&input) {
            Ok(value) => session::decode_session_snapshot(&value),
            Err(_) => Err(SessionDecodeError {
                code: session::SessionDecodeCode::InvalidSnapshot,
                detail: "the stored value is not a JSON value".into(),
                not_json: false,
            }),
        },
    };
    let result = match decoded {
        Ok(envelope) => json!({ "ok": true, "snapshot": envelope.to_value() }),
        Err(e) => json!({ "ok": false, "diagnostic": diagnostic(&e) }),
    };
    from_json(&result)
}

/// `{ code, message, retryable: false }` with the reference text.
pub(crate) fn diagnostic(e: &SessionDecodeError) -> Value {
    json!({ "code": e.code.as_str(), "message": e.reference_message(), "retryable": false })
}

/// A stored value as JSON: strings stay strings (the core parses them, so bad JSON text gets the
/// core's own diagnostic), everything else goes through `JSON.stringify` (a host store may
/// hand back objects with `toJSON`, such as dates).
pub(crate) fn stored_value(input: &JsValue) -> Result<Value, String> {
    match input.as_string() {
        Some(text) => Ok(Value::String(text)),
        None => to_json(input),
    }
}
