//! The Worker's side of the streams routes (`/v1/stream/<name>`), decided before a request
//! reaches a `SessionStream` object: CORS preflight, the streams token, the stream name, the
//! declared body size, and the browser security headers every answer carries. (Browsers read a
//! chat session's stream through the chat-stream proxy, `routes::chat_stream_route`, which
//! reads the session's own object directly after the demo auth, with no token.) Pure:
//! the Worker (`crate::cloudflare::worker`) performs the decision. Tested on the host in
//! `tests/streams_route.rs`.

use crate::core::diagnostics::{streams as rows, Row};
use crate::core::limits;
use crate::core::protocol::TurnDiagnostic;

/// Where the Durable Streams protocol is served.
pub const STREAM_PREFIX: &str = "/v1/stream/";

/// Headers every stream response carries (browser security and CORS, Durable Streams protocol §11).
pub const SECURITY_HEADERS: &[(&str, &str)] = &[
    ("x-content-type-options", "nosniff"),
    ("cross-origin-resource-policy", "cross-origin"),
    ("access-control-allow-origin", "*"),
    (
        "access-control-expose-headers",
        "Stream-Next-Offset, Stream-Cursor, Stream-Up-To-Date, Stream-Closed, Stream-TTL, \
         Stream-Expires-At, Stream-SSE-Data-Encoding, Producer-Epoch, Producer-Seq, \
         Producer-Seq-Count, Producer-Expected-Seq, Producer-Received-Seq, ETag, Content-Type, Location",
    ),
];

/// The answer to a CORS preflight (with the security headers).
pub const PREFLIGHT_HEADERS: &[(&str, &str)] = &[
    (
        "access-control-allow-methods",
        "GET, POST, PUT, DELETE, HEAD, OPTIONS",
    ),
    (
        "access-control-allow-headers",
        "Authorization, Content-Type, If-None-Match, Stream-Seq, Stream-TTL, Stream-Expires-At, \
         Stream-Closed, Producer-Id, Producer-Epoch, Producer-Seq, Producer-Seq-Count, \
         Stream-Forked-From, \
         Stream-Fork-Offset, Stream-Fork-Sub-Offset",
    ),
    ("access-control-max-age", "86400"),
];

/// How the Worker's environment configures the streams routes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamsAccess {
    /// `STREAMS_PUBLIC=1`: no token needed (tests and local conformance runs only).
    pub public: bool,
    /// `STREAMS_TOKEN`: the server-side bearer token (empty means none).
    pub token: Option<String>,
}

impl StreamsAccess {
    pub fn from_env(public: Option<&str>, token: Option<&str>) -> StreamsAccess {
        StreamsAccess {
            public: matches!(public.map(str::trim), Some("1" | "true")),
            token: token.filter(|t| !t.is_empty()).map(str::to_owned),
        }
    }
}

/// The parts of a request the route looks at.
#[derive(Clone, Copy, Debug)]
pub struct RouteRequest<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub authorization: Option<&'a str>,
    pub content_length: Option<&'a str>,
}

/// A refusal: a versioned streams diagnostic, with extra headers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
    pub retryable: bool,
    pub headers: Vec<(&'static str, &'static str)>,
    /// Read (and drop) the request body first, up to `UNREAD_BODY_DRAIN_BYTES_MAX`:
    /// answering while a client is still sending makes the connection close under it, which
    /// HTTP clients report as a socket error instead of the status.
    pub drain_body: bool,
}

impl Refusal {
    fn new(row: Row) -> Refusal {
        Refusal {
            status: row.status,
            code: row.code,
            message: row.message.to_owned(),
            retryable: row.retryable,
            headers: Vec::new(),
            drain_body: false,
        }
    }

    fn header(mut self, name: &'static str, value: &'static str) -> Refusal {
        self.headers.push((name, value));
        self
    }

    /// The body: `{"error":{"version":1,"code":"streams.v1.…","message":"…","retryable":…}}`.
    pub fn body(&self) -> String {
        TurnDiagnostic {
            code: self.code.to_owned(),
            message: self.message.clone(),
            retryable: self.retryable,
        }
        .error_body_json(None)
    }

    /// 413: an append larger than the protocol allows.
    pub fn append_too_large() -> Refusal {
        let mut refusal = Refusal::new(rows::APPEND_TOO_LARGE);
        refusal.message = format!(
            "an append may carry at most {} bytes",
            limits::STREAM_APPEND_BYTES_MAX
        );
        refusal.drain_body = true;
        refusal
    }

    /// 500: something failed while serving the stream (the cause goes to the log).
    pub fn internal() -> Refusal {
        Refusal::new(rows::INTERNAL)
    }
}

/// What the Worker does with a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamRoute {
    /// Not a streams path.
    NotMine,
    /// 204 with the preflight and security headers.
    Preflight,
    Refuse(Refusal),
    /// Hand the request as it is to the object of `stream`.
    Forward {
        stream: String,
    },
}

/// Decides one request. `access` is the environment's configuration.
pub fn decide(request: &RouteRequest<'_>, access: &StreamsAccess) -> StreamRoute {
    match request.path.strip_prefix(STREAM_PREFIX) {
        Some(raw) => decide_stream(request, raw, access),
        None => StreamRoute::NotMine,
    }
}

fn decide_stream(request: &RouteRequest<'_>, raw: &str, access: &StreamsAccess) -> StreamRoute {
    if request.method == "OPTIONS" {
        return StreamRoute::Preflight;
    }
    if !token_accepted(request.authorization, access) {
        return StreamRoute::Refuse(
            Refusal::new(rows::UNAUTHORIZED)
                .header("www-authenticate", "Bearer realm=\"turnkeep streams\""),
        );
    }
    let Some(stream) = stream_name(raw) else {
        return StreamRoute::Refuse(Refusal::new(rows::NAME_INVALID));
    };
    if declared_too_large(request.content_length) {
        return StreamRoute::Refuse(Refusal::append_too_large());
    }
    StreamRoute::Forward { stream }
}

/// The stream name of a chat session: `chat/<tenant>/<sessionId>`.
pub fn chat_stream_name(tenant: &str, session_id: &str) -> String {
    format!("chat/{tenant}/{session_id}")
}

/// The value of `Authorization: Bearer <value>` (scheme case-insensitive, one value).
pub fn bearer(authorization: Option<&str>) -> Option<&str> {
    let header = authorization?.trim();
    let (scheme, rest) = header.split_at_checked(6)?;
    if !scheme.eq_ignore_ascii_case("bearer") || !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let value = rest.trim_start();
    (!value.is_empty() && !value.contains(char::is_whitespace)).then_some(value)
}

fn token_accepted(authorization: Option<&str>, access: &StreamsAccess) -> bool {
    if access.public {
        return true;
    }
    match (&access.token, bearer(authorization)) {
        (Some(token), Some(sent)) => same_text(sent.as_bytes(), token.as_bytes()),
        _ => false,
    }
}

/// Equality whose time does not depend on where the texts differ.
pub fn same_text(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= usize::from(x ^ y);
    }
    diff == 0
}

/// A stream name from its raw path part: percent-decoded, non-empty, at most
/// `STREAM_NAME_BYTES_MAX` bytes, no control characters.
pub fn stream_name(raw: &str) -> Option<String> {
    let name = decode_component(raw)?;
    let ok = !name.is_empty()
        && name.len() <= limits::STREAM_NAME_BYTES_MAX
        && !name.chars().any(|c| c.is_control());
    ok.then_some(name)
}

/// A `Content-Length` over the append limit (an unreadable one is left to the body read).
fn declared_too_large(content_length: Option<&str>) -> bool {
    content_length
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|n| n > limits::STREAM_APPEND_BYTES_MAX)
}

/// `decodeURIComponent` (`core::checks::decode_uri_component`).
pub fn decode_component(raw: &str) -> Option<String> {
    crate::core::checks::decode_uri_component(raw)
}
