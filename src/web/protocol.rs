//! Turn protocol exports: `decodeTurnEvent`, `encodeTurnEvent`, `createTurnSnapshotCursor`.
//!
//! Decoded events are handed to JS in canonical form (the encoder's output, parsed), so a JS
//! caller sees exactly what would go on the wire: unknown fields dropped, schema key order.

use serde_json::json;
use wasm_bindgen::prelude::*;

use super::convert::{from_json, js_error, to_json};
use super::js::set;
use crate::core::protocol::{
    decode_turn_event as decode_value, decode_turn_event_text, encode_turn_event as encode,
    DecodeCode, DecodeDiagnostic, TurnEvent, TurnSnapshotCursor as CoreCursor,
};

/// `decodeTurnEvent(input)`: JSON text or an object -> `{ ok: true, event }` or
/// `{ ok: false, error: { code, message, retryable: false, eventId? } }`. Never throws.
#[wasm_bindgen(js_name = decodeTurnEvent)]
pub fn decode_turn_event(input: JsValue) -> JsValue {
    match decode_input(&input) {
        Ok(event) => {
            let result = js_sys::Object::new();
            set(&result, "ok", true);
            set(&result, "event", event_js(&event));
            result.into()
        }
        Err(diagnostic) => from_json(&json!({ "ok": false, "error": diagnostic })),
    }
}

/// `encodeTurnEvent(event)`: a turn event (object or JSON text) -> its canonical compact JSON.
/// Throws an `Error` naming the failing field when the event is not a valid v1 turn event.
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

/// A client's view of one session's snapshots: the first valid snapshot, then only strictly
/// newer sequences. Everything else (other sessions, diagnostics, stale or bad input) is inert.
#[wasm_bindgen]
pub struct TurnSnapshotCursor {
    inner: CoreCursor,
}

/// `createTurnSnapshotCursor(sessionId)`; throws when `sessionId` is not a SafeId.
#[wasm_bindgen(js_name = createTurnSnapshotCursor)]
pub fn create_turn_snapshot_cursor(session_id: JsValue) -> Result<TurnSnapshotCursor, JsValue> {
    let id = session_id.as_string().unwrap_or_default();
    CoreCursor::new(&id)
        .map(|inner| TurnSnapshotCursor { inner })
        .map_err(|e| js_error(&format!("createTurnSnapshotCursor: {}", e.message())))
}

#[wasm_bindgen]
impl TurnSnapshotCursor {
    /// `accept(value)`: the snapshot event (canonical form) when it moves the cursor forward,
    /// else `undefined`. `value` is JSON text or an object.
    pub fn accept(&mut self, value: JsValue) -> JsValue {
        let Ok(event) = decode_input(&value) else {
            return JsValue::UNDEFINED;
        };
        match self.inner.accept_event(event) {
            Some(accepted) => event_js(&accepted),
            None => JsValue::UNDEFINED,
        }
    }

    /// The sequence of the last accepted snapshot, `undefined` before the first.
    #[wasm_bindgen(getter, js_name = lastSequence)]
    pub fn last_sequence(&self) -> Option<f64> {
        // Sequences are safe integers (checked by the decoder), so f64 holds them exactly.
        self.inner.last_sequence().map(|s| s as f64)
    }

    /// The session this cursor follows.
    #[wasm_bindgen(getter, js_name = sessionId)]
    pub fn session_id(&self) -> String {
        self.inner.session_id().to_owned()
    }
}

/// Decodes JSON text with the text decoder, any other JS value through `JSON.stringify`.
fn decode_input(input: &JsValue) -> Result<TurnEvent, DecodeDiagnostic> {
    if let Some(text) = input.as_string() {
        return decode_turn_event_text(&text);
    }
    match to_json(input) {
        Ok(value) => decode_value(&value),
        Err(reason) => Err(DecodeDiagnostic {
            code: DecodeCode::InvalidPayload,
            message: format!("the input is not a JSON value: {reason}"),
            event_id: None,
        }),
    }
}

/// An event as a fresh JS object in canonical form: the encoder's text parsed once by the
/// host's `JSON` (a serde_json round trip in between would only re-encode the same text).
fn event_js(event: &TurnEvent) -> JsValue {
    js_sys::JSON::parse(&encode(event)).unwrap_or(JsValue::NULL)
}
