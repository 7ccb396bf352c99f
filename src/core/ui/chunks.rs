//! The one mapping from a session log's chunks (TanStack AI / AG-UI events, as
//! [`crate::projection::chunks`] names them) to AI SDK UI message chunks, for one turn.
//!
//! | log chunk | UI chunks |
//! |---|---|
//! | `RUN_STARTED` | `start {messageId}` when the turn continues a known message (a continuation) |
//! | `TEXT_MESSAGE_START` (assistant) | `start {messageId}` (the turn's first), `finish-step` (the step before), `start-step` |
//! | `TEXT_MESSAGE_CONTENT` (assistant) | `text-start` (once per message), `text-delta` |
//! | `TEXT_MESSAGE_END` | `text-end` |
//! | `REASONING_MESSAGE_START/CONTENT/END` | `reasoning-start/-delta/-end` |
//! | `TOOL_CALL_START` / `_ARGS` / `_END` (the call) | `tool-input-start` / `-delta` / `-available` (and `tool-output-error` for a call that failed at once) |
//! | `CUSTOM approval-requested` | `tool-approval-request {approvalId: token, toolCallId}` |
//! | `CUSTOM turnkeep.confirmation` (rejecting, expiring …) | (the call's result is then `tool-output-denied`) |
//! | `CUSTOM turnkeep.tool-call` (an error, e.g. stopped) | `tool-output-error` |
//! | `TOOL_CALL_RESULT` | `tool-output-available {output}` / `tool-output-error` / `tool-output-denied` |
//! | `RUN_FINISHED` | `finish-step`, `finish {finishReason}` |
//! | `RUN_ERROR` (stopped) | `abort` |
//! | `RUN_ERROR` (failed) | `error {errorText}` (the diagnostic's safe message) |
//!
//! User and system messages, stop requests and the other `CUSTOM` events map to nothing (a UI
//! stream writes only the assistant message). A stream that starts mid-turn first rebuilds what
//! the message holds ([`UiStream::rebuild`]), so the client's checks hold on what follows.

use serde_json::{json, Value};

use super::messages::{tool_state, ToolConfirmations, ToolState};
use crate::projection::chunks::{
    chunk_type, reasoning_id, APPROVAL_REQUESTED, CONFIRMATION, CUSTOM, REASONING_MESSAGE_CONTENT,
    REASONING_MESSAGE_END, REASONING_MESSAGE_START, RUN_ERROR, RUN_FINISHED, RUN_STARTED,
    TEXT_MESSAGE_CONTENT, TEXT_MESSAGE_END, TEXT_MESSAGE_START, TOOL_CALL_ARGS, TOOL_CALL_END,
    TOOL_CALL_RESULT, TOOL_CALL_START, TOOL_CALL_STATUS,
};
use crate::protocol::{Message, MessageStatus, Role, ToolCall};

/// The diagnostic code of a turn a client stopped (`RUN_ERROR {code}`).
const STOPPED_CODE: &str = "STOPPED";

/// A tool call the stream has shown.
#[derive(Clone, Debug, PartialEq)]
struct Call {
    id: String,
    name: String,
    /// `tool-input-available` (or the rebuilt part) was sent.
    input_sent: bool,
    /// Its output (available, error or denied) was sent.
    output_sent: bool,
    /// A person rejected it (or its approval expired): its result is a denial.
    denied: bool,
}

/// One turn's UI message stream, fed the log's chunks in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UiStream {
    /// The UI message this stream writes, once known.
    message_id: Option<String>,
    /// `start` was sent.
    started: bool,
    step_open: bool,
    /// The canonical assistant messages of this turn (their text parts' ids).
    assistants: Vec<String>,
    /// The text part open now (its id is its message's id).
    text_open: Option<String>,
    reasoning_open: Option<String>,
    calls: Vec<Call>,
    /// The run this stream follows, once it started.
    run_id: Option<String>,
    ended: bool,
}

impl UiStream {
    /// A stream of a new turn: its message is the first assistant message the turn writes.
    pub fn new() -> Self {
        Self::default()
    }

    /// A stream of a turn that continues the answer `turn` (the assistant and tool messages
    /// after the last user message: a continuation after an approval), which the client holds
    /// already: nothing of it is sent again, and what follows is written into the same UI
    /// message (its id is the first of them).
    ///
    /// `resolving`: the call whose decision this continuation carries out. The client holds it
    /// as answered, not done (`approval-responded`), whatever the conversation says of it now
    /// (a rejection's result is recorded before the continuation runs): its output is still to
    /// be sent.
    pub fn continuing(
        turn: &[Message],
        confirmations: &ToolConfirmations,
        resolving: Option<&str>,
    ) -> Self {
        let mut stream = Self::new();
        stream.rebuild_into(turn, confirmations, &mut Vec::new());
        if let Some(call) = resolving.and_then(|id| stream.call_mut(id)) {
            call.output_sent = false;
            call.denied = false;
        }
        // The client has all of it: the continuation names the message again (`start`), and new
        // text opens a part of its own.
        stream.started = false;
        stream.step_open = false;
        stream.text_open = None;
        stream
    }

    /// A stream that starts mid-turn (a resumed stream): the chunks that rebuild the answer
    /// `turn` as it is now, and the stream that goes on from there. A text still streaming stays
    /// open for the text that follows.
    pub fn rebuild(turn: &[Message], confirmations: &ToolConfirmations) -> (Self, Vec<Value>) {
        let mut stream = Self::new();
        let mut out = Vec::new();
        stream.rebuild_into(turn, confirmations, &mut out);
        (stream, out)
    }

    /// Follows run `run_id` from here on: its end is the stream's (a stream rebuilt from a
    /// projection has not seen the run start).
    pub fn follow_run(&mut self, run_id: &str) {
        self.run_id = Some(run_id.to_owned());
    }

    /// Ends a stream whose run ended before it joined (a rebuilt answer): `finish`.
    pub fn finish(&mut self, finish_reason: &'static str, out: &mut Vec<Value>) {
        if self.ended {
            return;
        }
        self.close_parts(out);
        if self.step_open {
            out.push(json!({ "type": "finish-step" }));
            self.step_open = false;
        }
        out.push(json!({ "type": "finish", "finishReason": finish_reason }));
        self.ended = true;
    }

    /// Whether the stream ended (its run finished or failed).
    pub fn is_ended(&self) -> bool {
        self.ended
    }

    /// The run this stream follows, once its `RUN_STARTED` was fed.
    pub fn run_id(&self) -> Option<&str> {
        self.run_id.as_deref()
    }

    /// The UI chunks `chunk` maps to, appended to `out`.
    pub fn feed(&mut self, chunk: &Value, out: &mut Vec<Value>) {
        if self.ended {
            return;
        }
        match chunk_type(chunk) {
            Some(RUN_STARTED) => self.run_started(chunk, out),
            Some(TEXT_MESSAGE_START) => self.message_started(chunk, out),
            Some(TEXT_MESSAGE_CONTENT) => self.text(chunk, out),
            Some(TEXT_MESSAGE_END) => {
                if self.text_open.as_deref() == str_field(chunk, "messageId") {
                    self.close_text(out);
                }
            }
            Some(REASONING_MESSAGE_START) => self.reasoning_started(chunk, out),
            Some(REASONING_MESSAGE_CONTENT) => self.reasoning(chunk, out),
            Some(REASONING_MESSAGE_END) => self.close_reasoning(out),
            Some(TOOL_CALL_START) => self.call_started(chunk, out),
            Some(TOOL_CALL_ARGS) => self.call_args(chunk, out),
            Some(TOOL_CALL_END) => self.call_ended(chunk, out),
            Some(TOOL_CALL_RESULT) => self.call_result(chunk, out),
            Some(CUSTOM) => self.custom(chunk, out),
            Some(RUN_FINISHED) => self.run_finished(chunk, out),
            Some(RUN_ERROR) => self.run_failed(chunk, out),
            _ => {}
        }
    }

    /// Ends a stream whose run did not end in the log (the sender's answer closed after a
    /// failure before or outside the run): `error` with the diagnostic's safe message.
    pub fn fail(&mut self, error_text: &str, out: &mut Vec<Value>) {
        if self.ended {
            return;
        }
        self.close_parts(out);
        out.push(json!({ "type": "error", "errorText": error_text }));
        self.ended = true;
    }

    fn run_started(&mut self, chunk: &Value, out: &mut Vec<Value>) {
        self.run_id = str_field(chunk, "runId").map(str::to_owned);
        if let Some(id) = self.message_id.clone().filter(|_| !self.started) {
            out.push(json!({ "type": "start", "messageId": id }));
            self.started = true;
        }
    }

    fn message_started(&mut self, chunk: &Value, out: &mut Vec<Value>) {
        if str_field(chunk, "role") != Some("assistant") {
            return;
        }
        let Some(id) = str_field(chunk, "messageId") else {
            return;
        };
        if self.assistants.iter().any(|known| known == id) {
            return;
        }
        self.assistants.push(id.to_owned());
        self.start(id, out);
        self.close_parts(out);
        if self.step_open {
            out.push(json!({ "type": "finish-step" }));
        }
        out.push(json!({ "type": "start-step" }));
        self.step_open = true;
    }

    /// `start` once, naming the turn's message (the first assistant message unless known).
    fn start(&mut self, first_assistant: &str, out: &mut Vec<Value>) {
        if self.started {
            return;
        }
        let id = self
            .message_id
            .get_or_insert_with(|| first_assistant.to_owned())
            .clone();
        out.push(json!({ "type": "start", "messageId": id }));
        self.started = true;
    }

    fn text(&mut self, chunk: &Value, out: &mut Vec<Value>) {
        let (Some(id), Some(delta)) = (str_field(chunk, "messageId"), str_field(chunk, "delta"))
        else {
            return;
        };
        if !self.assistants.iter().any(|known| known == id) || delta.is_empty() {
            return; // a user message's text, or nothing
        }
        if self.text_open.as_deref() != Some(id) {
            self.close_parts(out);
            out.push(json!({ "type": "text-start", "id": id }));
            self.text_open = Some(id.to_owned());
        }
        out.push(json!({ "type": "text-delta", "id": id, "delta": delta }));
    }

    fn reasoning_started(&mut self, chunk: &Value, out: &mut Vec<Value>) {
        let Some(id) = str_field(chunk, "messageId") else {
            return;
        };
        self.close_parts(out);
        out.push(json!({ "type": "reasoning-start", "id": id }));
        self.reasoning_open = Some(id.to_owned());
    }

    fn reasoning(&mut self, chunk: &Value, out: &mut Vec<Value>) {
        let (Some(id), Some(delta)) = (str_field(chunk, "messageId"), str_field(chunk, "delta"))
        else {
            return;
        };
        if self.reasoning_open.as_deref() != Some(id) {
            self.close_parts(out);
            out.push(json!({ "type": "reasoning-start", "id": id }));
            self.reasoning_open = Some(id.to_owned());
        }
        out.push(json!({ "type": "reasoning-delta", "id": id, "delta": delta }));
    }

    fn call_started(&mut self, chunk: &Value, out: &mut Vec<Value>) {
        let Some(id) = str_field(chunk, "toolCallId") else {
            return;
        };
        if self.call(id).is_some() {
            return;
        }
        let name = tool_name(chunk).unwrap_or_default().to_owned();
        if let Some(parent) = str_field(chunk, "parentMessageId") {
            self.start(parent, out);
        }
        self.close_parts(out);
        out.push(json!({ "type": "tool-input-start", "toolCallId": id, "toolName": name }));
        self.calls.push(Call {
            id: id.to_owned(),
            name,
            input_sent: false,
            output_sent: false,
            denied: false,
        });
    }

    fn call_args(&mut self, chunk: &Value, out: &mut Vec<Value>) {
        let (Some(id), Some(delta)) = (str_field(chunk, "toolCallId"), str_field(chunk, "delta"))
        else {
            return;
        };
        if self.call(id).is_some_and(|c| !c.input_sent) && !delta.is_empty() {
            out.push(
                json!({ "type": "tool-input-delta", "toolCallId": id, "inputTextDelta": delta }),
            );
        }
    }

    /// The call as the model asked for it (a `TOOL_CALL_END` that carries a `result` is
    /// TanStack 0.8's form of the result, which `TOOL_CALL_RESULT` follows).
    fn call_ended(&mut self, chunk: &Value, out: &mut Vec<Value>) {
        if chunk.get("result").is_some() {
            return;
        }
        let Some(id) = str_field(chunk, "toolCallId") else {
            return;
        };
        let Some(call) = self.call_mut(id).filter(|c| !c.input_sent) else {
            return;
        };
        call.input_sent = true;
        let name = call.name.clone();
        let input = chunk.get("input").cloned().unwrap_or_else(|| json!({}));
        out.push(json!({ "type": "tool-input-available", "toolCallId": id, "toolName": name, "input": input }));
        if str_field(chunk, "status") == Some("error") {
            let text = str_field(chunk, "error").unwrap_or("the tool call failed");
            self.output(id, OutputKind::Error(text), out);
        }
    }

    fn call_result(&mut self, chunk: &Value, out: &mut Vec<Value>) {
        let Some(id) = str_field(chunk, "toolCallId") else {
            return;
        };
        let content = str_field(chunk, "content").unwrap_or_default();
        if str_field(chunk, "state") == Some("output-error") {
            let text = error_text(content);
            self.output(id, OutputKind::Error(&text), out);
        } else {
            self.output(id, OutputKind::Available(content), out);
        }
    }

    fn custom(&mut self, chunk: &Value, out: &mut Vec<Value>) {
        let value = chunk.get("value").unwrap_or(&Value::Null);
        match str_field(chunk, "name") {
            Some(APPROVAL_REQUESTED) => {
                let (Some(call), Some(token)) = (
                    str_field(value, "toolCallId"),
                    value.pointer("/approval/id").and_then(Value::as_str),
                ) else {
                    return;
                };
                if self.call(call).is_some() {
                    out.push(json!({ "type": "tool-approval-request", "approvalId": token, "toolCallId": call }));
                }
            }
            Some(CONFIRMATION) => {
                let denied = matches!(
                    str_field(value, "status"),
                    Some("rejecting" | "rejected" | "expiring" | "expired")
                );
                if let (true, Some(call)) = (denied, str_field(value, "toolCallId")) {
                    if let Some(call) = self.call_mut(call) {
                        call.denied = true;
                    }
                }
            }
            Some(TOOL_CALL_STATUS) => {
                if let (Some("error"), Some(id)) =
                    (str_field(value, "status"), str_field(value, "toolCallId"))
                {
                    let text = str_field(value, "error").unwrap_or("the tool call failed");
                    self.output(id, OutputKind::Error(text), out);
                }
            }
            _ => {}
        }
    }

    /// The call's output, once (a denied call's is a denial, whatever its result says).
    fn output(&mut self, id: &str, kind: OutputKind<'_>, out: &mut Vec<Value>) {
        let Some(call) = self.call_mut(id).filter(|c| !c.output_sent) else {
            return;
        };
        call.output_sent = true;
        let chunk = match kind {
            _ if call.denied => json!({ "type": "tool-output-denied", "toolCallId": id }),
            OutputKind::Available(output) => {
                json!({ "type": "tool-output-available", "toolCallId": id, "output": output })
            }
            OutputKind::Error(text) => {
                json!({ "type": "tool-output-error", "toolCallId": id, "errorText": text })
            }
        };
        out.push(chunk);
    }

    fn run_finished(&mut self, chunk: &Value, out: &mut Vec<Value>) {
        if !self.runs(chunk) {
            return;
        }
        self.close_parts(out);
        if self.step_open {
            out.push(json!({ "type": "finish-step" }));
            self.step_open = false;
        }
        let reason = finish_reason(str_field(chunk, "finishReason"));
        out.push(json!({ "type": "finish", "finishReason": reason }));
        self.ended = true;
    }

    fn run_failed(&mut self, chunk: &Value, out: &mut Vec<Value>) {
        if !self.runs(chunk) {
            return;
        }
        self.close_parts(out);
        if str_field(chunk, "code") == Some(STOPPED_CODE) {
            // A stop is not an error for the client: the partial answer stays, the chat is ready.
            out.push(json!({ "type": "abort", "reason": "stopped" }));
        } else {
            let text = str_field(chunk, "message").unwrap_or("The turn failed.");
            out.push(json!({ "type": "error", "errorText": text }));
        }
        self.ended = true;
    }

    /// Whether a run's end is this stream's (a stream that has not seen its run start takes
    /// the first end).
    fn runs(&self, chunk: &Value) -> bool {
        match (&self.run_id, str_field(chunk, "runId")) {
            (Some(mine), Some(theirs)) => mine == theirs,
            _ => true,
        }
    }

    fn close_parts(&mut self, out: &mut Vec<Value>) {
        self.close_text(out);
        self.close_reasoning(out);
    }

    fn close_text(&mut self, out: &mut Vec<Value>) {
        if let Some(id) = self.text_open.take() {
            out.push(json!({ "type": "text-end", "id": id }));
        }
    }

    fn close_reasoning(&mut self, out: &mut Vec<Value>) {
        if let Some(id) = self.reasoning_open.take() {
            out.push(json!({ "type": "reasoning-end", "id": id }));
        }
    }

    fn call(&self, id: &str) -> Option<&Call> {
        self.calls.iter().find(|c| c.id == id)
    }

    fn call_mut(&mut self, id: &str) -> Option<&mut Call> {
        self.calls.iter_mut().find(|c| c.id == id)
    }

    /// The chunks that draw `turn` as it is, with the stream's state left as they leave it.
    fn rebuild_into(
        &mut self,
        turn: &[Message],
        confirmations: &ToolConfirmations,
        out: &mut Vec<Value>,
    ) {
        for message in turn.iter().filter(|m| m.role == Role::Assistant) {
            self.message_started(
                &json!({ "type": TEXT_MESSAGE_START, "messageId": message.id, "role": "assistant" }),
                out,
            );
            self.rebuild_reasoning(message, out);
            if !message.content.is_empty() {
                let id = message.id.as_str();
                out.push(json!({ "type": "text-start", "id": id }));
                out.push(json!({ "type": "text-delta", "id": id, "delta": message.content }));
                if message.status == MessageStatus::Streaming {
                    self.text_open = Some(id.to_owned());
                } else {
                    out.push(json!({ "type": "text-end", "id": id }));
                }
            }
            for call in message.tool_calls.iter().flatten() {
                self.rebuild_call(call, confirmations, out);
            }
        }
    }

    /// A message's reasoning so far as one part, named as the log names its first span, so a
    /// span still open at the cut goes on in the same part (a later span opens its own).
    fn rebuild_reasoning(&mut self, message: &Message, out: &mut Vec<Value>) {
        let reasoning = message.reasoning();
        if reasoning.is_empty() {
            return;
        }
        let id = reasoning_id(&message.id, 0);
        out.push(json!({ "type": "reasoning-start", "id": id }));
        out.push(json!({ "type": "reasoning-delta", "id": id, "delta": reasoning }));
        let answering = !message.content.is_empty() || message.tool_calls.is_some();
        if message.status == MessageStatus::Streaming && !answering {
            self.reasoning_open = Some(id);
        } else {
            out.push(json!({ "type": "reasoning-end", "id": id }));
        }
    }

    fn rebuild_call(
        &mut self,
        call: &ToolCall,
        confirmations: &ToolConfirmations,
        out: &mut Vec<Value>,
    ) {
        self.close_parts(out);
        let record = confirmations.of(&call.id);
        out.push(json!({ "type": "tool-input-available", "toolCallId": call.id, "toolName": call.name, "input": Value::Object(call.args.clone()) }));
        let state = tool_state(call, record.map(|(_, status)| status));
        let chunk = match state {
            ToolState::ApprovalRequested => record.map(|(token, _)| {
                json!({ "type": "tool-approval-request", "approvalId": token, "toolCallId": call.id })
            }),
            ToolState::OutputAvailable => Some(json!({ "type": "tool-output-available", "toolCallId": call.id, "output": call.result.clone().unwrap_or_default() })),
            ToolState::OutputError => Some(json!({ "type": "tool-output-error", "toolCallId": call.id, "errorText": call.error.clone().unwrap_or_else(|| "the tool call failed".into()) })),
            ToolState::OutputDenied => Some(json!({ "type": "tool-output-denied", "toolCallId": call.id })),
            ToolState::InputAvailable => None,
        };
        out.extend(chunk);
        self.calls.push(Call {
            id: call.id.clone(),
            name: call.name.clone(),
            input_sent: true,
            output_sent: !matches!(
                state,
                ToolState::InputAvailable | ToolState::ApprovalRequested
            ),
            denied: state == ToolState::OutputDenied,
        });
    }
}

enum OutputKind<'a> {
    Available(&'a str),
    Error(&'a str),
}

/// A log's `finishReason` (TanStack's words) as the AI SDK's.
fn finish_reason(reason: Option<&str>) -> &'static str {
    match reason {
        Some("stop") | None => "stop",
        Some("tool_calls") => "tool-calls",
        Some("length") => "length",
        Some("content_filter") => "content-filter",
        Some(_) => "other",
    }
}

/// A failed result's text: TanStack writes `{"error": …}` as the content.
fn error_text(content: &str) -> String {
    serde_json::from_str::<Value>(content)
        .ok()
        .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| content.to_owned())
}

fn tool_name(chunk: &Value) -> Option<&str> {
    str_field(chunk, "toolCallName").or_else(|| str_field(chunk, "toolName"))
}

fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}
