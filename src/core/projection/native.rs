//! Native batches for hosts that run their own model stream (`toChatResponse`): the messages a host hands over, in any of the three
//! accepted shapes, become TanStack UI messages kept whole (native parts and metadata survive
//! storage unchanged); each is echoed as text chunks the way
//! `@durable-streams/tanstack-ai-transport` echoes them; then one `MESSAGES_SNAPSHOT` carries the
//! complete state (the log's projection with the new messages reconciled by id); then the
//! source's chunks, sanitized like the transport does. Pure: ids and time are arguments.
//!
//! The chunks a call writes depend only on its inputs (how many messages, how many source
//! chunks), never on what the log holds, so a replay under the same producer `(id, epoch)` gives
//! every chunk the same seq and the log appends only what an earlier call never stored.

use serde_json::{json, Map, Value};

use super::chunks::*;
use crate::protocol::field::FieldError;

/// The three shapes `newMessages` accepts, each read into a TanStack UI message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageShape {
    /// `{ id, role, parts, metadata?, createdAt? }`: kept whole.
    Ui,
    /// `{ role, content, toolCalls?, toolCallId? }` (TanStack `ModelMessage`): kept whole,
    /// with `parts` added (its content and tool calls as replay parts).
    Model,
    /// `{ id, role, content: string }`: kept whole, with one text part.
    Plain,
}

/// A new message, read.
#[derive(Clone, Debug, PartialEq)]
pub struct NewMessage {
    pub id: String,
    pub role: String,
    pub shape: MessageShape,
    /// The message as the native batch carries it: the host's object, plus `id` and `parts`
    /// where it had none.
    pub native: Value,
    /// For a model `tool` message: the call it answers (anchored on the call's message).
    pub answers: Option<String>,
}

const ROLES: [&str; 4] = ["user", "assistant", "system", "tool"];

/// Reads `newMessages`. `fresh_id` names a message that has no id. Errors name the field:
/// `newMessages[2].role`.
pub fn read_new_messages(
    items: &[Value],
    fresh_id: &mut dyn FnMut() -> String,
) -> Result<Vec<NewMessage>, FieldError> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| read_one(item, &format!("newMessages[{i}]"), fresh_id))
        .collect()
}

fn read_one(
    item: &Value,
    path: &str,
    fresh_id: &mut dyn FnMut() -> String,
) -> Result<NewMessage, FieldError> {
    let object = item
        .as_object()
        .ok_or_else(|| FieldError::new(path, "must be an object"))?;
    let id = match object.get("id") {
        None | Some(Value::Null) => fresh_id(),
        Some(Value::String(id)) if !id.is_empty() => id.clone(),
        Some(_) => {
            return Err(FieldError::new(
                format!("{path}.id"),
                "must be a non-empty string",
            ))
        }
    };
    let role = object
        .get("role")
        .and_then(Value::as_str)
        .filter(|r| ROLES.contains(r))
        .ok_or_else(|| {
            FieldError::new(
                format!("{path}.role"),
                "must be user, assistant, system or tool",
            )
        })?
        .to_owned();
    let mut native = object.clone();
    native.insert("id".into(), Value::String(id.clone()));
    let (shape, answers) = match object.get("parts") {
        Some(Value::Array(_)) => (MessageShape::Ui, None),
        Some(_) => return Err(FieldError::new(format!("{path}.parts"), "must be an array")),
        None => {
            let (shape, parts) = replay_parts(object, path)?;
            native.insert("parts".into(), Value::Array(parts));
            let answers = (role == "tool")
                .then(|| object.get("toolCallId").and_then(Value::as_str))
                .flatten()
                .map(str::to_owned);
            (shape, answers)
        }
    };
    Ok(NewMessage {
        id,
        role,
        shape,
        native: Value::Object(native),
        answers,
    })
}

/// The parts of a message given without any: its content (text, or content parts as they are)
/// and its tool calls as `tool-call` parts.
fn replay_parts(
    object: &Map<String, Value>,
    path: &str,
) -> Result<(MessageShape, Vec<Value>), FieldError> {
    let mut parts = Vec::new();
    let tool_calls = object.get("toolCalls");
    let mut shape = if tool_calls.is_some() || object.contains_key("toolCallId") {
        MessageShape::Model
    } else {
        MessageShape::Plain
    };
    let tool_result = object.get("role").and_then(Value::as_str) == Some("tool");
    match object.get("content") {
        Some(Value::String(text)) if tool_result => parts.push(json!({
            "type": "tool-result",
            "toolCallId": object.get("toolCallId").cloned().unwrap_or(Value::Null),
            "content": text,
            "state": "complete",
        })),
        Some(Value::String(text)) if !text.is_empty() => {
            parts.push(json!({ "type": "text", "content": text }))
        }
        Some(Value::String(_)) | Some(Value::Null) | None => {}
        Some(Value::Array(items)) => {
            shape = MessageShape::Model;
            for (i, part) in items.iter().enumerate() {
                parts.push(content_part(part, &format!("{path}.content[{i}]"))?);
            }
        }
        Some(_) => {
            return Err(FieldError::new(
                format!("{path}.content"),
                "must be a string, an array of content parts or null",
            ))
        }
    }
    match tool_calls {
        None | Some(Value::Null) => {}
        Some(Value::Array(calls)) => {
            for (i, call) in calls.iter().enumerate() {
                parts.push(tool_call_part(call, &format!("{path}.toolCalls[{i}]"))?);
            }
        }
        Some(_) => {
            return Err(FieldError::new(
                format!("{path}.toolCalls"),
                "must be an array",
            ))
        }
    }
    Ok((shape, parts))
}

/// A model content part as a UI part: text's `text` becomes `content`; other parts (images,
/// audio, documents, anything newer) are kept as they are.
fn content_part(part: &Value, path: &str) -> Result<Value, FieldError> {
    let object = part
        .as_object()
        .filter(|o| o.get("type").is_some_and(Value::is_string))
        .ok_or_else(|| FieldError::new(path, "must be an object with a string type"))?;
    if object.get("type").and_then(Value::as_str) == Some("text") && !object.contains_key("content")
    {
        let mut text = object.clone();
        let value = text.remove("text").unwrap_or(Value::String(String::new()));
        text.insert("content".into(), value);
        return Ok(Value::Object(text));
    }
    Ok(part.clone())
}

/// `{ id, type: 'function', function: { name, arguments } }` as a `tool-call` part.
fn tool_call_part(call: &Value, path: &str) -> Result<Value, FieldError> {
    let id = call
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| FieldError::new(format!("{path}.id"), "must be a non-empty string"))?;
    let name = call
        .pointer("/function/name")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            FieldError::new(
                format!("{path}.function.name"),
                "must be a non-empty string",
            )
        })?;
    let arguments = match call.pointer("/function/arguments") {
        Some(Value::String(text)) => text.clone(),
        None | Some(Value::Null) => "{}".to_owned(),
        Some(other) => other.to_string(),
    };
    let mut part = json!({
        "type": "tool-call",
        "id": id,
        "name": name,
        "arguments": arguments,
        "state": "input-complete",
    });
    if let Ok(input) = serde_json::from_str::<Value>(&arguments) {
        part["input"] = input;
    }
    Ok(part)
}

/// The text echo of a message, as the transport writes it (`model: "client"`; content only when
/// there is text). `tool` messages are not echoed: they live in the native batch, anchored on
/// the call they answer.
pub fn echo_chunks(message: &NewMessage, now_ms: u64) -> Vec<Value> {
    if message.role == "tool" {
        return Vec::new();
    }
    let text = message_text(&message.native);
    let id = &message.id;
    let mut out = vec![json!({
        "type": TEXT_MESSAGE_START, "messageId": id, "role": message.role,
        "model": "client", "timestamp": now_ms,
    })];
    if !text.is_empty() {
        out.push(json!({
            "type": TEXT_MESSAGE_CONTENT, "messageId": id, "delta": text,
            "model": "client", "timestamp": now_ms,
        }));
    }
    out.push(json!({ "type": TEXT_MESSAGE_END, "messageId": id, "model": "client", "timestamp": now_ms }));
    out
}

/// The text of a UI message: its text parts joined (`content`, else `text`).
pub(crate) fn message_text(native: &Value) -> String {
    native
        .get("parts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|p| {
            p.get("content")
                .and_then(Value::as_str)
                .or_else(|| p.get("text").and_then(Value::as_str))
        })
        .collect()
}

/// The native batch: `history` (the log's projection as UI messages) with `new` reconciled by
/// id — a message already there is replaced in place, others are appended, a `tool` model
/// message becomes a `tool-result` part (and the call's `output`) on the message that made the
/// call when that message is in the batch — as one `MESSAGES_SNAPSHOT`.
pub fn native_batch(history: Vec<Value>, new: &[NewMessage], now_ms: u64) -> Value {
    let mut messages = history;
    for message in new {
        if let Some(call_id) = &message.answers {
            if anchor_result(&mut messages, call_id, &message.native) {
                continue;
            }
        }
        let same = messages
            .iter()
            .position(|m| m.get("id").and_then(Value::as_str) == Some(message.id.as_str()));
        match same {
            Some(at) => messages[at] = message.native.clone(),
            None => messages.push(message.native.clone()),
        }
    }
    json!({ "type": MESSAGES_SNAPSHOT, "messages": messages, "timestamp": now_ms })
}

/// Puts a tool result on the message whose `tool-call` part has `call_id`; false when no
/// message in the batch made that call.
fn anchor_result(messages: &mut [Value], call_id: &str, result: &Value) -> bool {
    let is_call = |p: &Value| {
        p.get("type").and_then(Value::as_str) == Some("tool-call")
            && p.get("id").and_then(Value::as_str) == Some(call_id)
    };
    let Some(owner) = messages.iter_mut().rev().find(|m| {
        m.get("parts")
            .and_then(Value::as_array)
            .is_some_and(|parts| parts.iter().any(is_call))
    }) else {
        return false;
    };
    let content = result
        .get("content")
        .cloned()
        .unwrap_or(Value::String(String::new()));
    let Some(parts) = owner.get_mut("parts").and_then(Value::as_array_mut) else {
        return false;
    };
    for part in parts.iter_mut().filter(|p| is_call(p)) {
        let output = content
            .as_str()
            .and_then(|text| serde_json::from_str::<Value>(text).ok())
            .unwrap_or_else(|| content.clone());
        part["output"] = output;
        part["state"] = Value::String("complete".into());
    }
    parts.retain(|p| {
        !(p.get("type").and_then(Value::as_str) == Some("tool-result")
            && p.get("toolCallId").and_then(Value::as_str) == Some(call_id))
    });
    parts.push(json!({ "type": "tool-result", "toolCallId": call_id, "content": content, "state": "complete" }));
    true
}

/// Why a source chunk cannot be stored.
pub(crate) const CHUNK_NOT_AN_EVENT: &str = "must be an object with a string type";

/// A source chunk as the log stores it: an object with a string `type`; `TEXT_MESSAGE_CONTENT`
/// loses its accumulated `content` (readers rebuild it from the deltas), as the transport does.
pub fn sanitize_chunk(chunk: Value) -> Result<Value, &'static str> {
    let Value::Object(mut object) = chunk else {
        return Err(CHUNK_NOT_AN_EVENT);
    };
    match object.get("type").and_then(Value::as_str) {
        Some(TEXT_MESSAGE_CONTENT) => {
            object.remove("content");
        }
        Some(_) => {}
        None => return Err(CHUNK_NOT_AN_EVENT),
    }
    Ok(Value::Object(object))
}
