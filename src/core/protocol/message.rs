//! The chat message wire format (AgentsKit `Message`, `ToolCall`, content parts), as carried in
//! `server.turn.snapshot` payloads and stored by `ChatMemory`.
//!
//! Decoding is the canonical projection: every rule is checked, unknown fields are dropped, and
//! serializing the result writes keys in the canonical order (the struct field order below).
//! Structural limits are counted over the wrapped record `{version: 1, messages}`, exactly as
//! the reference validates a memory record.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use super::field::{self, FieldError, Obj, MUST_BE_ARRAY, MUST_BE_OBJECT};
use crate::checks::{self, JsonBounds, MESSAGE_RECORD};

/// A failed message-array validation; `path` starts at `messages`.
pub type MessagesError = FieldError;

/// One chat message. Field order is the canonical wire key order.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Non-empty; not a SafeId (AgentsKit writes `msg-<epochMs>-<counter>`).
    pub id: String,
    pub role: Role,
    /// The text projection of the message; may be empty.
    pub content: String,
    pub status: MessageStatus,
    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` (see [`checks::format_iso_millis`]).
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parts: Option<Vec<Part>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// Where a message keeps its reasoning text: `metadata.reasoning` (AgentsKit's controller puts
/// a reasoning stream there too). The wire's content parts have no reasoning part.
pub const REASONING_KEY: &str = "reasoning";

impl Message {
    /// The reasoning text (`metadata.reasoning`), empty when there is none.
    pub fn reasoning(&self) -> &str {
        self.metadata
            .as_ref()
            .and_then(|m| m.get(REASONING_KEY))
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// Appends to the reasoning text (a `metadata.reasoning` that is not a string is replaced).
    pub fn append_reasoning(&mut self, text: &str) {
        let metadata = self.metadata.get_or_insert_with(Map::new);
        match metadata.get_mut(REASONING_KEY) {
            Some(Value::String(reasoning)) => reasoning.push_str(text),
            _ => {
                metadata.insert(REASONING_KEY.into(), Value::String(text.to_owned()));
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
    System,
    Tool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MessageStatus {
    Pending,
    Streaming,
    Complete,
    Error,
}

/// A tool invocation requested by the model. Field order is the canonical wire key order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolCall {
    /// Non-empty.
    pub id: String,
    /// Non-empty.
    pub name: String,
    pub args: Map<String, Value>,
    pub status: ToolCallStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    Pending,
    Running,
    Complete,
    Error,
    RequiresConfirmation,
}

/// A content part; serialized as `{"type": ..., <fields>}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Part {
    Text { text: String },
    Image(ImagePart),
    Audio(MediaPart),
    Video(MediaPart),
    File(FilePart),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImagePart {
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<ImageDetail>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageDetail {
    Low,
    High,
    Auto,
}

/// Audio or video.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaPart {
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Finite and >= 0. Kept as the JSON number it arrived as, so `3` stays `3` on the wire.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_sec: Option<Number>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FilePart {
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
}

/// Validates a message array and returns its canonical projection.
/// Error paths start at `messages`.
pub fn decode_messages(v: &Value) -> Result<Vec<Message>, MessagesError> {
    decode_messages_at(v, "messages")
}

/// The canonical JSON array of `messages` (key order preserved).
pub fn messages_to_value(messages: &[Message]) -> Value {
    Value::Array(messages.iter().map(message_to_value).collect())
}

/// One message as canonical JSON.
pub fn message_to_value(message: &Message) -> Value {
    // Infallible: every map key is a string and no field has a fallible Serialize impl.
    serde_json::to_value(message).expect("message serialization is infallible")
}

/// [`decode_messages`] with error paths rooted at `path` (e.g. `payload.messages`).
pub(crate) fn decode_messages_at(v: &Value, path: &str) -> Result<Vec<Message>, MessagesError> {
    let items = v
        .as_array()
        .ok_or_else(|| FieldError::new(path, MUST_BE_ARRAY))?;
    if !checks::within_bounds(v, &RECORD_MESSAGES_BOUNDS) {
        return Err(FieldError::new(path, record_bounds_rule()));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| decode_message(item, &field::index(path, i)))
        .collect()
}

fn record_bounds_rule() -> String {
    let b = &MESSAGE_RECORD;
    format!(
        "exceeds the message record limits ({} nodes, depth {}, {} items per array, \
         {} keys per object, keys of at most {} characters)",
        b.nodes_max, b.depth_max, b.array_items_max, b.object_entries_max, b.key_units_max
    )
}

/// [`MESSAGE_RECORD`] applied to the bare `messages` array instead of `{version: 1, messages}`:
/// the wrapper adds two nodes (the object and `version`) and one level above the array.
const RECORD_MESSAGES_BOUNDS: JsonBounds = JsonBounds {
    nodes_max: MESSAGE_RECORD.nodes_max - 2,
    depth_max: MESSAGE_RECORD.depth_max - 1,
    ..MESSAGE_RECORD
};

const ROLE_RULE: &str = "must be one of user, assistant, system, tool";
const MESSAGE_STATUS_RULE: &str = "must be one of pending, streaming, complete, error";
const TOOL_STATUS_RULE: &str =
    "must be one of pending, running, complete, error, requires_confirmation";
const CREATED_AT_RULE: &str =
    "must be a UTC timestamp with milliseconds (YYYY-MM-DDTHH:MM:SS.mmmZ)";
const PART_TYPE_RULE: &str = "must be one of text, image, audio, video, file";
const DETAIL_RULE: &str = "must be one of low, high, auto";
const DURATION_RULE: &str = "must be a finite number >= 0";

fn decode_message(v: &Value, path: &str) -> Result<Message, FieldError> {
    let o = Obj::new(v, path)?;
    Ok(Message {
        id: o.non_empty_string("id")?,
        role: o.required("role", ROLE_RULE, field::as_enum)?,
        content: o.string("content")?,
        status: o.required("status", MESSAGE_STATUS_RULE, field::as_enum)?,
        created_at: o.required("createdAt", CREATED_AT_RULE, |v| {
            v.as_str()
                .filter(|s| checks::is_iso_millis_utc(s))
                .map(str::to_owned)
        })?,
        parts: decode_optional_list(&o, "parts", decode_part)?,
        tool_calls: decode_optional_list(&o, "toolCalls", decode_tool_call)?,
        tool_call_id: o.optional_string("toolCallId")?,
        metadata: o.optional("metadata", MUST_BE_OBJECT, field::as_object)?,
    })
}

fn decode_optional_list<T>(
    o: &Obj<'_>,
    key: &str,
    decode: fn(&Value, &str) -> Result<T, FieldError>,
) -> Result<Option<Vec<T>>, FieldError> {
    let Some(v) = o.get(key) else { return Ok(None) };
    let path = o.path_of(key);
    let items = v
        .as_array()
        .ok_or_else(|| FieldError::new(path.as_str(), MUST_BE_ARRAY))?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| decode(item, &field::index(&path, i)))
        .collect::<Result<_, _>>()
        .map(Some)
}

/// One content part at `path` (a submitted message's attachment: `super::submit`).
pub(crate) fn decode_part_at(v: &Value, path: &str) -> Result<Part, FieldError> {
    decode_part(v, path)
}

fn decode_part(v: &Value, path: &str) -> Result<Part, FieldError> {
    let o = Obj::new(v, path)?;
    let kind = o.required("type", PART_TYPE_RULE, |v| v.as_str())?;
    match kind {
        "text" => Ok(Part::Text {
            text: o.string("text")?,
        }),
        "image" => Ok(Part::Image(ImagePart {
            source: o.string("source")?,
            mime_type: o.optional_string("mimeType")?,
            detail: o.optional("detail", DETAIL_RULE, field::as_enum)?,
        })),
        "audio" => Ok(Part::Audio(decode_media(&o)?)),
        "video" => Ok(Part::Video(decode_media(&o)?)),
        "file" => Ok(Part::File(FilePart {
            source: o.string("source")?,
            mime_type: o.optional_string("mimeType")?,
            filename: o.optional_string("filename")?,
        })),
        _ => Err(FieldError::new(o.path_of("type"), PART_TYPE_RULE)),
    }
}

fn decode_media(o: &Obj<'_>) -> Result<MediaPart, FieldError> {
    Ok(MediaPart {
        source: o.string("source")?,
        mime_type: o.optional_string("mimeType")?,
        duration_sec: o.optional("durationSec", DURATION_RULE, |v| {
            let n = v.as_number()?;
            n.as_f64()
                .filter(|f| f.is_finite() && *f >= 0.0)
                .map(|_| n.clone())
        })?,
    })
}

fn decode_tool_call(v: &Value, path: &str) -> Result<ToolCall, FieldError> {
    let o = Obj::new(v, path)?;
    Ok(ToolCall {
        id: o.non_empty_string("id")?,
        name: o.non_empty_string("name")?,
        args: o.required("args", MUST_BE_OBJECT, field::as_object)?,
        status: o.required("status", TOOL_STATUS_RULE, field::as_enum)?,
        result: o.optional_string("result")?,
        error: o.optional_string("error")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(input: Value, expected: Result<Value, String>) {
        let got = decode_messages(&input)
            .map(|m| messages_to_value(&m))
            .map_err(|e| e.message());
        match (&got, expected) {
            (Ok(v), Ok(want)) => assert_eq!(v.to_string(), want.to_string(), "input {input}"),
            (Err(msg), Err(want)) => assert_eq!(*msg, want, "input {input}"),
            _ => panic!("input {input}: got {got:?}"),
        }
    }

    fn msg() -> Value {
        json!({"id": "m1", "role": "user", "content": "hi", "status": "complete",
               "createdAt": "2026-07-11T03:00:00.000Z"})
    }

    fn with(key: &str, value: Value) -> Value {
        let mut m = msg();
        m[key] = value;
        m
    }

    #[test]
    fn canonical_projection_orders_keys_and_drops_unknown_fields() {
        let input = json!([{
            "metadata": {"z": 1, "a": 2}, "toolCallId": "t", "extra": true,
            "toolCalls": [{"error": "e", "result": "r", "status": "requires_confirmation",
                           "args": {"q": "x"}, "name": "lookup", "id": "c1", "junk": 1}],
            "parts": [{"detail": "auto", "source": "s", "type": "image", "junk": 1},
                      {"type": "audio", "source": "a", "durationSec": 3}],
            "createdAt": "2026-07-11T03:00:00.000Z", "status": "streaming",
            "content": "", "role": "assistant", "id": "msg-1-0"
        }]);
        let want = r#"[{"id":"msg-1-0","role":"assistant","content":"","status":"streaming","createdAt":"2026-07-11T03:00:00.000Z","parts":[{"type":"image","source":"s","detail":"auto"},{"type":"audio","source":"a","durationSec":3}],"toolCalls":[{"id":"c1","name":"lookup","args":{"q":"x"},"status":"requires_confirmation","result":"r","error":"e"}],"toolCallId":"t","metadata":{"z":1,"a":2}}]"#;
        let got = messages_to_value(&decode_messages(&input).expect("valid"));
        assert_eq!(got.to_string(), want);
    }

    #[test]
    fn every_rule_names_its_field() {
        let cases: Vec<(Value, Result<Value, String>)> = vec![
            (json!([]), Ok(json!([]))),
            (json!({}), Err("messages must be an array".into())),
            (json!([1]), Err("messages[0] must be a JSON object".into())),
            (
                json!([msg(), with("id", json!(""))]),
                Err("messages[1].id must be a non-empty string".into()),
            ),
            (
                json!([with("role", json!("bot"))]),
                Err(format!("messages[0].role {ROLE_RULE}")),
            ),
            (
                json!([with("content", json!(null))]),
                Err("messages[0].content must be a string".into()),
            ),
            (
                json!([with("status", json!("done"))]),
                Err(format!("messages[0].status {MESSAGE_STATUS_RULE}")),
            ),
            (
                json!([with("createdAt", json!("2026-07-11T03:00:00Z"))]),
                Err(format!("messages[0].createdAt {CREATED_AT_RULE}")),
            ),
            (
                json!([with("createdAt", json!("2026-02-30T03:00:00.000Z"))]),
                Err(format!("messages[0].createdAt {CREATED_AT_RULE}")),
            ),
            (
                json!([with("parts", json!({}))]),
                Err("messages[0].parts must be an array".into()),
            ),
            (
                json!([with("parts", json!([{"type": "gif"}]))]),
                Err(format!("messages[0].parts[0].type {PART_TYPE_RULE}")),
            ),
            (
                json!([with("parts", json!([{"type": "text"}]))]),
                Err("messages[0].parts[0].text must be a string".into()),
            ),
            (
                json!([with(
                    "parts",
                    json!([{"type": "image", "source": "s", "detail": "max"}])
                )]),
                Err(format!("messages[0].parts[0].detail {DETAIL_RULE}")),
            ),
            (
                json!([with(
                    "parts",
                    json!([{"type": "video", "source": "s", "durationSec": -1}])
                )]),
                Err(format!("messages[0].parts[0].durationSec {DURATION_RULE}")),
            ),
            (
                json!([with(
                    "parts",
                    json!([{"type": "file", "source": "s", "filename": 3}])
                )]),
                Err("messages[0].parts[0].filename must be a string".into()),
            ),
            (
                json!([with(
                    "toolCalls",
                    json!([{"id": "c", "name": "n", "args": [], "status": "pending"}])
                )]),
                Err("messages[0].toolCalls[0].args must be a JSON object".into()),
            ),
            (
                json!([with(
                    "toolCalls",
                    json!([{"id": "c", "name": "", "args": {}, "status": "pending"}])
                )]),
                Err("messages[0].toolCalls[0].name must be a non-empty string".into()),
            ),
            (
                json!([with(
                    "toolCalls",
                    json!([{"id": "c", "name": "n", "args": {}, "status": "waiting"}])
                )]),
                Err(format!(
                    "messages[0].toolCalls[0].status {TOOL_STATUS_RULE}"
                )),
            ),
            (
                json!([with("toolCallId", json!(null))]),
                Err("messages[0].toolCallId must be a string".into()),
            ),
            (
                json!([with("metadata", json!(null))]),
                Err("messages[0].metadata must be a JSON object".into()),
            ),
        ];
        for (input, expected) in cases {
            check(input, expected);
        }
    }

    #[test]
    fn structural_limits_count_the_wrapped_record() {
        // Depth: record(0) > messages(1) > message(2) > metadata(3) > ... deepest allowed is 32.
        let nest = |levels: usize| (0..levels).fold(json!(1), |acc, _| json!([acc]));
        // metadata at depth 3 holds {"d": nest(k)}: the leaf sits at depth 4 + k.
        let ok = json!([with("metadata", json!({"d": nest(28)}))]);
        let deep = json!([with("metadata", json!({"d": nest(29)}))]);
        assert!(decode_messages(&ok).is_ok());
        assert_eq!(
            decode_messages(&deep).map_err(|e| e.rule.into_owned()),
            Err(record_bounds_rule())
        );
        // Nodes: record + version + array = 3, each plain message = 6, so 1666 messages fit
        // (9999 nodes) plus one spare node; 1667 messages do not.
        let fits = Value::Array(vec![msg(); 1666]);
        let too_many = Value::Array(vec![msg(); 1667]);
        assert!(decode_messages(&fits).is_ok());
        assert!(decode_messages(&too_many).is_err());
        let long_content = json!([with("content", json!("x".repeat(200_000)))]);
        assert!(decode_messages(&long_content).is_ok());
    }
}
