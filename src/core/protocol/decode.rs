//! Decoding untrusted input into a [`TurnEvent`], with the reference decoder's diagnostic order:
//! 1. text that is not JSON -> `PROTOCOL_INVALID_PAYLOAD`;
//! 2. our `protocol` with a numeric `version` other than 1 -> `PROTOCOL_UNSUPPORTED_VERSION`;
//! 3. our protocol and version with an unknown string `event` -> `PROTOCOL_UNKNOWN_EVENT`;
//! 4. any other schema failure -> `PROTOCOL_INVALID_PAYLOAD`.
//!
//! Unknown fields are dropped at every level. Diagnostics are returned to the caller, never sent
//! on the wire; `eventId` is echoed only when the input's `eventId` is a valid SafeId.
//!
//! Where JSON text parsing differs from `JSON.parse` the input is rejected as not JSON, never
//! misread: lone UTF-16 surrogate escapes (`"\ud800"`, not representable in a Rust string),
//! numbers beyond f64 range (`1e400`, which JavaScript turns into `Infinity`) and nesting
//! deeper than serde_json's 128 levels (a valid v1 event's own fields stop at depth 33; only
//! unknown fields could nest deeper).

use serde::ser::{Serialize, SerializeStruct, Serializer};
use serde_json::Value;

use super::diagnostic::decode_diagnostic_at;
use super::event::{
    Envelope, EventBody, EventKind, Lineage, LineageSource, SnapshotPayload, TurnEvent, Usage,
    TURN_PROTOCOL,
};
use super::field::{self, FieldError, Obj, MUST_BE_SAFE_UINT};
use super::message::decode_messages_at;
use crate::checks;

/// Why an input is not a turn event. Always `retryable: false`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeDiagnostic {
    pub code: DecodeCode,
    /// For developers: names the failing field and rule; never echoes the input's values.
    pub message: String,
    /// The input's `eventId`, when it was a valid SafeId.
    pub event_id: Option<String>,
    /// The input was text that does not parse as JSON (step 1), as opposed to a JSON value
    /// that fails the schema; both are `PROTOCOL_INVALID_PAYLOAD`, with different texts.
    pub not_json: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DecodeCode {
    InvalidPayload,
    UnsupportedVersion,
    UnknownEvent,
}

impl DecodeCode {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidPayload => "PROTOCOL_INVALID_PAYLOAD",
            Self::UnsupportedVersion => "PROTOCOL_UNSUPPORTED_VERSION",
            Self::UnknownEvent => "PROTOCOL_UNKNOWN_EVENT",
        }
    }
}

impl DecodeDiagnostic {
    /// Decoder diagnostics are never retryable: the same input fails the same way.
    pub const fn retryable(&self) -> bool {
        false
    }

    /// The reference decoder's literal text for this failure (AgentsKit Chat's
    /// `decodeTurnEvent`), which the JS export returns as `message`. It names no field and
    /// quotes nothing of the input; [`message`](Self::message) is the developer detail.
    pub const fn reference_message(&self) -> &'static str {
        match (self.not_json, self.code) {
            (true, _) => "Turn event is not valid JSON.",
            (false, DecodeCode::UnsupportedVersion) => {
                "Turn event uses an unsupported protocol version."
            }
            (false, DecodeCode::UnknownEvent) => "Turn event kind is unknown.",
            (false, DecodeCode::InvalidPayload) => "Turn event payload is invalid.",
        }
    }

    /// A value that is not JSON at all (a JS function, `NaN`, a cycle...): an invalid payload.
    pub fn not_a_json_value() -> Self {
        Self {
            code: DecodeCode::InvalidPayload,
            message: "the input is not a JSON value".to_owned(),
            event_id: None,
            not_json: false,
        }
    }
}

impl Serialize for DecodeDiagnostic {
    /// `{code, message, retryable, eventId?}`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st =
            s.serialize_struct("DecodeDiagnostic", 3 + usize::from(self.event_id.is_some()))?;
        st.serialize_field("code", self.code.as_str())?;
        st.serialize_field("message", &self.message)?;
        st.serialize_field("retryable", &self.retryable())?;
        if let Some(id) = &self.event_id {
            st.serialize_field("eventId", id)?;
        }
        st.end()
    }
}

/// Decodes JSON text (one NDJSON line without its `\n`, or a request body).
pub fn decode_turn_event_text(text: &str) -> Result<TurnEvent, DecodeDiagnostic> {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => decode_turn_event(&v),
        Err(_) => Err(DecodeDiagnostic {
            code: DecodeCode::InvalidPayload,
            message: "the input is not valid JSON".to_owned(),
            event_id: None,
            not_json: true,
        }),
    }
}

/// Decodes an already-parsed JSON value.
pub fn decode_turn_event(v: &Value) -> Result<TurnEvent, DecodeDiagnostic> {
    let fail = |code, message: String| DecodeDiagnostic {
        code,
        message,
        event_id: echoed_event_id(v),
        not_json: false,
    };
    if let Some((code, message)) = version_or_event_mismatch(v) {
        return Err(fail(code, message.to_owned()));
    }
    decode_schema(v).map_err(|e| fail(DecodeCode::InvalidPayload, e.message()))
}

const UNSUPPORTED_VERSION_MESSAGE: &str =
    "version is not supported: this decoder speaks agentskit.chat.turn version 1";
const UNKNOWN_EVENT_MESSAGE: &str = "event is not a v1 turn event \
     (client.turn.submit, server.turn.snapshot, server.turn.diagnostic)";

/// Steps 2 and 3 of the check order; `None` means "go on to the full schema".
fn version_or_event_mismatch(v: &Value) -> Option<(DecodeCode, &'static str)> {
    let o = v.as_object()?;
    if o.get("protocol").and_then(Value::as_str) != Some(TURN_PROTOCOL) {
        return None;
    }
    let version = o.get("version").and_then(Value::as_f64)?;
    if version != 1.0 {
        return Some((DecodeCode::UnsupportedVersion, UNSUPPORTED_VERSION_MESSAGE));
    }
    let event = o.get("event").and_then(Value::as_str)?;
    EventKind::parse(event)
        .is_none()
        .then_some((DecodeCode::UnknownEvent, UNKNOWN_EVENT_MESSAGE))
}

fn echoed_event_id(v: &Value) -> Option<String> {
    v.get("eventId").and_then(field::as_safe_id)
}

const PROTOCOL_RULE: &str = "must be \"agentskit.chat.turn\"";
const VERSION_RULE: &str = "must be the number 1";
const EMITTED_AT_RULE: &str =
    "must be an ISO 8601 timestamp with a Z or +HH:MM offset (e.g. 2026-07-11T03:00:00.000Z)";
const EVENT_RULE: &str =
    "must be one of client.turn.submit, server.turn.snapshot, server.turn.diagnostic";
const INPUT_RULE: &str = "must be a non-blank string";
const STATUS_RULE: &str = "must be one of idle, streaming, complete, error";
const OPERATION_RULE: &str = "must be one of submit, retry, edit, regenerate";

/// Step 4: the full v1 schema, fields in schema order.
fn decode_schema(v: &Value) -> Result<TurnEvent, FieldError> {
    let o = Obj::new(v, "")?;
    let envelope = decode_envelope(&o)?;
    let kind = o.required("event", EVENT_RULE, |v| {
        v.as_str().and_then(EventKind::parse)
    })?;
    let payload = o.required("payload", field::MUST_BE_OBJECT, |v| {
        v.is_object().then_some(v)
    })?;
    let body = decode_body(kind, payload)?;
    Ok(TurnEvent { envelope, body })
}

/// `protocol`, `version` and the envelope fields, in schema order.
pub(crate) fn decode_envelope(o: &Obj<'_>) -> Result<Envelope, FieldError> {
    o.required("protocol", PROTOCOL_RULE, |v| {
        v.as_str().filter(|s| *s == TURN_PROTOCOL)
    })?;
    o.required("version", VERSION_RULE, |v| {
        v.as_f64().filter(|n| *n == 1.0)
    })?;
    Ok(Envelope {
        event_id: o.safe_id("eventId")?,
        session_id: o.safe_id("sessionId")?,
        turn_id: o.safe_id("turnId")?,
        sequence: o.required("sequence", MUST_BE_SAFE_UINT, checks::safe_uint)?,
        emitted_at: o.required("emittedAt", EMITTED_AT_RULE, |v| {
            v.as_str()
                .filter(|s| checks::is_offset_timestamp(s))
                .map(str::to_owned)
        })?,
    })
}

fn decode_body(kind: EventKind, payload: &Value) -> Result<EventBody, FieldError> {
    match kind {
        EventKind::Submit => {
            let o = Obj::new(payload, "payload")?;
            let input = o.required("input", INPUT_RULE, |v| {
                v.as_str().filter(|s| !is_blank(s)).map(str::to_owned)
            })?;
            Ok(EventBody::Submit { input })
        }
        EventKind::Snapshot => decode_snapshot(payload).map(EventBody::Snapshot),
        EventKind::Diagnostic => {
            decode_diagnostic_at(payload, "payload").map(EventBody::Diagnostic)
        }
    }
}

fn decode_snapshot(payload: &Value) -> Result<SnapshotPayload, FieldError> {
    let o = Obj::new(payload, "payload")?;
    let messages_path = o.path_of("messages");
    let messages = match o.get("messages") {
        Some(v) => decode_messages_at(v, &messages_path)?,
        None => return Err(FieldError::new(messages_path, field::MUST_BE_ARRAY)),
    };
    Ok(SnapshotPayload {
        messages,
        status: o.required("status", STATUS_RULE, field::as_enum)?,
        usage: decode_usage(o.get("usage"), &o.path_of("usage"))?,
        error: match o.get("error") {
            Some(v) => Some(decode_diagnostic_at(v, &o.path_of("error"))?),
            None => None,
        },
        lineage: match o.get("lineage") {
            Some(v) => Some(decode_lineage(v, &o.path_of("lineage"))?),
            None => None,
        },
        confirmations: match o.get("confirmations") {
            Some(v) => crate::session::decode_confirmations(v).map_err(|detail| {
                FieldError::new(o.path_of("confirmations"), format!("is invalid: {detail}"))
            })?,
            None => Vec::new(),
        },
    })
}

fn decode_usage(v: Option<&Value>, path: &str) -> Result<Usage, FieldError> {
    let o = Obj::new(v.unwrap_or(&Value::Null), path)?;
    Ok(Usage {
        prompt_tokens: o.required("promptTokens", MUST_BE_SAFE_UINT, checks::safe_uint)?,
        completion_tokens: o.required("completionTokens", MUST_BE_SAFE_UINT, checks::safe_uint)?,
        total_tokens: o.required("totalTokens", MUST_BE_SAFE_UINT, checks::safe_uint)?,
    })
}

fn decode_lineage(v: &Value, path: &str) -> Result<Lineage, FieldError> {
    let o = Obj::new(v, path)?;
    let operation = o.required("operation", OPERATION_RULE, Value::as_str)?;
    let source = || -> Result<LineageSource, FieldError> {
        Ok(LineageSource {
            parent_turn_id: o.safe_id("parentTurnId")?,
            source_message_id: o.safe_id("sourceMessageId")?,
        })
    };
    match operation {
        "submit" => Ok(Lineage::Submit),
        "retry" => source().map(Lineage::Retry),
        "edit" => source().map(Lineage::Edit),
        "regenerate" => source().map(Lineage::Regenerate),
        _ => Err(FieldError::new(o.path_of("operation"), OPERATION_RULE)),
    }
}

/// Blank after JavaScript's `String.prototype.trim`, whose whitespace set is Unicode
/// White_Space without U+0085, plus U+FEFF.
pub(crate) fn is_blank(s: &str) -> bool {
    s.chars()
        .all(|c| c == '\u{FEFF}' || (c.is_whitespace() && c != '\u{85}'))
}

#[cfg(test)]
mod tests {
    use super::is_blank;

    #[test]
    fn blank_means_what_javascript_trim_removes() {
        for (s, blank) in [
            ("", true),
            (" \t\n\r\u{0B}\u{0C}", true),
            (
                "\u{A0}\u{1680}\u{2000}\u{200A}\u{2028}\u{2029}\u{202F}\u{205F}\u{3000}",
                true,
            ),
            ("\u{FEFF}", true), // JS trims the BOM; Rust's char::is_whitespace does not
            ("\u{85}", false),  // Rust's whitespace includes NEL; JS trim keeps it
            ("\u{200B}", false), // zero-width space is not whitespace in either
            (" a ", false),
        ] {
            assert_eq!(is_blank(s), blank, "{s:?}");
        }
    }
}
