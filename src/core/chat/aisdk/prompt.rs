//! A [`ModelRequest`] as the call options of `doStream(options)` (`LanguageModelV2/3/4CallOptions`
//! without `abortSignal`, which the shell adds):
//!
//! - `prompt`: a `system` message with the definition's instructions, then the conversation:
//!   `system` messages as they are; `user` content as parts (`text`, and `file` parts for the
//!   message's image, audio, video and file parts); `assistant` text and the `tool-call` parts
//!   of calls that have their result; one `tool` message of `tool-result` parts for each run of
//!   results, beside the call they answer (providers refuse a result without its call, and a
//!   call without its result; a call still waiting for a person is not sent). Reasoning is not
//!   sent back (providers accept only their own, signed, reasoning).
//! - `tools` `{ type: 'function', name, description, inputSchema }` and `toolChoice` (when the
//!   definition has tools), `temperature`, `maxOutputTokens`, `topP`, `stopSequences`,
//!   `providerOptions`, each only when set.
//!
//! File data: a `data:` URL becomes its bytes as base64, any other URL stays a URL, and a source
//! that is neither (no `scheme:`) is taken as base64 data. V4 tags the data (`{ type: 'data',
//! data }` / `{ type: 'url', url }`); V2 and V3 take the base64 text or the URL itself. URLs must
//! be `URL` objects, which JSON cannot hold: [`CallOptions::urls`] lists where they are, for the
//! shell to make them.

use serde_json::{Map, Value};

use super::SpecVersion;
use crate::chat::model::{ModelRequest, ToolSpec};
use crate::chat::settings::number;
use crate::hash::FixedHashMap;
use crate::protocol::message::{FilePart, ImagePart, MediaPart};
use crate::protocol::{Message, MessageStatus, Part, Role};
use crate::sandbox::sha256::base64;

/// A JSON object of `entries`. One function for every object of the prompt: `json!` would inline
/// a map and a serializer per call site (measured: 15 kB of the server's wasm, 5 kB this way).
#[inline(never)]
fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

fn text(s: &str) -> Value {
    Value::String(s.to_owned())
}

/// A `{ role, content }` message.
fn message(role: &str, content: Value) -> Value {
    object([("role", text(role)), ("content", content)])
}

/// The options, and the JSON pointers of the strings in them the shell turns into `URL`s.
#[derive(Clone, Debug, PartialEq)]
pub struct CallOptions {
    pub value: Value,
    pub urls: Vec<String>,
}

/// The call options for `request` to a model of `version`.
pub fn call_options(request: &ModelRequest, version: SpecVersion) -> CallOptions {
    let mut urls = Vec::new();
    let prompt = prompt(request, version, &mut urls);
    let mut options = Map::new();
    options.insert("prompt".into(), Value::Array(prompt));
    let settings = &request.settings;
    if !request.tools.is_empty() {
        let tools = request.tools.iter().map(tool_value).collect();
        options.insert("tools".into(), Value::Array(tools));
        if let Some(choice) = &settings.tool_choice {
            options.insert("toolChoice".into(), choice.to_value());
        }
    }
    if let Some(t) = settings.temperature {
        options.insert("temperature".into(), number(t));
    }
    if let Some(n) = settings.max_output_tokens {
        options.insert("maxOutputTokens".into(), Value::from(n));
    }
    if let Some(p) = settings.top_p {
        options.insert("topP".into(), number(p));
    }
    if !settings.stop_sequences.is_empty() {
        let list = settings.stop_sequences.iter().cloned().map(Value::String);
        options.insert("stopSequences".into(), Value::Array(list.collect()));
    }
    if let Some(provider) = &settings.provider_options {
        options.insert("providerOptions".into(), Value::Object(provider.clone()));
    }
    CallOptions {
        value: Value::Object(options),
        urls,
    }
}

fn tool_value(tool: &ToolSpec) -> Value {
    object([
        ("type", text("function")),
        ("name", text(&tool.name)),
        ("description", text(&tool.description)),
        ("inputSchema", tool.parameters.clone()),
    ])
}

fn prompt(request: &ModelRequest, version: SpecVersion, urls: &mut Vec<String>) -> Vec<Value> {
    let answered = request.answered_calls();
    let mut out: Vec<Value> = Vec::new();
    if let Some(instructions) = &request.settings.instructions {
        out.push(message("system", text(instructions)));
    }
    // Calls sent so far (id → tool name): a result is sent only beside its call.
    let mut sent: FixedHashMap<&str, &str> = FixedHashMap::default();
    for m in &request.messages {
        match m.role {
            Role::System if !m.content.is_empty() => out.push(message("system", text(&m.content))),
            Role::System => {}
            Role::User => {
                let at = format!("/prompt/{}/content", out.len());
                let content = user_content(m, version, &at, urls);
                if !content.is_empty() {
                    out.push(message("user", Value::Array(content)));
                }
            }
            Role::Assistant => {
                let mut content = Vec::new();
                if !m.content.is_empty() {
                    content.push(text_part(&m.content));
                }
                for call in m.tool_calls.iter().flatten() {
                    if answered.contains(call.id.as_str()) {
                        sent.insert(&call.id, &call.name);
                        content.push(object([
                            ("type", text("tool-call")),
                            ("toolCallId", text(&call.id)),
                            ("toolName", text(&call.name)),
                            ("input", Value::Object(call.args.clone())),
                        ]));
                    }
                }
                if !content.is_empty() {
                    out.push(message("assistant", Value::Array(content)));
                }
            }
            Role::Tool => {
                let Some(result) = tool_result(m, &sent) else {
                    continue;
                };
                match out.last_mut() {
                    Some(last) if last["role"] == "tool" => {
                        if let Some(parts) = last["content"].as_array_mut() {
                            parts.push(result);
                        }
                    }
                    _ => out.push(message("tool", Value::Array(vec![result]))),
                }
            }
        }
    }
    out
}

/// A `tool-result` part for a tool message whose call was sent: its text, or for a failed call
/// its error text.
fn tool_result(message: &Message, sent: &FixedHashMap<&str, &str>) -> Option<Value> {
    let call_id = message.tool_call_id.as_deref()?;
    let name = sent.get(call_id)?;
    let kind = if message.status == MessageStatus::Error {
        "error-text"
    } else {
        "text"
    };
    Some(object([
        ("type", text("tool-result")),
        ("toolCallId", text(call_id)),
        ("toolName", text(name)),
        (
            "output",
            object([("type", text(kind)), ("value", text(&message.content))]),
        ),
    ]))
}

fn text_part(s: &str) -> Value {
    object([("type", text("text")), ("text", text(s))])
}

/// A user message's parts: its own (text and files), or its text when it has none; when its
/// parts hold no text, its text comes first.
fn user_content(
    message: &Message,
    version: SpecVersion,
    at: &str,
    urls: &mut Vec<String>,
) -> Vec<Value> {
    let parts = message.parts.as_deref().unwrap_or_default();
    let has_text = parts.iter().any(|p| matches!(p, Part::Text { .. }));
    let mut out = Vec::new();
    if !has_text && !message.content.is_empty() {
        out.push(text_part(&message.content));
    }
    for part in parts {
        let file = match part {
            Part::Text { text } if text.is_empty() => continue,
            Part::Text { text } => {
                out.push(text_part(text));
                continue;
            }
            Part::Image(ImagePart {
                source, mime_type, ..
            }) => (source, mime_type.as_deref(), "image/*", None),
            Part::Audio(MediaPart {
                source, mime_type, ..
            }) => (source, mime_type.as_deref(), "audio/*", None),
            Part::Video(MediaPart {
                source, mime_type, ..
            }) => (source, mime_type.as_deref(), "video/*", None),
            Part::File(FilePart {
                source,
                mime_type,
                filename,
            }) => (
                source,
                mime_type.as_deref(),
                "application/octet-stream",
                filename.as_deref(),
            ),
        };
        let (source, mime_type, fallback, filename) = file;
        let pointer = format!("{at}/{}", out.len());
        out.push(file_part(
            source, mime_type, fallback, filename, version, &pointer, urls,
        ));
    }
    out
}

/// Where a file's bytes are.
enum Source {
    Base64(String),
    Url(String),
}

fn file_part(
    source: &str,
    mime_type: Option<&str>,
    fallback: &str,
    filename: Option<&str>,
    version: SpecVersion,
    pointer: &str,
    urls: &mut Vec<String>,
) -> Value {
    let (data, data_type) = read_source(source);
    let media_type = mime_type
        .filter(|m| !m.is_empty())
        .map(str::to_owned)
        .or(data_type)
        .unwrap_or_else(|| fallback.to_owned());
    let data = match (data, version) {
        (Source::Base64(b64), SpecVersion::V4) => {
            object([("type", text("data")), ("data", Value::String(b64))])
        }
        (Source::Url(url), SpecVersion::V4) => {
            urls.push(format!("{pointer}/data/url"));
            object([("type", text("url")), ("url", Value::String(url))])
        }
        (Source::Base64(b64), _) => Value::String(b64),
        (Source::Url(url), _) => {
            urls.push(format!("{pointer}/data"));
            Value::String(url)
        }
    };
    let mut part = object([
        ("type", text("file")),
        ("mediaType", Value::String(media_type)),
        ("data", data),
    ]);
    if let (Some(name), Value::Object(fields)) = (filename, &mut part) {
        fields.insert("filename".into(), text(name));
    }
    part
}

/// A source's data and, for a `data:` URL, its media type.
fn read_source(source: &str) -> (Source, Option<String>) {
    if let Some(rest) = source.strip_prefix("data:") {
        if let Some((head, payload)) = rest.split_once(',') {
            let (media, is_base64) = match head.strip_suffix(";base64") {
                Some(media) => (media, true),
                None => (head, false),
            };
            let media = media.split(';').next().unwrap_or_default();
            let media = (!media.is_empty()).then(|| media.to_owned());
            let b64 = if is_base64 {
                payload.to_owned()
            } else {
                base64(&percent_decode(payload))
            };
            return (Source::Base64(b64), media);
        }
    }
    if has_scheme(source) {
        (Source::Url(source.to_owned()), None)
    } else {
        (Source::Base64(source.to_owned()), None)
    }
}

/// `scheme:` as RFC 3986 spells it (a letter, then letters, digits, `+`, `-`, `.`).
fn has_scheme(text: &str) -> bool {
    let Some((scheme, _)) = text.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// `%XX` escapes decoded (a malformed one is kept as it is).
fn percent_decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}
