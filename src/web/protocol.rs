//! Turn protocol exports with AgentsKit Chat's signatures and result shapes (`@agentskit/chat-protocol`):
//! `decodeTurnEvent`, `encodeTurnEvent`, `createTurnSnapshotCursor`, `createSnapshotEvent`,
//! `snapshotMessages`. Every rule is the core's (`crate::core::protocol`); this file converts JS
//! values at the boundary and shapes the results.
//!
//! Decoded events are handed to JS in canonical form (the encoder's output, parsed), so a JS
//! caller sees exactly what would go on the wire: unknown fields dropped, schema key order.
//! Objects are read with [`to_json_strict`]: a value JSON cannot hold (a function, `NaN`, a
//! `Date`...) makes the input invalid instead of being dropped or coerced.

use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::convert::{from_json, js_error, messages_with_dates};
use super::js::set;
use super::strict_json::{to_json_strict, to_json_strict_with_dates};
use crate::core::protocol::{
    decode_turn_event as decode_value, decode_turn_event_text, encode_turn_event as encode,
    DecodeDiagnostic, EventBody, TurnEvent, TurnSnapshotCursor as CoreCursor, TURN_PROTOCOL,
    TURN_PROTOCOL_VERSION,
};

/// `isSafeId(value)`: the SafeId rule (`core::checks::is_safe_id`) for the package's own JS
/// (turnkeep/cloudflare names its objects by tenant and session id), so it is not restated there.
/// Not re-exported by the public entries.
#[wasm_bindgen(js_name = isSafeId)]
pub fn is_safe_id_of(value: &JsValue) -> bool {
    value
        .as_string()
        .is_some_and(|id| crate::core::checks::is_safe_id(&id))
}

/// `decodeTurnEvent(input)`: JSON text or a value -> `{ ok: true, event }` or
/// `{ ok: false, diagnostic: { code, message, retryable: false, eventId? } }` with the
/// reference decoder's literal message. Never throws.
#[wasm_bindgen(js_name = decodeTurnEvent)]
pub fn decode_turn_event(input: JsValue) -> JsValue {
    match decode_input(&input) {
        Ok(event) => {
            let result = js_sys::Object::new();
            set(&result, "ok", true);
            set(&result, "event", event_js(&event));
            result.into()
        }
        Err(diagnostic) => failure_js(&diagnostic),
    }
}

/// `encodeTurnEvent(event)`: a turn event (object or JSON text) -> its canonical compact JSON.
/// Throws an `Error` naming the failing field (never its value) when it is not a valid v1 event.
#[wasm_bindgen(js_name = encodeTurnEvent)]
pub fn encode_turn_event(event: JsValue) -> Result<String, JsValue> {
    decode_input(&event).map(|e| encode(&e)).map_err(|d| {
        js_error(&format!(
            "encodeTurnEvent: not a valid turn event ({}: {})",
            d.code.as_str(),
            d.message
        ))
    })
}

/// A client's view of one session's snapshots (AgentsKit's `TurnSnapshotCursor`): `apply`
/// accepts the first valid snapshot of the session, then only strictly newer sequences;
/// `getSnapshot` returns the accepted event, deep-frozen, the same object until the next accept.
#[wasm_bindgen]
pub struct TurnSnapshotCursor {
    inner: CoreCursor,
    snapshot: JsValue,
}

/// `createTurnSnapshotCursor(sessionId)`; throws when `sessionId` is not a SafeId.
#[wasm_bindgen(js_name = createTurnSnapshotCursor)]
pub fn create_turn_snapshot_cursor(session_id: JsValue) -> Result<TurnSnapshotCursor, JsValue> {
    let id = session_id.as_string().unwrap_or_default();
    CoreCursor::new(&id)
        .map(|inner| TurnSnapshotCursor {
            inner,
            snapshot: JsValue::UNDEFINED,
        })
        .map_err(|e| js_error(&format!("createTurnSnapshotCursor: {}", e.message())))
}

#[wasm_bindgen]
impl TurnSnapshotCursor {
    /// `apply(input)`: `true` when `input` (JSON text or a value) moved the cursor forward.
    /// Other sessions, diagnostics, duplicates, stale and undecodable input give `false`.
    pub fn apply(&mut self, input: JsValue) -> bool {
        let Ok(event) = decode_input(&input) else {
            return false;
        };
        match self.inner.accept_event(event) {
            Some(accepted) => {
                self.snapshot = deep_freeze(event_js(&accepted));
                true
            }
            None => false,
        }
    }

    /// `getSnapshot()`: the last accepted snapshot event (frozen), `undefined` before the first.
    #[wasm_bindgen(js_name = getSnapshot)]
    pub fn get_snapshot(&self) -> JsValue {
        self.snapshot.clone()
    }
}

/// `createSnapshotEvent({ eventId, sessionId, turnId, sequence, emittedAt, messages, status,
/// usage, lineage?, error? })` -> a `server.turn.snapshot` event in canonical form. Messages may
/// carry `createdAt` as a `Date` (AgentsKit's `Message`) or as its ISO string. Throws an `Error`
/// naming the failing field when the result would not be a valid v1 snapshot.
#[wasm_bindgen(js_name = createSnapshotEvent)]
pub fn create_snapshot_event(options: JsValue) -> Result<JsValue, JsValue> {
    let fail = |detail: &str| js_error(&format!("createSnapshotEvent: {detail}"));
    let options = to_json_strict_with_dates(&options)
        .map_err(|_| fail("options must be a plain object of JSON values"))?;
    let field = |key: &str| options.get(key).cloned().unwrap_or(Value::Null);
    let mut payload = json!({
        "messages": field("messages"),
        "status": field("status"),
        "usage": field("usage"),
    });
    for optional in ["lineage", "error"] {
        if let Some(value) = options.get(optional) {
            payload[optional] = value.clone();
        }
    }
    let event = json!({
        "protocol": TURN_PROTOCOL,
        "version": TURN_PROTOCOL_VERSION,
        "eventId": field("eventId"),
        "sessionId": field("sessionId"),
        "turnId": field("turnId"),
        "sequence": field("sequence"),
        "emittedAt": field("emittedAt"),
        "event": "server.turn.snapshot",
        "payload": payload,
    });
    decode_value(&event)
        .map(|e| event_js(&e))
        .map_err(|d| fail(&d.message))
}

/// `snapshotMessages(event)`: the messages of a valid snapshot event, as AgentsKit `Message`s
/// (`createdAt` a `Date`). Throws an `Error` naming the failing field for anything else.
#[wasm_bindgen(js_name = snapshotMessages)]
pub fn snapshot_messages(event: JsValue) -> Result<JsValue, JsValue> {
    let fail = |detail: &str| js_error(&format!("snapshotMessages: {detail}"));
    let event = decode_input(&event).map_err(|d| fail(&d.message))?;
    let EventBody::Snapshot(snapshot) = event.body else {
        return Err(fail("event must be a server.turn.snapshot"));
    };
    Ok(messages_with_dates(&snapshot.messages))
}

/// Decodes JSON text with the text decoder, any other value through the strict conversion.
fn decode_input(input: &JsValue) -> Result<TurnEvent, DecodeDiagnostic> {
    if let Some(text) = input.as_string() {
        return decode_turn_event_text(&text);
    }
    match to_json_strict(input) {
        Ok(value) => decode_value(&value),
        Err(_) => Err(DecodeDiagnostic::not_a_json_value()),
    }
}

/// `{ ok: false, diagnostic: { code, message, retryable: false, eventId? } }`.
fn failure_js(d: &DecodeDiagnostic) -> JsValue {
    let mut diagnostic = json!({
        "code": d.code.as_str(),
        "message": d.reference_message(),
        "retryable": d.retryable(),
    });
    if let Some(id) = &d.event_id {
        diagnostic["eventId"] = json!(id);
    }
    from_json(&json!({ "ok": false, "diagnostic": diagnostic }))
}

/// An event as a fresh JS object in canonical form: the encoder's text parsed once by the
/// host's `JSON` (a serde_json round trip in between would only re-encode the same text).
fn event_js(event: &TurnEvent) -> JsValue {
    js_sys::JSON::parse(&encode(event)).unwrap_or(JsValue::NULL)
}

/// Freezes `value` and everything under it (a fresh object tree we built, so no cycles).
fn deep_freeze(value: JsValue) -> JsValue {
    if let Some(object) = value.dyn_ref::<js_sys::Object>() {
        for child in js_sys::Object::values(object).iter() {
            deep_freeze(child);
        }
        js_sys::Object::freeze(object);
    }
    value
}
