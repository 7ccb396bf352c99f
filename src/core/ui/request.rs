//! What the AI SDK's stock `DefaultChatTransport` POSTs, as a turn of the session:
//! `{ id: chatId, messages: UIMessage[], trigger, messageId?, …body }`.
//!
//! The chat id is the session id. The client sends the whole conversation every time; only its
//! last message says what this request is, and only that one is read (the stored conversation
//! stays the authority):
//! - a `user` message: that message sent (its text parts as the input, its file parts kept);
//! - `trigger: "regenerate-message"`: the last answer regenerated (the client dropped it);
//! - an `assistant` message whose tool parts are in `state: "approval-responded"` (what
//!   `addToolApprovalResponse` leaves): the approvals answered, each a
//!   `client.confirmation.resolve` of the token its `approval.id` names.

use serde_json::{Map, Value};

use crate::checks::{self, is_safe_id, JsonBounds};
use crate::limits;
use crate::protocol::{FilePart, Part};

/// A decoded request.
#[derive(Clone, Debug, PartialEq)]
pub struct UiRequest {
    /// The chat id: the session id (a SafeId).
    pub session_id: String,
    pub turn: UiTurn,
}

/// What the request asks of the session.
#[derive(Clone, Debug, PartialEq)]
pub enum UiTurn {
    /// The user's message: sent as a turn (`turn_id` derived from its id, so a client that sends
    /// the same message again is answered as a replay).
    Send {
        turn_id: String,
        /// The client's id for the message, kept as the stored message's id (`None`: the id
        /// cannot be one, and the server draws one).
        message_id: Option<String>,
        text: String,
        files: Vec<Part>,
    },
    /// The last answer, again (`useChat`'s `regenerate()`). `turn_id` is `None` when the
    /// request names nothing stable to derive it from (the shell draws a fresh one).
    Regenerate { turn_id: Option<String> },
    /// Tool approvals answered, in the order of their parts.
    Approvals(Vec<Approval>),
}

impl UiTurn {
    /// The turn the request names, as a diagnostic names it: a send's, a regenerate's when it
    /// has one, the first approval's token (a continuation's turn id).
    pub fn turn_id(&self) -> Option<&str> {
        match self {
            UiTurn::Send { turn_id, .. } => Some(turn_id),
            UiTurn::Regenerate { turn_id } => turn_id.as_deref(),
            UiTurn::Approvals(approvals) => approvals.first().map(|a| a.token.as_str()),
        }
    }
}

/// One answered approval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Approval {
    /// `approval.id`: the confirmation token.
    pub token: String,
    pub approved: bool,
    pub reason: Option<String>,
}

/// Why a body is not such a request: the broken rule, for the operator (the client gets the
/// registry's `REQUEST_INVALID_UI_REQUEST`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UiRequestError {
    pub detail: &'static str,
}

const fn invalid(detail: &'static str) -> UiRequestError {
    UiRequestError { detail }
}

/// The bounds of the one message read (a `UIMessage` with a few parts; file parts carry their
/// data inline as `data:` URLs, so strings are not capped here: the body limit caps them).
pub(crate) const UI_MESSAGE_BOUNDS: JsonBounds = JsonBounds {
    nodes_max: limits::UI_MESSAGE_NODES_MAX,
    depth_max: limits::UI_MESSAGE_DEPTH_MAX,
    string_units_max: None,
    array_items_max: limits::UI_MESSAGE_PARTS_MAX,
    object_entries_max: limits::UI_MESSAGE_OBJECT_ENTRIES_MAX,
    key_units_max: limits::UI_MESSAGE_KEY_UNITS_MAX,
};

/// Decodes a request body (parsed JSON).
pub fn decode_ui_request(body: &Value) -> Result<UiRequest, UiRequestError> {
    let o = body
        .as_object()
        .ok_or(invalid("the body must be an object"))?;
    let session_id = o
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| is_safe_id(id))
        .ok_or(invalid(
            "id must be a SafeId (the chat id is the session id)",
        ))?
        .to_owned();
    let regenerate = match o.get("trigger").and_then(Value::as_str) {
        Some("submit-message") => false,
        Some("regenerate-message") => true,
        _ => {
            return Err(invalid(
                "trigger must be submit-message or regenerate-message",
            ))
        }
    };
    let message_id = match o.get("messageId") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(id.as_str()),
        Some(_) => return Err(invalid("messageId must be a string")),
    };
    let last = o
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|messages| messages.last())
        .ok_or(invalid("messages must be a non-empty array"))?;
    if !checks::within_bounds(last, &UI_MESSAGE_BOUNDS) {
        return Err(invalid("the last message exceeds the UI message limits"));
    }
    let last = last
        .as_object()
        .ok_or(invalid("each message must be an object"))?;
    let parts = last
        .get("parts")
        .and_then(Value::as_array)
        .ok_or(invalid("a message's parts must be an array"))?;
    let turn = match (last.get("role").and_then(Value::as_str), regenerate) {
        (Some("user"), true) => UiTurn::Regenerate {
            turn_id: message_id.map(|id| derived_turn_id("re", id)),
        },
        (Some("user"), false) => send(last, parts)?,
        (Some("assistant"), false) => UiTurn::Approvals(approvals(parts)?),
        _ => {
            return Err(invalid(
                "the last message must be the user's, or an answer with approvals",
            ))
        }
    };
    Ok(UiRequest { session_id, turn })
}

/// The user's message: its text parts joined, its file parts as stored parts.
fn send(message: &Map<String, Value>, parts: &[Value]) -> Result<UiTurn, UiRequestError> {
    let mut texts: Vec<&str> = Vec::new();
    let mut files = Vec::new();
    for part in parts {
        match part.get("type").and_then(Value::as_str) {
            Some("text") => texts.push(
                part.get("text")
                    .and_then(Value::as_str)
                    .ok_or(invalid("a text part's text must be a string"))?,
            ),
            Some("file") => files.push(file_part(part)?),
            _ => {} // step markers, data parts, sources: nothing the turn reads
        }
    }
    if files.len() > limits::UI_MESSAGE_FILES_MAX {
        return Err(invalid(
            "a message may carry at most UI_MESSAGE_FILES_MAX files",
        ));
    }
    let text = texts.join("\n");
    if text.trim().is_empty() {
        return Err(invalid("the user's message must have text"));
    }
    let id = message.get("id").and_then(Value::as_str);
    let message_id = id.filter(|id| is_message_id(id)).map(str::to_owned);
    let turn_id = match id {
        Some(id) if !id.is_empty() => derived_turn_id("ui", id),
        _ => return Err(invalid("the user's message must have an id")),
    };
    Ok(UiTurn::Send {
        turn_id,
        message_id,
        text,
        files,
    })
}

/// `{ type: "file", mediaType, url, filename? }` as a stored file part.
pub(crate) fn file_part(part: &Value) -> Result<Part, UiRequestError> {
    let url = part
        .get("url")
        .and_then(Value::as_str)
        .filter(|u| !u.is_empty())
        .ok_or(invalid("a file part's url must be a non-empty string"))?;
    let media_type = part
        .get("mediaType")
        .and_then(Value::as_str)
        .ok_or(invalid("a file part's mediaType must be a string"))?;
    let filename = part.get("filename").and_then(Value::as_str);
    Ok(Part::File(FilePart {
        source: url.to_owned(),
        mime_type: (!media_type.is_empty()).then(|| media_type.to_owned()),
        filename: filename.map(str::to_owned),
    }))
}

/// The tool parts in `state: "approval-responded"`, each with its decision.
fn approvals(parts: &[Value]) -> Result<Vec<Approval>, UiRequestError> {
    let answered = parts.iter().filter(|part| {
        let kind = part.get("type").and_then(Value::as_str).unwrap_or_default();
        let is_tool = kind.starts_with("tool-") || kind == "dynamic-tool";
        is_tool && part.get("state").and_then(Value::as_str) == Some("approval-responded")
    });
    answered_approvals(answered)
}

/// The decisions of answered tool parts (the AI SDK's and TanStack's alike: a part's
/// `approval: { id: token, approved, reason? }`), one at least, at most `UI_APPROVALS_MAX`.
pub(crate) fn answered_approvals<'a>(
    parts: impl Iterator<Item = &'a Value>,
) -> Result<Vec<Approval>, UiRequestError> {
    let mut out = Vec::new();
    for part in parts {
        let approval = part
            .get("approval")
            .ok_or(invalid("an answered tool part must carry its approval"))?;
        out.push(approval_of(approval)?);
    }
    if out.is_empty() {
        return Err(invalid(
            "an answer sent back must carry an answered approval",
        ));
    }
    if out.len() > limits::UI_APPROVALS_MAX {
        return Err(invalid("too many approvals in one request"));
    }
    Ok(out)
}

/// `{ id: token, approved, reason? }`.
fn approval_of(approval: &Value) -> Result<Approval, UiRequestError> {
    let token = approval
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| is_safe_id(id))
        .ok_or(invalid("approval.id must be the confirmation token"))?;
    let approved = approval
        .get("approved")
        .and_then(Value::as_bool)
        .ok_or(invalid("approval.approved must be a boolean"))?;
    let reason = match approval.get("reason") {
        None | Some(Value::Null) => None,
        Some(Value::String(r)) if r.chars().count() <= limits::UI_APPROVAL_REASON_CHARS_MAX => {
            Some(r.clone())
        }
        Some(_) => return Err(invalid("approval.reason must be a short string")),
    };
    Ok(Approval {
        token: token.to_owned(),
        approved,
        reason,
    })
}

/// A client's message id kept as the stored message's: printable, at most
/// `UI_MESSAGE_ID_CHARS_MAX` characters.
pub(crate) fn is_message_id(id: &str) -> bool {
    !id.is_empty()
        && id.chars().count() <= limits::UI_MESSAGE_ID_CHARS_MAX
        && !id.chars().any(char::is_control)
}

/// A turn id (a SafeId) that depends only on `id`: `<prefix>-<id>` when that is a SafeId, else
/// `<prefix>-h<16 hex digits of its FNV-1a hash>`.
pub(crate) fn derived_turn_id(prefix: &str, id: &str) -> String {
    let plain = format!("{prefix}-{id}");
    if is_safe_id(&plain) {
        return plain;
    }
    let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{prefix}-h{hash:016x}")
}

/// Which route of the UI message stream a request is for (the handler serves all of them, so
/// one export mounts under `{api}`, `{api}/:id/stream`, `{api}/:id/stop`, `{api}/:id/messages`
/// and `{api}/:id/hydrate`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UiRoute {
    /// `POST {api}`: a turn (send, regenerate, approvals), or an AG-UI `RunAgentInput`.
    Send,
    /// `POST {api}/:id/messages`: a turn of session `:id` as the Durable Streams TanStack
    /// transport sends it (`{ messages, data }`), answered `202`.
    Post { session_id: String },
    /// `GET {api}/:id/stream`: the running turn, from its start (204 when none runs).
    Resume { session_id: String },
    /// `POST {api}/:id/stop`: stop whatever turn runs.
    Stop { session_id: String },
    /// `GET {api}/:id/messages`: the conversation as `UIMessage[]` (a first paint).
    Messages { session_id: String },
    /// `GET {api}/:id/hydrate`: TanStack's `{ messages, activeRun, interrupts }`.
    Hydrate { session_id: String },
    /// A method the route does not answer: 405 with `Allow`.
    MethodNotAllowed { allow: &'static str },
    /// `:id` is not a SafeId.
    BadSessionId,
}

/// The routes under `{api}/:id/`, by their last segment: `(segment, method, route)`.
type SessionRoute = fn(String) -> UiRoute;
const SESSION_ROUTES: &[(&str, &str, SessionRoute)] = &[
    ("stream", "GET", |session_id| UiRoute::Resume { session_id }),
    ("stop", "POST", |session_id| UiRoute::Stop { session_id }),
    ("messages", "GET", |session_id| UiRoute::Messages {
        session_id,
    }),
    ("messages", "POST", |session_id| UiRoute::Post {
        session_id,
    }),
    ("hydrate", "GET", |session_id| UiRoute::Hydrate {
        session_id,
    }),
];

/// Decides the route from the method and the URL's path.
pub fn ui_route(method: &str, path: &str) -> UiRoute {
    let mut segments = path.trim_end_matches('/').rsplit('/');
    let (last, id) = (segments.next().unwrap_or_default(), segments.next());
    let id = id.filter(|id| !id.is_empty());
    let routes: Vec<_> = SESSION_ROUTES.iter().filter(|r| r.0 == last).collect();
    let Some(raw) = id.filter(|_| !routes.is_empty()) else {
        return if method == "POST" {
            UiRoute::Send
        } else {
            UiRoute::MethodNotAllowed { allow: "POST" }
        };
    };
    let Some(&&(_, _, route)) = routes.iter().find(|r| r.1 == method) else {
        let allow = if routes.len() > 1 {
            "GET, POST"
        } else {
            routes[0].1
        };
        return UiRoute::MethodNotAllowed { allow };
    };
    match checks::decode_uri_component(raw).filter(|s| is_safe_id(s)) {
        Some(session_id) => route(session_id),
        None => UiRoute::BadSessionId,
    }
}
