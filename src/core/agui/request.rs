//! An AG-UI `RunAgentInput` as a turn of the session. What TanStack AI's client sends
//! (`send(messages, data, signal, runContext)`, forwarded by `toTanStackConnection`) and what
//! `@ag-ui/client`'s `HttpAgent` POSTs:
//! `{ threadId, runId, parentRunId?, messages, tools, context, state, forwardedProps, resume? }`.
//!
//! - `threadId` is the session id (a SafeId);
//! - `runId` is the turn id (a SafeId as it is, else derived from it), so the run a client
//!   waits for is the turn the log names;
//! - with `resume` entries, the request answers the run's interrupts: each entry is a
//!   confirmation decision (`interruptId` = the token; `status: "resolved"` with
//!   `payload.approved`, or `"cancelled"`: a rejection), and the messages are not read
//!   (TanStack adds synthetic `tool` messages for the answers; they are not results);
//! - else the last message is the user's, sent as the turn: its text (a `content` string, as
//!   AG-UI has it, or the text parts of a TanStack `UIMessage`), its id kept as the stored
//!   message's, so the client's bubble and the log's echo are one message.
//!
//! `tools`, `context`, `state` and `forwardedProps` are not read: the chat definition's tools
//! win (a client tool of the same name is TanStack's declaration of the server's).

use serde_json::Value;

use crate::checks::{self, is_safe_id};
use crate::limits;
use crate::ui::request::{derived_turn_id, is_message_id, UI_MESSAGE_BOUNDS};
use crate::ui::{Approval, UiRequest, UiRequestError, UiTurn};

const fn invalid(detail: &'static str) -> UiRequestError {
    UiRequestError { detail }
}

/// Whether a body is a `RunAgentInput` (it names a thread and a run) rather than the AI SDK's
/// chat request (`{ id, trigger, messages }`): the one handler serves both wires.
pub fn is_run_input(body: &Value) -> bool {
    body.get("threadId").is_some_and(Value::is_string)
        && body.get("runId").is_some_and(Value::is_string)
}

/// Decodes a `RunAgentInput` (parsed JSON) into a turn.
pub fn decode_run_input(body: &Value) -> Result<UiRequest, UiRequestError> {
    let o = body
        .as_object()
        .ok_or(invalid("the body must be an object"))?;
    let session_id = o
        .get("threadId")
        .and_then(Value::as_str)
        .filter(|id| is_safe_id(id))
        .ok_or(invalid(
            "threadId must be a SafeId (the thread is the session)",
        ))?
        .to_owned();
    let run_id = o
        .get("runId")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .ok_or(invalid("runId must be a non-empty string"))?;
    let turn_id = if is_safe_id(run_id) {
        run_id.to_owned()
    } else {
        derived_turn_id("run", run_id)
    };
    let turn = match o.get("resume") {
        None | Some(Value::Null) => send(o.get("messages"), turn_id)?,
        Some(Value::Array(entries)) if entries.is_empty() => send(o.get("messages"), turn_id)?,
        Some(Value::Array(entries)) => UiTurn::Approvals(decisions(entries)?),
        Some(_) => return Err(invalid("resume must be an array")),
    };
    Ok(UiRequest { session_id, turn })
}

/// The last message, the user's: its text and id.
fn send(messages: Option<&Value>, turn_id: String) -> Result<UiTurn, UiRequestError> {
    let last = messages
        .and_then(Value::as_array)
        .and_then(|m| m.last())
        .ok_or(invalid("messages must be a non-empty array"))?;
    if !checks::within_bounds(last, &UI_MESSAGE_BOUNDS) {
        return Err(invalid("the last message exceeds the UI message limits"));
    }
    if last.get("role").and_then(Value::as_str) != Some("user") {
        return Err(invalid(
            "the last message must be the user's (or the request must carry resume entries)",
        ));
    }
    let text = text_of(last)?;
    if text.trim().is_empty() {
        return Err(invalid("the user's message must have text"));
    }
    let message_id = last
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| is_message_id(id))
        .map(str::to_owned);
    Ok(UiTurn::Send {
        turn_id,
        message_id,
        text,
        files: Vec::new(),
    })
}

/// A message's text: AG-UI's `content` (a string, or input parts `{ type: "text", text }`), or
/// a TanStack `UIMessage`'s text parts (`{ type: "text", content }`), joined by newlines.
fn text_of(message: &Value) -> Result<String, UiRequestError> {
    if let Some(text) = message.get("content").and_then(Value::as_str) {
        return Ok(text.to_owned());
    }
    let parts = message
        .get("parts")
        .or_else(|| message.get("content"))
        .and_then(Value::as_array)
        .ok_or(invalid("a user message needs content or parts"))?;
    let texts: Vec<&str> = parts
        .iter()
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|p| {
            p.get("content")
                .or_else(|| p.get("text"))
                .and_then(Value::as_str)
        })
        .collect();
    Ok(texts.join("\n"))
}

/// `resume[]` entries as decisions, in order.
fn decisions(entries: &[Value]) -> Result<Vec<Approval>, UiRequestError> {
    if entries.len() > limits::UI_APPROVALS_MAX {
        return Err(invalid("too many resume entries in one request"));
    }
    entries.iter().map(decision).collect()
}

fn decision(entry: &Value) -> Result<Approval, UiRequestError> {
    let token = entry
        .get("interruptId")
        .and_then(Value::as_str)
        .filter(|id| is_safe_id(id))
        .ok_or(invalid(
            "resume[].interruptId must be the confirmation token",
        ))?
        .to_owned();
    match entry.get("status").and_then(Value::as_str) {
        Some("resolved") => {
            let approved = entry
                .pointer("/payload/approved")
                .and_then(Value::as_bool)
                .ok_or(invalid(
                    "a resolved resume entry's payload.approved must be a boolean",
                ))?;
            let reason = match entry.pointer("/payload/reason") {
                None | Some(Value::Null) => None,
                Some(Value::String(r))
                    if r.chars().count() <= limits::UI_APPROVAL_REASON_CHARS_MAX =>
                {
                    Some(r.clone())
                }
                Some(_) => return Err(invalid("payload.reason must be a short string")),
            };
            Ok(Approval {
                token,
                approved,
                reason,
            })
        }
        Some("cancelled") => Ok(Approval {
            token,
            approved: false,
            reason: Some("cancelled".to_owned()),
        }),
        _ => Err(invalid("resume[].status must be resolved or cancelled")),
    }
}
