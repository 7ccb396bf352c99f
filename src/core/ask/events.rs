//! The Ask NDJSON events a successful response streams (AgentsKit's v1 Ask event schema):
//! `text` deltas, one `tool` event named `cite` carrying the sources, then `done`. Each is one
//! compact JSON line followed by `\n`. Errors are [`super::AskFailure::error_event_line`].

use serde::Serialize;
use serde_json::{json, Value};

use super::sources::Source;

/// `value` as one NDJSON line.
pub fn line<T: Serialize>(value: &T) -> String {
    let mut text = crate::protocol::encode::to_json(value);
    text.push('\n');
    text
}

/// `{"type":"text","delta":...}`
pub fn text_line(delta: &str) -> String {
    line(&json!({ "type": "text", "delta": delta }))
}

/// `{"type":"tool","id":"sources-<requestId>","name":"cite","args":{"sources":[{id,title,path}]}}`
pub fn cite_line(request_id: &str, sources: &[Source]) -> String {
    let sources: Vec<Value> = sources
        .iter()
        .map(|s| json!({ "id": s.id, "title": s.title, "path": s.href }))
        .collect();
    line(&json!({
        "type": "tool",
        "id": format!("sources-{request_id}"),
        "name": "cite",
        "args": { "sources": sources },
    }))
}

/// `{"type":"done"}`, with the generator's `model` when it reported one.
pub fn done_line(model: Option<&str>) -> String {
    match model {
        Some(model) => line(&json!({ "type": "done", "model": model })),
        None => line(&json!({ "type": "done" })),
    }
}
