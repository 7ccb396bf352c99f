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
//!
//! The user's media parts (AG-UI 1.0's and TanStack's alike: `{ type: "image" | "audio" |
//! "video" | "document", source: { type: "data" | "url", value, mimeType } }`) are kept as the
//! stored message's file parts (a `data` source as a `data:` URL).
//!
//! [`decode_transport_send`]: the Durable Streams TanStack transport's body (`{ messages, data }`,
//! `POST {api}/:id/messages`): no run context reaches the server, so the last message says it
//! all: a user's message is the turn (its turn id derived from the message id, so a resend is a
//! replay), an assistant's with tool-call parts in `state: "approval-responded"` answers them.

use serde_json::Value;

use crate::checks::{self, is_safe_id};
use crate::limits;
use crate::protocol::{FilePart, Part};
use crate::ui::request::{answered_approvals, derived_turn_id, is_message_id, UI_MESSAGE_BOUNDS};
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
    user_turn(last_message(messages)?, turn_id)
}

/// The last of `messages`, within the UI message limits (the one message a request is read by).
fn last_message(messages: Option<&Value>) -> Result<&Value, UiRequestError> {
    let last = messages
        .and_then(Value::as_array)
        .and_then(|m| m.last())
        .ok_or(invalid("messages must be a non-empty array"))?;
    if !checks::within_bounds(last, &UI_MESSAGE_BOUNDS) {
        return Err(invalid("the last message exceeds the UI message limits"));
    }
    Ok(last)
}

/// A user's message (`last`, already bounded) as the turn `turn_id`: its text, id and files.
fn user_turn(last: &Value, turn_id: String) -> Result<UiTurn, UiRequestError> {
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
        files: files_of(last)?,
    })
}

/// The kinds of media part AG-UI 1.0 and TanStack AI send.
const MEDIA_PARTS: &[&str] = &["image", "audio", "video", "document"];

/// A message's media parts as stored file parts, at most `UI_MESSAGE_FILES_MAX`.
fn files_of(message: &Value) -> Result<Vec<Part>, UiRequestError> {
    let parts = message
        .get("parts")
        .or_else(|| message.get("content"))
        .and_then(Value::as_array);
    let media = parts.into_iter().flatten().filter(|p| {
        p.get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| MEDIA_PARTS.contains(&t))
    });
    let files: Vec<Part> = media.map(media_part).collect::<Result<_, _>>()?;
    if files.len() > limits::UI_MESSAGE_FILES_MAX {
        return Err(invalid(
            "a message may carry at most UI_MESSAGE_FILES_MAX files",
        ));
    }
    Ok(files)
}

/// `{ type, source: { type: "data" | "url", value, mimeType? } }` as a file part.
pub(crate) fn media_part(part: &Value) -> Result<Part, UiRequestError> {
    let source = part
        .get("source")
        .ok_or(invalid("a media part needs a source"))?;
    let value = source
        .get("value")
        .and_then(Value::as_str)
        .filter(|v| !v.is_empty())
        .ok_or(invalid(
            "a media part's source.value must be a non-empty string",
        ))?;
    let mime_type = source.get("mimeType").and_then(Value::as_str);
    let url = match source.get("type").and_then(Value::as_str) {
        Some("url") => value.to_owned(),
        Some("data") => {
            let mime = mime_type
                .filter(|m| !m.is_empty())
                .ok_or(invalid("a data source needs its mimeType"))?;
            format!("data:{mime};base64,{value}")
        }
        _ => {
            return Err(invalid(
                "a media part's source must be data or a url (provider file ids are not read)",
            ))
        }
    };
    Ok(Part::File(FilePart {
        source: url,
        mime_type: mime_type.filter(|m| !m.is_empty()).map(str::to_owned),
        filename: part
            .pointer("/metadata/filename")
            .and_then(Value::as_str)
            .map(str::to_owned),
    }))
}

/// Decodes the Durable Streams TanStack transport's `{ messages, data }` for session
/// `session_id` (the route's).
pub fn decode_transport_send(body: &Value, session_id: &str) -> Result<UiRequest, UiRequestError> {
    let last = last_message(body.get("messages"))?;
    let turn = match last.get("role").and_then(Value::as_str) {
        Some("assistant") => UiTurn::Approvals(answered_calls(last)?),
        _ => {
            let id = last
                .get("id")
                .and_then(Value::as_str)
                .filter(|id| !id.is_empty())
                .ok_or(invalid("the user's message must have an id"))?;
            user_turn(last, derived_turn_id("ui", id))?
        }
    };
    Ok(UiRequest {
        session_id: session_id.to_owned(),
        turn,
    })
}

/// A TanStack answer's tool-call parts in `state: "approval-responded"`, each a decision of the
/// token its `approval.id` names (read as the AI SDK's are).
fn answered_calls(message: &Value) -> Result<Vec<Approval>, UiRequestError> {
    let parts = message.get("parts").and_then(Value::as_array);
    let answered = parts.into_iter().flatten().filter(|p| {
        p.get("type").and_then(Value::as_str) == Some("tool-call")
            && p.get("state").and_then(Value::as_str) == Some("approval-responded")
    });
    answered_approvals(answered)
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
