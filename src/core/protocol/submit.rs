//! The user's whole message on a `client.turn.submit`: turnkeep's additive `payload.message`.
//!
//! AgentsKit's v1 submit carries text only (`payload.input`). A connection's `send(messages)`
//! also posts the last user message as the client holds it — an AI SDK `UIMessage`, a TanStack
//! UI or model message, or an AgentsKit message — under `payload.message`, so the stored user
//! message keeps the client's id, attachments and metadata. `input` stays required and is the
//! text: an AgentsKit server drops the unknown field (its payload schema is not strict) and
//! runs the turn on `input`, so both servers take the same body.
//!
//! What is read here is what `createChatHandler` keeps; a host's own route (`toChatResponse`)
//! may pass `payload.message` on whole as one of its `newMessages`, which reads it itself.

use serde_json::{Map, Value};

use super::field::{FieldError, MUST_BE_OBJECT};
use super::message::decode_part_at;
use super::Part;
use crate::agui::request::media_part;
use crate::checks::{within_bounds, BOUNDED_JSON};
use crate::limits::UI_MESSAGE_FILES_MAX;
use crate::ui::request::{file_part, is_message_id, UI_MESSAGE_BOUNDS};

/// Where the message is, for error paths.
const PATH: &str = "payload.message";

/// What the stored user message takes from `payload.message` (its text is `input`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SubmitMessage {
    /// The client's id for the message (`None`: it has none, and the server draws one).
    pub id: Option<String>,
    /// Its attachments as stored file, image, audio or video parts, in order.
    pub files: Vec<Part>,
    /// `metadata`, a plain object within the bounded-JSON limits.
    pub metadata: Option<Map<String, Value>>,
}

/// Reads `payload.message`. Every rule broken names its field.
pub fn read_submit_message(message: &Value) -> Result<SubmitMessage, FieldError> {
    let object = message
        .as_object()
        .ok_or_else(|| FieldError::new(PATH, MUST_BE_OBJECT))?;
    if !within_bounds(message, &UI_MESSAGE_BOUNDS) {
        return Err(FieldError::new(
            PATH,
            "exceeds the message limits (UI_MESSAGE_NODES_MAX nodes, UI_MESSAGE_DEPTH_MAX deep)",
        ));
    }
    match object.get("role") {
        None => {}
        Some(Value::String(role)) if role == "user" => {}
        Some(_) => return Err(field("role", "must be user (the message the turn sends)")),
    }
    let id = match object.get("id") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) if is_message_id(id) => Some(id.clone()),
        Some(_) => {
            return Err(field(
                "id",
                "must be a non-empty string of at most UI_MESSAGE_ID_CHARS_MAX characters, no control characters",
            ))
        }
    };
    let metadata = match object.get("metadata") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) if within_bounds(&object["metadata"], &BOUNDED_JSON) => {
            Some(m.clone())
        }
        Some(Value::Object(_)) => {
            return Err(field("metadata", "exceeds the bounded-JSON limits"))
        }
        Some(_) => return Err(field("metadata", MUST_BE_OBJECT)),
    };
    Ok(SubmitMessage {
        id,
        files: files_of(object)?,
        metadata,
    })
}

/// The attachments: `parts` (UI messages, AgentsKit's) or a model message's `content` array.
fn files_of(object: &Map<String, Value>) -> Result<Vec<Part>, FieldError> {
    let (key, parts) = match (object.get("parts"), object.get("content")) {
        (Some(Value::Array(parts)), _) => ("parts", parts),
        (Some(_), _) => return Err(field("parts", "must be an array")),
        (None, Some(Value::Array(parts))) => ("content", parts),
        _ => return Ok(Vec::new()),
    };
    let mut files = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let path = format!("{PATH}.{key}[{i}]");
        if let Some(file) = attachment(part, &path)? {
            files.push(file);
        }
    }
    if files.len() > UI_MESSAGE_FILES_MAX {
        return Err(field(key, "may carry at most UI_MESSAGE_FILES_MAX attachments"));
    }
    Ok(files)
}

/// One part as an attachment, in whichever vocabulary it is written; `None` for text (the
/// text is `input`) and for what a turn does not read (step markers, data parts, sources).
///
/// - the AI SDK's `{ type: "file", mediaType, url, filename? }`;
/// - TanStack AI's and AG-UI's `{ type: image|audio|video|document, source: { type, value, mimeType? } }`;
/// - AgentsKit's `{ type: image|audio|video|file, source: string, … }`.
fn attachment(part: &Value, path: &str) -> Result<Option<Part>, FieldError> {
    let kind = part.get("type").and_then(Value::as_str).unwrap_or_default();
    let source_is_object = part.get("source").is_some_and(Value::is_object);
    let read = match kind {
        "file" if part.get("url").is_some() => file_part(part),
        "image" | "audio" | "video" | "document" if source_is_object => media_part(part),
        "image" | "audio" | "video" | "file" => return decode_part_at(part, path).map(Some),
        "document" => return Err(FieldError::new(format!("{path}.source"), MUST_BE_OBJECT)),
        _ => return Ok(None),
    };
    read.map(Some)
        .map_err(|e| FieldError::new(path, e.detail))
}

fn field(key: &str, rule: &'static str) -> FieldError {
    FieldError::new(format!("{PATH}.{key}"), rule)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{FilePart, ImagePart};
    use serde_json::json;

    fn check(message: Value, expected: Result<SubmitMessage, &str>) {
        let got = read_submit_message(&message).map_err(|e| e.message());
        match expected {
            Ok(want) => assert_eq!(got, Ok(want), "{message}"),
            Err(path) => {
                let error = got.expect_err(&message.to_string());
                assert!(error.starts_with(path), "{message}: {error}");
            }
        }
    }

    fn file(source: &str, mime: Option<&str>, filename: Option<&str>) -> Part {
        Part::File(FilePart {
            source: source.into(),
            mime_type: mime.map(str::to_owned),
            filename: filename.map(str::to_owned),
        })
    }

    #[test]
    fn each_vocabulary_of_attachment_is_read() {
        let meta = json!({ "source": "composer", "n": 2 });
        check(
            json!({ "id": "m1", "role": "user", "metadata": meta, "parts": [
                { "type": "text", "text": "look" },
                { "type": "file", "mediaType": "image/png", "url": "https://x/a.png", "filename": "a.png" },
                { "type": "step-start" },
            ]}),
            Ok(SubmitMessage {
                id: Some("m1".into()),
                files: vec![file("https://x/a.png", Some("image/png"), Some("a.png"))],
                metadata: meta.as_object().cloned(),
            }),
        );
        check(
            json!({ "id": "m2", "role": "user", "parts": [
                { "type": "text", "content": "look" },
                { "type": "image", "source": { "type": "data", "value": "AAAA", "mimeType": "image/png" } },
            ]}),
            Ok(SubmitMessage {
                id: Some("m2".into()),
                files: vec![file("data:image/png;base64,AAAA", Some("image/png"), None)],
                metadata: None,
            }),
        );
        check(
            json!({ "role": "user", "content": "look", "parts": [
                { "type": "image", "source": "https://x/b.jpg", "detail": "low" },
            ]}),
            Ok(SubmitMessage {
                id: None,
                files: vec![Part::Image(ImagePart {
                    source: "https://x/b.jpg".into(),
                    mime_type: None,
                    detail: Some(crate::protocol::ImageDetail::Low),
                })],
                metadata: None,
            }),
        );
        check(
            json!({ "role": "user", "content": [
                { "type": "text", "content": "look" },
                { "type": "document", "source": { "type": "url", "value": "https://x/c.pdf", "mimeType": "application/pdf" } },
            ]}),
            Ok(SubmitMessage {
                id: None,
                files: vec![file("https://x/c.pdf", Some("application/pdf"), None)],
                metadata: None,
            }),
        );
        check(json!({}), Ok(SubmitMessage::default()));
    }

    #[test]
    fn a_broken_rule_names_its_field() {
        check(json!("hi"), Err("payload.message must be a JSON object"));
        check(json!({ "role": "assistant" }), Err("payload.message.role"));
        check(json!({ "id": "" }), Err("payload.message.id"));
        check(json!({ "id": 7 }), Err("payload.message.id"));
        check(json!({ "metadata": [1] }), Err("payload.message.metadata"));
        let long = "x".repeat(20_000);
        check(json!({ "metadata": { "k": long } }), Err("payload.message.metadata"));
        check(json!({ "parts": {} }), Err("payload.message.parts"));
        check(
            json!({ "parts": [{ "type": "file", "url": "", "mediaType": "image/png" }] }),
            Err("payload.message.parts[0]"),
        );
        check(
            json!({ "parts": [{ "type": "image", "source": { "type": "id", "value": "file-1" } }] }),
            Err("payload.message.parts[0]"),
        );
        check(
            json!({ "parts": [{ "type": "audio", "source": 3 }] }),
            Err("payload.message.parts[0].source"),
        );
        check(
            json!({ "parts": [{ "type": "document", "source": "https://x" }] }),
            Err("payload.message.parts[0].source"),
        );
        let many: Vec<Value> = (0..=UI_MESSAGE_FILES_MAX)
            .map(|i| json!({ "type": "file", "url": format!("https://x/{i}"), "mediaType": "text/plain" }))
            .collect();
        check(json!({ "parts": many }), Err("payload.message.parts"));
    }
}
