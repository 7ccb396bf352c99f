//! Session envelope exports: `decodeSessionSnapshot` and `resumeChatSession`.
//!
//! Both return tagged results (`{ ok: true, ... } | { ok: false, error }`) rather than throwing
//! for a bad stored value: a corrupt record is data the host must handle, not a bug. They throw
//! only when the call itself is malformed (e.g. `resumeChatSession` without an identity object).

use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use super::convert::{from_json, js_error, to_json};
use crate::core::checks::safe_uint;
use crate::core::session::{
    self, ConversationChart, ResumeError, SessionDecodeError, SessionIdentity,
};

/// `decodeSessionSnapshot(input)`: a stored value (object or JSON text) -> `{ ok: true, session }`
/// with a v0 envelope migrated to v1, or `{ ok: false, error: { code, message, retryable } }`.
#[wasm_bindgen(js_name = decodeSessionSnapshot)]
pub fn decode_session_snapshot(input: JsValue) -> JsValue {
    let result = match stored_value(&input) {
        Ok(value) => match session::decode_session_snapshot(&value) {
            Ok(envelope) => json!({ "ok": true, "session": envelope.to_value() }),
            Err(e) => decode_failure(&e),
        },
        Err(message) => failure("SESSION_INVALID_SNAPSHOT", &message),
    };
    from_json(&result)
}

/// `resumeChatSession(stored, { sessionId, definitionId, definitionRevision, conversation? }, nowMs)`
/// -> `{ ok: true, session, expectedCursor }` (expectedCursor `undefined` for a new session)
/// or `{ ok: false, error: { code, message, retryable: false } }`. `conversation` is the
/// definition's statechart (as `defineChat` takes it); a stored conversation must replay through
/// it. The older `initialState: name` stands for a chart of that one state (it accepts only a
/// conversation without decisions).
#[wasm_bindgen(js_name = resumeChatSession)]
pub fn resume_chat_session(
    stored: JsValue,
    identity: JsValue,
    now_ms: JsValue,
) -> Result<JsValue, JsValue> {
    let identity =
        read_identity(&identity).map_err(|m| js_error(&format!("resumeChatSession: {m}")))?;
    let now_ms = now_ms
        .as_f64()
        .and_then(|n| safe_uint(&json!(n)))
        .ok_or_else(|| {
            js_error(
                "resumeChatSession: nowMs must be a non-negative safe integer (epoch milliseconds)",
            )
        })?;
    let stored = if stored.is_null() || stored.is_undefined() {
        None
    } else {
        match stored_value(&stored) {
            Ok(value) => Some(value),
            Err(message) => return Ok(from_json(&failure("SESSION_INVALID_SNAPSHOT", &message))),
        }
    };
    let result = match session::resume_session(stored.as_ref(), &identity, now_ms) {
        Ok(resumed) => {
            let mut out = json!({ "ok": true, "session": resumed.envelope.to_value() });
            if let Some(cursor) = resumed.expected_cursor {
                out["expectedCursor"] = json!(cursor);
            }
            out
        }
        Err(e) => resume_failure(&e),
    };
    Ok(from_json(&result))
}

/// A stored value as JSON: strings stay strings (the core parses them, so bad JSON text gets the
/// core's own diagnostic), everything else goes through `JSON.stringify`.
pub(crate) fn stored_value(input: &JsValue) -> Result<Value, String> {
    match input.as_string() {
        Some(text) => Ok(Value::String(text)),
        None => to_json(input),
    }
}

fn read_identity(value: &JsValue) -> Result<SessionIdentity, String> {
    let value = to_json(value).map_err(|_| "identity must be an object".to_string())?;
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let session_id = text("sessionId").ok_or("identity.sessionId must be a string")?;
    let definition_id = text("definitionId").ok_or("identity.definitionId must be a string")?;
    let definition_revision = match value.get("definitionRevision") {
        None | Some(Value::Null) => 1,
        Some(v) => {
            safe_uint(v).ok_or("identity.definitionRevision must be a positive safe integer")?
        }
    };
    let conversation = match (value.get("conversation"), value.get("initialState")) {
        (Some(chart), _) if !chart.is_null() => {
            let chart = ConversationChart::from_json(chart)
                .map_err(|m| format!("identity.conversation: {m}"))?;
            Some(chart)
        }
        (_, None | Some(Value::Null)) => None,
        (_, Some(Value::String(s))) => Some(ConversationChart::single_state(s)),
        (_, Some(_)) => return Err("identity.initialState must be a string when given".into()),
    };
    Ok(SessionIdentity {
        session_id,
        definition_id,
        definition_revision,
        conversation,
    })
}

fn decode_failure(e: &SessionDecodeError) -> Value {
    failure(e.code.as_str(), &e.detail)
}

fn resume_failure(e: &ResumeError) -> Value {
    failure(e.kind(), &e.to_string())
}

fn failure(code: &str, message: &str) -> Value {
    json!({ "ok": false, "error": { "code": code, "message": message, "retryable": false } })
}
