//! Component frames and the assistant content envelope, with AgentsKit Chat's signatures and
//! result shapes: `decodeComponentFrame`, `isComponentFrameCandidate`, `createSelectionEvent`,
//! `createInteractionEvent`, `createAssistantContentEncoder`, `decodeAssistantContent`,
//! `isAssistantContentCandidate`. The rules are `core::protocol::{component, content}`; objects
//! are read strictly (a value JSON cannot hold makes the input invalid).

use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use super::convert::{from_json, js_error};
use super::strict_json::{own_data_property, to_json_strict};
use crate::core::protocol::component::{self, ComponentDecodeError, COMPONENT_PROTOCOL};
use crate::core::protocol::content::{self, ContentDecodeError};
use crate::core::protocol::FieldError;

/// `decodeComponentFrame(input)`: JSON text or a value -> `{ ok: true, frame }` or
/// `{ ok: false, diagnostic: { code, message, retryable: false } }`. Never throws.
#[wasm_bindgen(js_name = decodeComponentFrame)]
pub fn decode_component_frame(input: JsValue) -> JsValue {
    let decoded = match input.as_string() {
        Some(text) => component::decode_component_frame(&Value::String(text)),
        None => to_json_strict(&input)
            .map_err(|_| ComponentDecodeError::Invalid)
            .and_then(|value| component::decode_component_frame(&value)),
    };
    from_json(&match decoded {
        Ok(frame) => json!({ "ok": true, "frame": frame }),
        Err(e) => failure(e.code(), e.message()),
    })
}

/// `isComponentFrameCandidate(input)`: whether `input` (text or an object) names the component
/// protocol, valid or not.
#[wasm_bindgen(js_name = isComponentFrameCandidate)]
pub fn is_component_frame_candidate(input: JsValue) -> bool {
    match input.as_string() {
        Some(text) => component::is_component_frame_candidate(&Value::String(text)),
        None => {
            !js_sys::Array::is_array(&input)
                && own_data_property(&input, "protocol")
                    .and_then(|p| p.as_string())
                    .as_deref()
                    == Some(COMPONENT_PROTOCOL)
        }
    }
}

/// `createSelectionEvent(frame, choiceId)`; throws an `Error` naming the failing field.
#[wasm_bindgen(js_name = createSelectionEvent)]
pub fn create_selection_event(frame: JsValue, choice_id: JsValue) -> Result<JsValue, JsValue> {
    let fail = |e: FieldError| js_error(&format!("createSelectionEvent: {}", e.message()));
    let frame = strict("createSelectionEvent", "frame", &frame)?;
    let choice_id = strict("createSelectionEvent", "choiceId", &choice_id)?;
    component::selection_event(&frame, &choice_id)
        .map(|event| from_json(&event))
        .map_err(fail)
}

/// `createInteractionEvent(frame, event, value?)`; throws an `Error` naming the failing field.
#[wasm_bindgen(js_name = createInteractionEvent)]
pub fn create_interaction_event(
    frame: JsValue,
    event: JsValue,
    value: JsValue,
) -> Result<JsValue, JsValue> {
    let fail = |e: FieldError| js_error(&format!("createInteractionEvent: {}", e.message()));
    let frame = strict("createInteractionEvent", "frame", &frame)?;
    let event = strict("createInteractionEvent", "event", &event)?;
    let value = if value.is_undefined() {
        None
    } else {
        Some(strict("createInteractionEvent", "value", &value)?)
    };
    component::interaction_event(&frame, &event, value.as_ref())
        .map(|event| from_json(&event))
        .map_err(fail)
}

/// AgentsKit's `AssistantContentEncoder`: `encode(part)` returns the text to append; the first
/// part carries the envelope header. Throws an `Error` naming the failing field.
#[wasm_bindgen(js_name = AssistantContentEncoder)]
pub struct ContentEncoder {
    inner: content::AssistantContentEncoder,
}

/// `createAssistantContentEncoder()`.
#[wasm_bindgen(js_name = createAssistantContentEncoder)]
pub fn create_assistant_content_encoder() -> ContentEncoder {
    ContentEncoder {
        inner: content::AssistantContentEncoder::new(),
    }
}

#[wasm_bindgen(js_class = AssistantContentEncoder)]
impl ContentEncoder {
    pub fn encode(&mut self, part: JsValue) -> Result<String, JsValue> {
        let part = strict("encode", "part", &part)?;
        self.inner
            .encode(&part)
            .map_err(|e| js_error(&format!("encode: {}", e.message())))
    }
}

/// `decodeAssistantContent(input)` -> `{ ok: true, parts, complete }` (parts frozen) or
/// `{ ok: false, diagnostic: { code, message, retryable: false } }`. Never throws.
#[wasm_bindgen(js_name = decodeAssistantContent)]
pub fn decode_assistant_content(input: JsValue) -> JsValue {
    let decoded = match input.as_string() {
        Some(text) => content::decode_assistant_content(&text),
        None => Err(ContentDecodeError::InvalidEnvelope),
    };
    match decoded {
        Ok(content) => {
            let out = from_json(
                &json!({ "ok": true, "parts": content.parts, "complete": content.complete }),
            );
            if let Ok(parts) = js_sys::Reflect::get(&out, &"parts".into()) {
                js_sys::Object::freeze(&parts.into());
            }
            out
        }
        Err(e) => from_json(&failure(e.code(), e.message())),
    }
}

/// `checkAssistantContentPart(part)` -> `{ ok: true, part }` (canonical, unknown keys dropped)
/// or `{ ok: false, path, message }`: the rule behind `AssistantContentPartSchema` (js/protocol.mjs
/// gives it zod's `safeParse` / `parse`). Never throws.
#[wasm_bindgen(js_name = checkAssistantContentPart)]
pub fn check_assistant_content_part(part: JsValue) -> JsValue {
    let checked = to_json_strict(&part)
        .map_err(|_| crate::core::protocol::FieldError::new("", "must be a JSON value"))
        .and_then(|v| content::content_part(&v));
    match checked {
        Ok(part) => from_json(&json!({ "ok": true, "part": part })),
        Err(e) => from_json(&json!({ "ok": false, "path": e.path, "message": e.message() })),
    }
}

/// `isAssistantContentCandidate(input)`: a string that starts like an envelope.
#[wasm_bindgen(js_name = isAssistantContentCandidate)]
pub fn is_assistant_content_candidate(input: JsValue) -> bool {
    input
        .as_string()
        .is_some_and(|text| content::is_assistant_content_candidate(&text))
}

fn failure(code: &str, message: &str) -> Value {
    json!({ "ok": false, "diagnostic": { "code": code, "message": message, "retryable": false } })
}

/// An argument as JSON, or an `Error` saying it is not a JSON value.
fn strict(function: &str, name: &str, value: &JsValue) -> Result<Value, JsValue> {
    to_json_strict(value).map_err(|_| js_error(&format!("{function}: {name} must be a JSON value")))
}
