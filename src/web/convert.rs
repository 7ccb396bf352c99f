//! JS value <-> serde_json conversion through the host's own `JSON`, and JS error helpers.
//!
//! Going through `JSON.stringify`/`JSON.parse` keeps the wasm small (no second serializer)
//! and gives exactly the JSON semantics a JS host expects (undefined fields dropped,
//! `toJSON` honoured).

use js_sys::JSON;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::web::adapters::host::describe;

/// Converts a JS value into JSON. `Err` carries a readable reason (a cycle, a BigInt, or a
/// value with no JSON form such as `undefined` or a function).
pub fn to_json(value: &JsValue) -> Result<Value, String> {
    let text = JSON::stringify(value)
        .map_err(|e| format!("value is not JSON-serialisable: {}", describe(&e)))?;
    let text = text
        .as_string()
        .ok_or_else(|| "value has no JSON form (undefined, a function or a symbol)".to_string())?;
    serde_json::from_str(&text).map_err(|e| format!("value is not valid JSON: {e}"))
}

/// An optional count from JS: `Ok(None)` for `undefined` or `null`, `Ok(Some(n))` for a
/// non-negative safe integer, `Err(())` for anything else (the caller names what it expected).
pub fn optional_safe_uint(value: &JsValue) -> Result<Option<u64>, ()> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    value
        .as_f64()
        .and_then(|n| crate::core::checks::safe_uint(&Value::from(n)))
        .map(Some)
        .ok_or(())
}

/// Converts JSON into a fresh JS value.
pub fn from_json(value: &Value) -> JsValue {
    // `serde_json::to_string` writes into one buffer; `Value`'s `Display` goes through
    // `fmt::Formatter` a token at a time (measured slower on a short turn's session writes).
    // Both fallbacks are unreachable in practice: serializing a `Value` cannot fail, and
    // serde_json's own output always parses.
    serde_json::to_string(value)
        .ok()
        .and_then(|text| JSON::parse(&text).ok())
        .unwrap_or(JsValue::UNDEFINED)
}

/// A JS `Error` with this message (what the export throws).
pub fn js_error(message: &str) -> JsValue {
    js_sys::Error::new(message).into()
}

/// Messages as AgentsKit's `Message` objects: canonical JSON, but `createdAt` a `Date` (what
/// AgentsKit adapters and memories take and `snapshotMessages` returns).
pub fn messages_with_dates(messages: &[crate::core::protocol::Message]) -> JsValue {
    let array = js_sys::Array::from(&from_json(&crate::core::protocol::messages_to_value(
        messages,
    )));
    for message in array.iter() {
        let key = JsValue::from_str("createdAt");
        if let Ok(created_at) = js_sys::Reflect::get(&message, &key) {
            // Canonical `createdAt` is ISO text that round-trips through Date, so always valid.
            let _ = js_sys::Reflect::set(&message, &key, &js_sys::Date::new(&created_at));
        }
    }
    array.into()
}
