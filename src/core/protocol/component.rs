//! Component frames (`agentskit.chat.component` v1, AgentsKit Chat's protocol package): a
//! `render` frame an assistant sends so a client renders a known component with bounded JSON
//! props and a text fallback, and the `select` / `interact` events a client answers with.
//!
//! [`decode_component_frame`] keeps the reference decoder's order: text that is not JSON; our
//! protocol with a numeric version other than 1; our protocol with a type other than `render`;
//! then the schema. Every value comes back in canonical form (schema key order, unknown keys
//! dropped), the form the reference's schema parse yields.

use serde_json::{json, Map, Value};

use super::field::{join, FieldError, Obj, MUST_BE_OBJECT, MUST_BE_SAFE_ID};
use crate::checks::{is_safe_id, utf16_len, within_bounds, BOUNDED_JSON};
use crate::limits::{
    COMPONENT_FALLBACK_KIND_CHARS_MAX, COMPONENT_FALLBACK_SUMMARY_CHARS_MAX,
    COMPONENT_NAME_CHARS_MAX,
};

pub const COMPONENT_PROTOCOL: &str = "agentskit.chat.component";
pub(crate) const COMPONENT_PROTOCOL_VERSION: u32 = 1;

/// Why an input is not a component render frame. Always `retryable: false`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComponentDecodeError {
    /// Text that does not parse as JSON (`COMPONENT_INVALID_FRAME`).
    NotJson,
    /// Our protocol with another numeric version (`COMPONENT_UNSUPPORTED_VERSION`).
    UnsupportedVersion,
    /// Our protocol with a type other than `render` (`COMPONENT_UNKNOWN_TYPE`).
    UnknownType,
    /// Anything else that fails the schema (`COMPONENT_INVALID_FRAME`).
    Invalid,
}

impl ComponentDecodeError {
    pub const fn code(self) -> &'static str {
        match self {
            Self::NotJson | Self::Invalid => "COMPONENT_INVALID_FRAME",
            Self::UnsupportedVersion => "COMPONENT_UNSUPPORTED_VERSION",
            Self::UnknownType => "COMPONENT_UNKNOWN_TYPE",
        }
    }

    /// The reference decoder's literal text.
    pub const fn message(self) -> &'static str {
        match self {
            Self::NotJson => "Component frame is not valid JSON.",
            Self::UnsupportedVersion => "Component frame uses an unsupported version.",
            Self::UnknownType => "Component frame type is unknown.",
            Self::Invalid => "Component frame payload is invalid.",
        }
    }
}

/// Decodes a render frame from JSON text (`Value::String`) or a parsed value.
pub fn decode_component_frame(input: &Value) -> Result<Value, ComponentDecodeError> {
    let parsed;
    let candidate = match input {
        Value::String(text) => {
            parsed =
                serde_json::from_str::<Value>(text).map_err(|_| ComponentDecodeError::NotJson)?;
            &parsed
        }
        other => other,
    };
    if let Some(frame) = ours(candidate) {
        let version = frame.get("version").and_then(Value::as_f64);
        if version.is_some_and(|v| v != f64::from(COMPONENT_PROTOCOL_VERSION)) {
            return Err(ComponentDecodeError::UnsupportedVersion);
        }
        if frame.get("type").and_then(Value::as_str) != Some("render") {
            return Err(ComponentDecodeError::UnknownType);
        }
    }
    render_frame(candidate).map_err(|_| ComponentDecodeError::Invalid)
}

/// Whether `input` (text or a value) is an object of the component protocol, valid or not.
pub fn is_component_frame_candidate(input: &Value) -> bool {
    match input {
        Value::String(text) => {
            serde_json::from_str::<Value>(text).is_ok_and(|v| ours(&v).is_some())
        }
        other => ours(other).is_some(),
    }
}

/// The `select` event answering `frame` with `choice_id`.
pub fn selection_event(frame: &Value, choice_id: &Value) -> Result<Value, FieldError> {
    let frame = render_frame(frame).map_err(under_frame)?;
    let choice_id = choice_id
        .as_str()
        .filter(|s| is_safe_id(s))
        .ok_or_else(|| FieldError::new("choiceId", MUST_BE_SAFE_ID))?;
    Ok(json!({
        "protocol": COMPONENT_PROTOCOL,
        "version": COMPONENT_PROTOCOL_VERSION,
        "type": "select",
        "componentKey": frame["componentKey"],
        "instanceId": frame["instanceId"],
        "choiceId": choice_id,
    }))
}

/// The `interact` event `event` on `frame`, with `value` (bounded JSON) when given.
pub fn interaction_event(
    frame: &Value,
    event: &Value,
    value: Option<&Value>,
) -> Result<Value, FieldError> {
    let frame = render_frame(frame).map_err(under_frame)?;
    let event = event
        .as_str()
        .filter(|s| is_name(s))
        .ok_or_else(|| FieldError::new("event", NAME_RULE))?;
    let mut out = json!({
        "protocol": COMPONENT_PROTOCOL,
        "version": COMPONENT_PROTOCOL_VERSION,
        "type": "interact",
        "componentKey": frame["componentKey"],
        "instanceId": frame["instanceId"],
        "event": event,
    });
    if let Some(value) = value {
        if !within_bounds(value, &BOUNDED_JSON) {
            return Err(FieldError::new("value", BOUNDED_RULE));
        }
        out["value"] = value.clone();
    }
    Ok(out)
}

const PROTOCOL_RULE: &str = "must be \"agentskit.chat.component\"";
const VERSION_RULE: &str = "must be the number 1";
const TYPE_RULE: &str = "must be \"render\"";
const NAME_RULE: &str = "must be 1 to 64 of a-z 0-9 -, starting with a letter";
const BOUNDED_RULE: &str =
    "must be bounded JSON (at most 1000 values, depth 20, strings of 16384 units)";
const KIND_RULE: &str = "must be a string of 1 to 64 characters";
const SUMMARY_RULE: &str = "must be a string of 1 to 4096 characters";

/// A render frame in canonical form, or the first field that breaks the schema.
pub(crate) fn render_frame(v: &Value) -> Result<Value, FieldError> {
    let o = Obj::new(v, "")?;
    o.required("protocol", PROTOCOL_RULE, |v| {
        v.as_str().filter(|s| *s == COMPONENT_PROTOCOL)
    })?;
    o.required("version", VERSION_RULE, |v| {
        v.as_f64().filter(|n| *n == 1.0)
    })?;
    o.required("type", TYPE_RULE, |v| v.as_str().filter(|s| *s == "render"))?;
    let component_key = o.required("componentKey", NAME_RULE, |v| {
        v.as_str().filter(|s| is_name(s))
    })?;
    let instance_id = o.safe_id("instanceId")?;
    let props = o.required("props", BOUNDED_RULE, |v| {
        within_bounds(v, &BOUNDED_JSON).then_some(v)
    })?;
    let fallback = o.required("fallback", MUST_BE_OBJECT, |v| v.is_object().then_some(v))?;
    let fallback = Obj::new(fallback, "fallback")?;
    let kind = fallback.required("kind", KIND_RULE, |v| {
        text_within(v, COMPONENT_FALLBACK_KIND_CHARS_MAX)
    })?;
    let summary = fallback.required("summary", SUMMARY_RULE, |v| {
        text_within(v, COMPONENT_FALLBACK_SUMMARY_CHARS_MAX)
    })?;
    Ok(json!({
        "protocol": COMPONENT_PROTOCOL,
        "version": COMPONENT_PROTOCOL_VERSION,
        "type": "render",
        "componentKey": component_key,
        "instanceId": instance_id,
        "props": props,
        "fallback": { "kind": kind, "summary": summary },
    }))
}

/// A frame's field error as seen from its container: `frame.<path>` (`frame` for the root).
pub(crate) fn under_frame(e: FieldError) -> FieldError {
    let path = if e.path.is_empty() {
        "frame".to_owned()
    } else {
        join("frame", &e.path)
    };
    FieldError::new(path, e.rule)
}

/// The object, when it names our protocol.
fn ours(v: &Value) -> Option<&Map<String, Value>> {
    v.as_object()
        .filter(|o| o.get("protocol").and_then(Value::as_str) == Some(COMPONENT_PROTOCOL))
}

/// A component key or an interaction event name: `^[a-z][a-z0-9-]{0,63}$`.
fn is_name(s: &str) -> bool {
    let b = s.as_bytes();
    b.first().is_some_and(u8::is_ascii_lowercase)
        && b.len() <= COMPONENT_NAME_CHARS_MAX
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// A string of 1 to `max` UTF-16 units (zod's `min(1).max(max)`).
pub(crate) fn text_within(v: &Value, max: usize) -> Option<&str> {
    v.as_str().filter(|s| !s.is_empty() && utf16_len(s) <= max)
}
