//! One run of a session log as AG-UI events, the answer of `POST {api}` with a `RunAgentInput`
//! for a client that reads the response (`@ag-ui/client`'s `HttpAgent`; CopilotKit and
//! assistant-ui through it). The log already holds AG-UI events, written for TanStack's lenient
//! client; AG-UI's own client validates each event against its schema (unknown keys stripped
//! with a warning, a missing required field fatal) and verifies the sequence (the run's
//! `RUN_STARTED` first; content only inside its `START`/`END`; nothing open at `RUN_FINISHED`;
//! nothing after it). So the mapping, per chunk of the followed run:
//!
//! - keeps each event's spec fields only (`toolName`, `finishReason`, `usage`, `status`,
//!   `createdAt` and turnkeep's extras dropped);
//! - drops the echo of the input (a `user` or `system` message: the client holds it, and its
//!   text would be appended to it again);
//! - opens an answer's message at its first content (a continuation's included: its
//!   `TEXT_MESSAGE_START` was an earlier run's) and drops an `END` of one that is not open, the
//!   second `TOOL_CALL_END` (TanStack 0.8's result form) included;
//! - passes reasoning on as AG-UI 1.0's spans (`REASONING_START`, `REASONING_MESSAGE_START` /
//!   `_CONTENT` / `_END`, `REASONING_END`), content only inside a message it opened;
//! - closes what is open before the run's end; drops `MESSAGES_SNAPSHOT` (the log's carries
//!   TanStack UI messages, which AG-UI would take as a replacement of its own) and turnkeep's
//!   own `CUSTOM` events.

use serde_json::{json, Map, Value};

use crate::projection::chunks::{
    CUSTOM, REASONING_END, REASONING_MESSAGE_CONTENT, REASONING_MESSAGE_END,
    REASONING_MESSAGE_START, REASONING_START, RUN_ERROR, RUN_FINISHED, RUN_STARTED,
    TEXT_MESSAGE_CONTENT, TEXT_MESSAGE_END, TEXT_MESSAGE_START, TOOL_CALL_ARGS, TOOL_CALL_END,
    TOOL_CALL_RESULT, TOOL_CALL_START,
};

/// The prefix of turnkeep's own `CUSTOM` event names (records, stop requests, call states).
const TURNKEEP_CUSTOM_PREFIX: &str = "turnkeep.";

/// One run followed as AG-UI events.
#[derive(Clone, Debug)]
pub struct AgUiStream {
    run_id: String,
    started: bool,
    ended: bool,
    open_texts: Vec<String>,
    echoes: Vec<String>,
    open_calls: Vec<String>,
    /// Reasoning spans (`REASONING_START`) and reasoning messages open, by id.
    open_spans: Vec<String>,
    open_reasonings: Vec<String>,
}

impl AgUiStream {
    /// A stream of run `run_id`: nothing is written before its `RUN_STARTED`.
    pub fn new(run_id: &str) -> Self {
        Self {
            run_id: run_id.to_owned(),
            started: false,
            ended: false,
            open_texts: Vec::new(),
            echoes: Vec::new(),
            open_calls: Vec::new(),
            open_spans: Vec::new(),
            open_reasonings: Vec::new(),
        }
    }

    /// True once the run ended (`RUN_FINISHED` or `RUN_ERROR` written).
    pub fn is_ended(&self) -> bool {
        self.ended
    }

    /// The events a log chunk maps to, appended to `out`.
    pub fn feed(&mut self, chunk: &Value, out: &mut Vec<Value>) {
        if self.ended {
            return;
        }
        let kind = chunk
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let ours = text(chunk, "runId") == Some(self.run_id.as_str());
        if !self.started {
            if kind == RUN_STARTED && ours {
                self.started = true;
                out.push(pick(
                    chunk,
                    &["type", "threadId", "runId", "parentRunId", "timestamp"],
                ));
            }
            return;
        }
        match kind {
            TEXT_MESSAGE_START => self.text_start(chunk),
            TEXT_MESSAGE_CONTENT => self.text_content(chunk, out),
            TEXT_MESSAGE_END => {
                if let Some(id) = text(chunk, "messageId") {
                    if take(&mut self.open_texts, id) {
                        out.push(pick(chunk, &["type", "messageId", "timestamp"]));
                    }
                }
            }
            TOOL_CALL_START => {
                let (Some(id), Some(_)) = (text(chunk, "toolCallId"), tool_name(chunk)) else {
                    return;
                };
                if self.open_calls.iter().any(|c| c == id) {
                    return;
                }
                self.open_calls.push(id.to_owned());
                let mut event = pick(
                    chunk,
                    &["type", "toolCallId", "parentMessageId", "timestamp"],
                );
                event["toolCallName"] = Value::from(tool_name(chunk).unwrap_or_default());
                out.push(event);
            }
            TOOL_CALL_ARGS if self.is_open_call(chunk) => {
                out.push(pick(chunk, &["type", "toolCallId", "delta", "timestamp"]));
            }
            TOOL_CALL_END => {
                if let Some(id) = text(chunk, "toolCallId") {
                    if take(&mut self.open_calls, id) {
                        out.push(pick(chunk, &["type", "toolCallId", "timestamp"]));
                    }
                }
            }
            TOOL_CALL_RESULT => {
                let mut event = pick(chunk, &["type", "messageId", "toolCallId", "timestamp"]);
                event["role"] = json!("tool");
                event["content"] = match chunk.get("content") {
                    Some(Value::String(s)) => Value::String(s.clone()),
                    Some(other) => Value::String(other.to_string()),
                    None => Value::String(String::new()),
                };
                if event.get("messageId").is_some() && event.get("toolCallId").is_some() {
                    out.push(event);
                }
            }
            REASONING_START
            | REASONING_MESSAGE_START
            | REASONING_MESSAGE_CONTENT
            | REASONING_MESSAGE_END
            | REASONING_END => self.reasoning(chunk, kind, out),
            CUSTOM => {
                let name = text(chunk, "name").unwrap_or_default();
                if !name.starts_with(TURNKEEP_CUSTOM_PREFIX) && chunk.get("value").is_some() {
                    out.push(pick(chunk, &["type", "name", "value", "timestamp"]));
                }
            }
            RUN_FINISHED | RUN_ERROR if ours => self.end(chunk, kind, out),
            _ => {} // snapshots, other runs' events, what AG-UI has no event for
        }
    }

    /// A message's start: an echo of the input is remembered (its content dropped); an
    /// answer's opens at its first content instead, so a message is where its first words are
    /// (a reasoning span the model writes first comes first, as it does in the log's answer)
    /// and a message with no text (a step of tool calls) is none.
    fn text_start(&mut self, chunk: &Value) {
        let Some(id) = text(chunk, "messageId") else {
            return;
        };
        if matches!(text(chunk, "role"), Some("user" | "system" | "developer")) {
            self.echoes.push(id.to_owned());
        }
    }

    fn text_content(&mut self, chunk: &Value, out: &mut Vec<Value>) {
        let (Some(id), Some(delta)) = (text(chunk, "messageId"), text(chunk, "delta")) else {
            return;
        };
        if self.echoes.iter().any(|e| e == id) || delta.is_empty() {
            return;
        }
        if !self.open_texts.iter().any(|m| m == id) {
            self.open_texts.push(id.to_owned());
            out.push(json!({ "type": TEXT_MESSAGE_START, "messageId": id, "role": "assistant" }));
        }
        out.push(pick(chunk, &["type", "messageId", "delta", "timestamp"]));
    }

    /// A reasoning event: a span or message opened once, content and ends only of what is
    /// open (a continuation's reasoning opens its own spans).
    fn reasoning(&mut self, chunk: &Value, kind: &str, out: &mut Vec<Value>) {
        let Some(id) = text(chunk, "messageId") else {
            return;
        };
        let keys: &[&str] = match kind {
            REASONING_MESSAGE_CONTENT => &["type", "messageId", "delta", "timestamp"],
            _ => &["type", "messageId", "timestamp"],
        };
        let open = match kind {
            REASONING_START => !has(&self.open_spans, id) && push(&mut self.open_spans, id),
            REASONING_END => take(&mut self.open_spans, id),
            REASONING_MESSAGE_START => {
                !has(&self.open_reasonings, id) && push(&mut self.open_reasonings, id)
            }
            REASONING_MESSAGE_END => take(&mut self.open_reasonings, id),
            _ => has(&self.open_reasonings, id) && text(chunk, "delta").is_some(),
        };
        if !open {
            return;
        }
        let mut event = pick(chunk, keys);
        if kind == REASONING_MESSAGE_START {
            event["role"] = json!("reasoning");
        }
        out.push(event);
    }

    fn is_open_call(&self, chunk: &Value) -> bool {
        text(chunk, "toolCallId").is_some_and(|id| self.open_calls.iter().any(|c| c == id))
    }

    /// Closes what is open, then the run's end.
    fn end(&mut self, chunk: &Value, kind: &str, out: &mut Vec<Value>) {
        for id in std::mem::take(&mut self.open_calls) {
            out.push(json!({ "type": TOOL_CALL_END, "toolCallId": id }));
        }
        for id in std::mem::take(&mut self.open_texts) {
            out.push(json!({ "type": TEXT_MESSAGE_END, "messageId": id }));
        }
        for id in std::mem::take(&mut self.open_reasonings) {
            out.push(json!({ "type": REASONING_MESSAGE_END, "messageId": id }));
        }
        for id in std::mem::take(&mut self.open_spans) {
            out.push(json!({ "type": REASONING_END, "messageId": id }));
        }
        self.ended = true;
        if kind == RUN_ERROR {
            let mut event = pick(chunk, &["type", "message", "code", "timestamp"]);
            if event.get("message").is_none() {
                event["message"] = json!("The turn failed.");
            }
            out.push(event);
            return;
        }
        let mut event = pick(chunk, &["type", "threadId", "runId", "timestamp"]);
        event["outcome"] = match chunk.get("outcome") {
            Some(outcome) if outcome.get("type").and_then(Value::as_str) == Some("interrupt") => {
                outcome.clone()
            }
            _ => json!({ "type": "success" }),
        };
        out.push(event);
    }
}

fn text<'a>(chunk: &'a Value, key: &str) -> Option<&'a str> {
    chunk.get(key).and_then(Value::as_str)
}

/// `toolCallName` (AG-UI), or `toolName` (TanStack 0.8's logs).
fn tool_name(chunk: &Value) -> Option<&str> {
    text(chunk, "toolCallName").or_else(|| text(chunk, "toolName"))
}

fn has(open: &[String], id: &str) -> bool {
    open.iter().any(|o| o == id)
}

/// Adds `id` to `open` (always true: the call reads as "and opened").
fn push(open: &mut Vec<String>, id: &str) -> bool {
    open.push(id.to_owned());
    true
}

/// Removes `id` from `open`; whether it was there.
fn take(open: &mut Vec<String>, id: &str) -> bool {
    let before = open.len();
    open.retain(|o| o != id);
    open.len() != before
}

/// The chunk with only `keys` (those it has; a `timestamp` only when an integer).
fn pick(chunk: &Value, keys: &[&str]) -> Value {
    let mut out = Map::new();
    for key in keys {
        if let Some(value) = chunk.get(*key) {
            if *key == "timestamp" && !value.is_u64() {
                continue;
            }
            out.insert((*key).to_owned(), value.clone());
        }
    }
    Value::Object(out)
}

/// Whether a request asks for the `202` answer rather than the run's events: its `Accept` names
/// JSON and not an event stream (`toTanStackConnection` asks so; `HttpAgent` sends
/// `text/event-stream`, TanStack's `fetchServerSentEvents` `*/*`).
pub fn prefers_json(accept: Option<&str>) -> bool {
    let accept = accept.unwrap_or_default().to_ascii_lowercase();
    accept.contains("application/json") && !accept.contains("text/event-stream")
}
