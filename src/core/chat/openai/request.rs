//! Builds the JSON body of an OpenAI-compatible `chat/completions` streaming request.
//!
//! Canonical messages map to OpenAI roles one to one, with two adjustments the endpoint
//! requires: an assistant tool call is only sent when a `tool` message answers it (a call still
//! waiting for confirmation has no answer yet, and an unanswered call is rejected), and a
//! message with nothing to say (empty assistant text, no answered calls; a tool message without
//! `toolCallId`) is left out.

use crate::hash::FixedHashSet;

use serde_json::{json, Map, Value};

use crate::chat::model::{ModelRequest, ToolSpec};
use crate::chat::settings::{number, ToolChoice};
use crate::protocol::{Message, Role, ToolCall};

/// Per-endpoint settings of the request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenAiRequestOptions {
    /// The `model` field.
    pub model: String,
    /// Ask for a final usage chunk (`stream_options.include_usage`). Some compatible servers
    /// reject unknown fields, so this is opt-in.
    pub include_usage: bool,
}

/// The request body: `{model, messages, stream: true, tools?, tool_choice?, temperature?,
/// max_tokens?, top_p?, stop?, stream_options?}`; the definition's instructions are a first
/// `system` message (`providerOptions` have no place on this wire).
pub fn request_body(request: &ModelRequest, options: &OpenAiRequestOptions) -> Value {
    let answered = request.answered_calls();
    let settings = &request.settings;
    let instructions = settings
        .instructions
        .iter()
        .map(|text| json!({ "role": "system", "content": text }));
    let messages: Vec<Value> = instructions
        .chain(
            request
                .messages
                .iter()
                .filter_map(|m| message_value(m, &answered)),
        )
        .collect();
    let mut body = Map::new();
    body.insert("model".into(), Value::String(options.model.clone()));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), Value::Bool(true));
    if !request.tools.is_empty() {
        let tools = request.tools.iter().map(tool_value).collect();
        body.insert("tools".into(), Value::Array(tools));
        if let Some(choice) = &settings.tool_choice {
            body.insert("tool_choice".into(), tool_choice_value(choice));
        }
    }
    if let Some(t) = settings.temperature {
        body.insert("temperature".into(), number(t));
    }
    if let Some(n) = settings.max_output_tokens {
        body.insert("max_tokens".into(), Value::from(n));
    }
    if let Some(p) = settings.top_p {
        body.insert("top_p".into(), number(p));
    }
    if !settings.stop_sequences.is_empty() {
        let list = settings.stop_sequences.iter().cloned().map(Value::String);
        body.insert("stop".into(), Value::Array(list.collect()));
    }
    if options.include_usage {
        body.insert("stream_options".into(), json!({ "include_usage": true }));
    }
    Value::Object(body)
}

fn message_value(m: &Message, answered: &FixedHashSet<&str>) -> Option<Value> {
    match m.role {
        Role::User => Some(json!({ "role": "user", "content": m.content })),
        Role::System => Some(json!({ "role": "system", "content": m.content })),
        Role::Tool => {
            let id = m.tool_call_id.as_deref()?;
            Some(json!({ "role": "tool", "tool_call_id": id, "content": m.content }))
        }
        Role::Assistant => assistant_value(m, answered),
    }
}

fn assistant_value(m: &Message, answered: &FixedHashSet<&str>) -> Option<Value> {
    let calls: Vec<Value> = m
        .tool_calls
        .iter()
        .flatten()
        .filter(|c| answered.contains(c.id.as_str()))
        .map(tool_call_value)
        .collect();
    if calls.is_empty() && m.content.is_empty() {
        return None;
    }
    let mut out = Map::new();
    out.insert("role".into(), Value::String("assistant".into()));
    let content = if m.content.is_empty() {
        Value::Null
    } else {
        Value::String(m.content.clone())
    };
    out.insert("content".into(), content);
    if !calls.is_empty() {
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    Some(Value::Object(out))
}

fn tool_call_value(c: &ToolCall) -> Value {
    json!({
        "id": c.id,
        "type": "function",
        "function": { "name": c.name, "arguments": Value::Object(c.args.clone()).to_string() },
    })
}

/// `tool_choice`: `"auto"`, `"none"`, `"required"` or `{type: "function", function: {name}}`.
fn tool_choice_value(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => Value::String("auto".into()),
        ToolChoice::None => Value::String("none".into()),
        ToolChoice::Required => Value::String("required".into()),
        ToolChoice::Tool(name) => json!({ "type": "function", "function": { "name": name } }),
    }
}

fn tool_value(t: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": { "name": t.name, "description": t.description, "parameters": t.parameters },
    })
}
