//! The chunk vocabulary of a session log: TanStack AI / AG-UI events as
//! `@durable-streams/tanstack-ai-transport` writes and reads them, plus turnkeep's additive
//! fields and `CUSTOM` events (ignored by TanStack readers). ARCHITECTURE.md has the mapping
//! table. This module names the fields and builds the chunks; [`super::reduce`] reads them.

use serde_json::{json, Map, Value};

use crate::chat::model::Usage;
use crate::checks::{format_iso_millis_at, parse_iso_millis_utc};
use crate::protocol::{Message, MessageStatus, Role, ToolCall, ToolCallStatus};
use crate::session::{confirmation_token, Confirmation};

pub const RUN_STARTED: &str = "RUN_STARTED";
pub const RUN_FINISHED: &str = "RUN_FINISHED";
pub const RUN_ERROR: &str = "RUN_ERROR";
pub const TEXT_MESSAGE_START: &str = "TEXT_MESSAGE_START";
pub const TEXT_MESSAGE_CONTENT: &str = "TEXT_MESSAGE_CONTENT";
pub const TEXT_MESSAGE_END: &str = "TEXT_MESSAGE_END";
pub const TOOL_CALL_START: &str = "TOOL_CALL_START";
pub const TOOL_CALL_ARGS: &str = "TOOL_CALL_ARGS";
pub const TOOL_CALL_END: &str = "TOOL_CALL_END";
pub const TOOL_CALL_RESULT: &str = "TOOL_CALL_RESULT";
pub const MESSAGES_SNAPSHOT: &str = "MESSAGES_SNAPSHOT";
pub const REASONING_START: &str = "REASONING_START";
pub const REASONING_MESSAGE_START: &str = "REASONING_MESSAGE_START";
pub const REASONING_MESSAGE_CONTENT: &str = "REASONING_MESSAGE_CONTENT";
pub const REASONING_MESSAGE_END: &str = "REASONING_MESSAGE_END";
pub const REASONING_END: &str = "REASONING_END";
pub const CUSTOM: &str = "CUSTOM";

/// `CUSTOM` names. `approval-requested` is TanStack's; the `turnkeep.` ones are additive.
pub(crate) const APPROVAL_REQUESTED: &str = "approval-requested";
/// A tool call's status where TanStack has no event for it (`running`, an error with no result
/// message, e.g. a call stopped before it finished).
pub(crate) const TOOL_CALL_STATUS: &str = "turnkeep.tool-call";
/// A client asked to stop a turn (`client.turn.stop`); `value: { turnId }`.
pub(crate) const STOP_REQUESTED: &str = "turnkeep.stop-requested";
/// A confirmation record's state as a turn knows it: `value` is the record (`token`,
/// `toolCallId`, `action`, `input`, `expiresAt` in epoch ms, `status`).
pub(crate) const CONFIRMATION: &str = "turnkeep.confirmation";
/// The `reason` and `metadata.kind` of an approval interrupt. `approval_required` with the
/// `kind: "approval"` marker is what TanStack AI's client (0.33) resolves through
/// `addToolApprovalResponse` without a tool binding of its own (its `chat()` writes
/// `tool_call`, which only a client holding the same tool definitions can answer), and what
/// AG-UI's `HttpAgent` keeps as a pending interrupt.
pub(crate) const INTERRUPT_REASON_APPROVAL: &str = "approval_required";
pub(crate) const INTERRUPT_KIND_APPROVAL: &str = "approval";

/// The `type` of a chunk, if it has one.
pub(crate) fn chunk_type(chunk: &Value) -> Option<&str> {
    chunk.get("type").and_then(Value::as_str)
}

/// True for the stop request of `turn_id`.
pub fn is_stop_request(chunk: &Value, turn_id: &str) -> bool {
    chunk_type(chunk) == Some(CUSTOM)
        && chunk.get("name").and_then(Value::as_str) == Some(STOP_REQUESTED)
        && chunk.pointer("/value/turnId").and_then(Value::as_str) == Some(turn_id)
}

/// The stop request of `turn_id`, appended by `client.turn.stop`.
pub fn stop_request(turn_id: &str, now_ms: u64) -> Value {
    json!({ "type": CUSTOM, "name": STOP_REQUESTED, "value": { "turnId": turn_id }, "timestamp": now_ms })
}

pub fn run_started(run_id: &str, thread_id: &str, now_ms: u64) -> Value {
    json!({ "type": RUN_STARTED, "runId": run_id, "threadId": thread_id, "timestamp": now_ms })
}

/// The run ended normally. `finishReason` at the top (TanStack 0.8) and in `metadata.tanstack`
/// (0.58); usage as TanStack's object form. A run that leaves calls waiting for a person ends
/// with AG-UI's interrupt outcome (one approval interrupt per record, `id` = its token) and
/// `finishReason: "tool_calls"`, as TanStack AI 0.58 ends an approval-paused run.
pub(crate) fn run_finished(
    run_id: &str,
    thread_id: &str,
    usage: &Usage,
    interrupts: &[(Confirmation, String)],
    now_ms: u64,
) -> Value {
    let reason = if interrupts.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let mut chunk = json!({
        "type": RUN_FINISHED,
        "runId": run_id,
        "threadId": thread_id,
        "finishReason": reason,
        "usage": {
            "promptTokens": usage.prompt_tokens,
            "completionTokens": usage.completion_tokens,
            "totalTokens": usage.total_tokens,
        },
        "metadata": { "tanstack": { "finishReason": reason } },
        "timestamp": now_ms,
    });
    if !interrupts.is_empty() {
        let list: Vec<Value> = interrupts
            .iter()
            .map(|(record, tool_name)| approval_interrupt(record, tool_name))
            .collect();
        chunk["outcome"] = json!({ "type": "interrupt", "interrupts": list });
    }
    chunk
}

/// One AG-UI `Interrupt` asking a person to approve `record`'s call (`expiresAt` as ISO-8601).
fn approval_interrupt(record: &Confirmation, tool_name: &str) -> Value {
    approval_interrupt_of(
        &record.token,
        &record.tool_call_id,
        Some(record.expires_at),
        tool_name,
        &record.input,
    )
}

/// The interrupt of one waiting call, from its parts (a live run's end and a hydration build
/// the same object).
pub(crate) fn approval_interrupt_of(
    token: &str,
    tool_call_id: &str,
    expires_at_ms: Option<u64>,
    tool_name: &str,
    input: &serde_json::Map<String, Value>,
) -> Value {
    let mut interrupt = json!({
        "id": token,
        "reason": INTERRUPT_REASON_APPROVAL,
        "toolCallId": tool_call_id,
        "metadata": {
            "kind": INTERRUPT_KIND_APPROVAL,
            "toolName": tool_name,
            "input": Value::Object(input.clone()),
        },
    });
    if let Some(at) = expires_at_ms {
        interrupt["expiresAt"] = Value::String(format_iso_millis_at(at));
    }
    interrupt
}

/// A confirmation record's state (see [`CONFIRMATION`]).
pub(crate) fn confirmation_state(record: &Confirmation, now_ms: u64) -> Value {
    json!({
        "type": CUSTOM,
        "name": CONFIRMATION,
        "value": serde_json::to_value(record).unwrap_or(Value::Null),
        "timestamp": now_ms,
    })
}

/// The run failed: `message`/`code` at the top (AG-UI, TanStack 0.58) and nested (0.8).
pub(crate) fn run_error(run_id: &str, code: &str, message: &str, now_ms: u64) -> Value {
    json!({
        "type": RUN_ERROR,
        "runId": run_id,
        "message": message,
        "code": code,
        "error": { "message": message, "code": code },
        "timestamp": now_ms,
    })
}

/// A message begins: TanStack reads `messageId`, `role`, `timestamp`; turnkeep adds the exact
/// `createdAt`.
pub(crate) fn message_start(message: &Message) -> Value {
    json!({
        "type": TEXT_MESSAGE_START,
        "messageId": message.id,
        "role": role_str(message.role),
        "timestamp": created_ms(message),
        "createdAt": message.created_at,
    })
}

pub(crate) fn message_content(message_id: &str, delta: &str, now_ms: u64) -> Value {
    json!({ "type": TEXT_MESSAGE_CONTENT, "messageId": message_id, "delta": delta, "timestamp": now_ms })
}

/// The id of the `n`th reasoning span of message `message_id` (AG-UI's reasoning message).
pub(crate) fn reasoning_id(message_id: &str, n: usize) -> String {
    format!("{message_id}-reasoning-{n}")
}

/// A reasoning span opens (AG-UI 1.0): `REASONING_START` with turnkeep's `parentMessageId`
/// (the assistant message it belongs to), then `REASONING_MESSAGE_START` (`role: "reasoning"`).
pub(crate) fn reasoning_open(parent_id: &str, reasoning_id: &str, now_ms: u64) -> [Value; 2] {
    [
        json!({ "type": REASONING_START, "messageId": reasoning_id, "parentMessageId": parent_id, "timestamp": now_ms }),
        json!({ "type": REASONING_MESSAGE_START, "messageId": reasoning_id, "role": "reasoning", "timestamp": now_ms }),
    ]
}

pub(crate) fn reasoning_content(reasoning_id: &str, delta: &str, now_ms: u64) -> Value {
    json!({ "type": REASONING_MESSAGE_CONTENT, "messageId": reasoning_id, "delta": delta, "timestamp": now_ms })
}

/// A reasoning span closes: `REASONING_MESSAGE_END`, then `REASONING_END`.
pub(crate) fn reasoning_close(reasoning_id: &str, now_ms: u64) -> [Value; 2] {
    [
        json!({ "type": REASONING_MESSAGE_END, "messageId": reasoning_id, "timestamp": now_ms }),
        json!({ "type": REASONING_END, "messageId": reasoning_id, "timestamp": now_ms }),
    ]
}

/// A message ends; `status` (additive) is `complete` or `error`.
pub(crate) fn message_end(message_id: &str, status: MessageStatus, now_ms: u64) -> Value {
    json!({ "type": TEXT_MESSAGE_END, "messageId": message_id, "status": message_status_str(status), "timestamp": now_ms })
}

/// The three chunks that publish a tool call as the model asked for it, and its status then
/// (`pending`, `requires_confirmation` or `error` with the reason; additive on the end chunk).
pub fn tool_call(parent_id: &str, call: &ToolCall, now_ms: u64) -> Vec<Value> {
    let args = Value::Object(call.args.clone());
    let mut end = json!({
        "type": TOOL_CALL_END,
        "toolCallId": call.id,
        "toolCallName": call.name,
        "toolName": call.name,
        "input": args,
        "status": tool_status_str(call.status),
        "timestamp": now_ms,
    });
    if let Some(error) = &call.error {
        end["error"] = Value::String(error.clone());
    }
    vec![
        json!({
            "type": TOOL_CALL_START,
            "toolCallId": call.id,
            "toolCallName": call.name,
            "toolName": call.name,
            "parentMessageId": parent_id,
            "timestamp": now_ms,
        }),
        json!({ "type": TOOL_CALL_ARGS, "toolCallId": call.id, "delta": args.to_string(), "timestamp": now_ms }),
        end,
    ]
}

/// TanStack's approval request for a call that needs a person (the 0.8 way; 0.58 reads the
/// run's interrupt outcome). `approval.id` is the call's confirmation token, which
/// `client.confirmation.resolve` takes.
pub(crate) fn approval_requested(call: &ToolCall, now_ms: u64) -> Value {
    json!({
        "type": CUSTOM,
        "name": APPROVAL_REQUESTED,
        "value": {
            "toolCallId": call.id,
            "toolName": call.name,
            "input": Value::Object(call.args.clone()),
            "approval": { "id": confirmation_token(&call.id), "needsApproval": true },
        },
        "timestamp": now_ms,
    })
}

/// A call's new status without a result message (`running`, or an error nobody answered).
pub(crate) fn tool_call_status(call: &ToolCall, now_ms: u64) -> Value {
    let mut value = Map::new();
    value.insert("toolCallId".into(), Value::String(call.id.clone()));
    value.insert(
        "status".into(),
        Value::String(tool_status_str(call.status).into()),
    );
    if let Some(result) = &call.result {
        value.insert("result".into(), Value::String(result.clone()));
    }
    if let Some(error) = &call.error {
        value.insert("error".into(), Value::String(error.clone()));
    }
    json!({ "type": CUSTOM, "name": TOOL_CALL_STATUS, "value": value, "timestamp": now_ms })
}

/// A tool's answer, for both TanStack dialects: an end chunk with `result` (0.8) and the
/// `TOOL_CALL_RESULT` (0.58) that carries turnkeep's `tool` message (`messageId`, `createdAt`);
/// a failed call says `state: "output-error"` (top level and in `metadata.tanstack`).
pub fn tool_result(message: &Message, tool_name: &str) -> Vec<Value> {
    let call_id = message.tool_call_id.clone().unwrap_or_default();
    let failed = message.status == MessageStatus::Error;
    let output = if failed {
        json!({ "error": message.content })
    } else {
        Value::String(message.content.clone())
    };
    let end = json!({
        "type": TOOL_CALL_END,
        "toolCallId": call_id,
        "toolName": tool_name,
        "result": output,
        "timestamp": created_ms(message),
    });
    let mut result = json!({
        "type": TOOL_CALL_RESULT,
        "toolCallId": call_id,
        "messageId": message.id,
        "role": "tool",
        "content": result_content(message),
        "timestamp": created_ms(message),
        "createdAt": message.created_at,
    });
    if failed {
        result["state"] = Value::String("output-error".into());
        result["metadata"] = json!({ "tanstack": { "state": "output-error" } });
    }
    vec![end, result]
}

/// A native batch: the whole conversation as TanStack UI messages (`messages`, tool results
/// anchored on the assistant message that made the call) and, additively, turnkeep's canonical
/// messages (`canonical`), which a turnkeep reader prefers.
pub(crate) fn messages_snapshot(messages: &[Message]) -> Value {
    let canonical: Vec<Value> = messages
        .iter()
        .map(crate::protocol::message::message_to_value)
        .collect();
    json!({ "type": MESSAGES_SNAPSHOT, "messages": ui_messages(messages), "canonical": canonical })
}

/// Canonical messages as TanStack UI messages: `tool` messages are not messages there but a
/// `tool-result` part (and the call's `output`) on the assistant message that made the call.
pub(crate) fn ui_messages(messages: &[Message]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    let mut owner: crate::hash::FixedHashMap<&str, usize> = Default::default();
    for message in messages {
        if message.role == Role::Tool {
            let call_id = message.tool_call_id.as_deref().unwrap_or_default();
            if let Some(&at) = owner.get(call_id) {
                if let Some(parts) = out[at]["parts"].as_array_mut() {
                    parts.push(tool_result_part(message));
                }
                continue;
            }
        }
        for call in message.tool_calls.iter().flatten() {
            owner.insert(call.id.as_str(), out.len());
        }
        out.push(native_message(message));
    }
    out
}

/// A tool message's content as TanStack carries it: the output, or `{"error": ...}` as JSON
/// text for a failed call (what `chat()` writes and its processor reads).
fn result_content(message: &Message) -> String {
    if message.status == MessageStatus::Error {
        json!({ "error": message.content }).to_string()
    } else {
        message.content.clone()
    }
}

/// The error inside a failed result's content (`{"error": ...}`), else the content itself.
pub(crate) fn result_error(content: &str) -> String {
    serde_json::from_str::<Value>(content)
        .ok()
        .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| content.to_owned())
}

/// A tool output as TanStack's processor keeps it: parsed when it is JSON, else the text.
pub(crate) fn output_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

fn tool_result_part(message: &Message) -> Value {
    let failed = message.status == MessageStatus::Error;
    let mut part = json!({
        "type": "tool-result",
        "toolCallId": message.tool_call_id.clone().unwrap_or_default(),
        "content": result_content(message),
        "state": if failed { "error" } else { "complete" },
    });
    if failed {
        part["error"] = Value::String(message.content.clone());
    }
    part
}

/// One message in TanStack's UI shape (`id`, `role`, `parts`, `createdAt`, `metadata`), with
/// AG-UI's `content` text beside the parts.
pub(crate) fn native_message(message: &Message) -> Value {
    let mut value = json!({
        "id": message.id,
        "role": role_str(message.role),
        "content": message.content,
        "createdAt": message.created_at,
    });
    if let Some(call_id) = &message.tool_call_id {
        value["toolCallId"] = Value::String(call_id.clone());
    }
    if let Some(metadata) = &message.metadata {
        value["metadata"] = Value::Object(metadata.clone());
    }
    let mut parts = Vec::new();
    if !message.reasoning().is_empty() {
        parts.push(json!({ "type": "thinking", "content": message.reasoning() }));
    }
    if message.role == Role::Tool {
        parts.push(tool_result_part(message));
    } else if !message.content.is_empty() {
        parts.push(json!({ "type": "text", "content": message.content }));
    }
    for call in message.tool_calls.iter().flatten() {
        let mut part = json!({
            "type": "tool-call",
            "id": call.id,
            "name": call.name,
            "arguments": Value::Object(call.args.clone()).to_string(),
            "input": Value::Object(call.args.clone()),
            "state": ui_tool_state(call.status),
        });
        if call.status == ToolCallStatus::RequiresConfirmation {
            // What TanStack's part holds while it asks (the approval its
            // `addToolApprovalResponse({ id })` answers), so a page hydrated from these
            // messages sends the token back.
            part["approval"] = json!({
                "id": crate::session::confirmation_token(&call.id),
                "needsApproval": true,
            });
        }
        if let Some(result) = &call.result {
            part["output"] = output_value(result);
        }
        if let Some(error) = &call.error {
            part["output"] = json!({ "error": error });
        }
        parts.push(part);
    }
    value["parts"] = Value::Array(parts);
    value
}

/// TanStack's tool-call part state for a canonical call status.
fn ui_tool_state(status: ToolCallStatus) -> &'static str {
    match status {
        ToolCallStatus::Pending | ToolCallStatus::Running => "input-complete",
        ToolCallStatus::RequiresConfirmation => "approval-requested",
        ToolCallStatus::Complete => "complete",
        ToolCallStatus::Error => "error",
    }
}

pub(crate) fn role_str(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::System => "system",
        Role::Tool => "tool",
    }
}

pub(crate) fn message_status_str(status: MessageStatus) -> &'static str {
    match status {
        MessageStatus::Pending => "pending",
        MessageStatus::Streaming => "streaming",
        MessageStatus::Complete => "complete",
        MessageStatus::Error => "error",
    }
}

pub(crate) fn tool_status_str(status: ToolCallStatus) -> &'static str {
    match status {
        ToolCallStatus::Pending => "pending",
        ToolCallStatus::Running => "running",
        ToolCallStatus::Complete => "complete",
        ToolCallStatus::Error => "error",
        ToolCallStatus::RequiresConfirmation => "requires_confirmation",
    }
}

pub fn parse_tool_status(s: &str) -> Option<ToolCallStatus> {
    Some(match s {
        "pending" => ToolCallStatus::Pending,
        "running" => ToolCallStatus::Running,
        "complete" => ToolCallStatus::Complete,
        "error" => ToolCallStatus::Error,
        "requires_confirmation" => ToolCallStatus::RequiresConfirmation,
        _ => return None,
    })
}

pub(crate) fn parse_message_status(s: &str) -> Option<MessageStatus> {
    Some(match s {
        "pending" => MessageStatus::Pending,
        "streaming" => MessageStatus::Streaming,
        "complete" => MessageStatus::Complete,
        "error" => MessageStatus::Error,
        _ => return None,
    })
}

/// A message's `createdAt` as epoch milliseconds (TanStack's `timestamp`).
fn created_ms(message: &Message) -> u64 {
    parse_iso_millis_utc(&message.created_at).unwrap_or(0)
}

/// `createdAt` of a chunk: its own `createdAt` when it is a valid one, else its `timestamp`.
pub(crate) fn chunk_created_at(chunk: &Value, fallback_ms: u64) -> String {
    if let Some(at) = chunk
        .get("createdAt")
        .and_then(Value::as_str)
        .filter(|s| parse_iso_millis_utc(s).is_some())
    {
        return at.to_owned();
    }
    format_iso_millis_at(chunk_timestamp(chunk).unwrap_or(fallback_ms))
}

/// A chunk's `timestamp` (epoch ms), when it is a non-negative integer.
pub(crate) fn chunk_timestamp(chunk: &Value) -> Option<u64> {
    chunk.get("timestamp").and_then(Value::as_u64)
}
