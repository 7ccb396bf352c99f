//! The demo Worker's route table (README.md, "The demo Worker") and its demo authentication, as
//! pure decisions.
//! `worker.rs` performs them. Tested on the host in `tests/worker_routes.rs`.
//!
//! | route | what |
//! |---|---|
//! | `GET /?session=<id>[&panes=3]` | the demo chat page, server-rendered (`page.rs`) |
//! | `POST /api/chat` | the chat pipeline (Workers AI with an `AI` binding, else the demo model or `OPENAI_BASE_URL`'s) |
//! | `POST /api/ui/chat`, `GET /api/ui/chat/:id/stream`, `POST /api/ui/chat/:id/stop`, `GET /api/ui/chat/:id/messages` | the same pipeline speaking the AI SDK's UI message stream; `POST /api/ui/chat` also takes AG-UI `RunAgentInput` (TanStack AI's `toTanStackConnection`, `HttpAgent`) |
//! | `GET /api/sessions/:sessionId` | `{ messages, session, offset, renderParts, streamMessages, activeRunId }` |
//! | `GET /api/chat/stream/:sessionId` | `createChatStreamProxy`: demo auth, then the session's stream, read from the Worker's own `SessionStream` object (no streams token) |
//! | `/v1/stream/<name>` | the Durable Streams server (`streams::route`) |
//! | `POST /api/ask` | the Ask service over the docs corpus |
//! | `GET /mcp/sandbox?uri=&theme=`, `GET /mcp/assets/chart.js` | the MCP ui:// sandbox and its one script |

use crate::core::checks::is_safe_id;
use crate::core::diagnostics::{demo_routes, Row};
use crate::core::protocol::TurnDiagnostic;
use crate::core::streams::proxy::{decide_method, MethodDecision, ProxyFailure, Writes};

use super::streams::route::{bearer, chat_stream_name, decode_component};

/// The AI SDK UI message stream routes (`DefaultChatTransport({ api: UI_CHAT_PATH })`).
pub const UI_CHAT_PATH: &str = "/api/ui/chat";

/// The chat-stream proxy route, followed by a session id.
pub const CHAT_STREAM_PREFIX: &str = "/api/chat/stream/";

/// The chart script `ui://demo/chart` loads (the only script its CSP lets run).
pub const CHART_SCRIPT_PATH: &str = "/mcp/assets/chart.js";

/// Where a request goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    Page,
    Chat,
    /// `/api/ui/chat` and what is under it (the UI handler routes them itself).
    UiChat,
    /// `GET /api/sessions/:sessionId`, with the raw (still encoded) segment.
    Session(String),
    /// `/api/chat/stream/:sessionId` (the chat-stream proxy), with the raw segment.
    ChatStream(String),
    Ask,
    Sandbox,
    ChartScript,
    /// Anything else: the streams routes decide (`streams::route::decide`), else 404.
    Other,
}

impl Route {
    pub fn of(path: &str) -> Route {
        match path {
            "/" => Route::Page,
            "/api/chat" => Route::Chat,
            UI_CHAT_PATH => Route::UiChat,
            _ if path.starts_with("/api/ui/chat/") => Route::UiChat,
            "/api/ask" => Route::Ask,
            "/mcp/sandbox" => Route::Sandbox,
            CHART_SCRIPT_PATH => Route::ChartScript,
            _ => {
                let segment = |prefix: &str| {
                    path.strip_prefix(prefix)
                        .filter(|raw| !raw.is_empty() && !raw.contains('/'))
                        .map(str::to_owned)
                };
                if let Some(raw) = segment("/api/sessions/") {
                    Route::Session(raw)
                } else if let Some(raw) = segment(CHAT_STREAM_PREFIX) {
                    Route::ChatStream(raw)
                } else {
                    Route::Other
                }
            }
        }
    }

    /// The methods a route answers itself (`None`: its handler checks the method, and answers
    /// with its own diagnostic). A method outside them is 405 with this `Allow` value.
    pub fn allowed_methods(&self) -> Option<&'static str> {
        match self {
            Route::Page | Route::ChartScript => Some("GET, HEAD"),
            Route::Session(_) => Some("GET"),
            _ => None,
        }
    }

    pub fn allows(&self, method: &str) -> bool {
        self.allowed_methods()
            .is_none_or(|allowed| allowed.split(", ").any(|m| m == method))
    }
}

/// A refusal of the demo routes: a row of the diagnostic registry (`core::diagnostics::demo_routes`)
/// with the headers it needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub status: u16,
    pub code: &'static str,
    pub message: &'static str,
    pub retryable: bool,
    pub headers: Vec<(&'static str, String)>,
}

impl Diagnostic {
    fn of(row: Row) -> Diagnostic {
        Diagnostic {
            status: row.status,
            code: row.code,
            message: row.message,
            retryable: row.retryable,
            headers: Vec::new(),
        }
    }

    fn header(mut self, name: &'static str, value: &str) -> Diagnostic {
        self.headers.push((name, value.to_owned()));
        self
    }

    pub fn body(&self) -> String {
        TurnDiagnostic {
            code: self.code.to_owned(),
            message: self.message.to_owned(),
            retryable: self.retryable,
        }
        .error_body_json(None)
    }

    pub fn method_not_allowed(allow: &'static str) -> Diagnostic {
        let row = match allow {
            "GET" => demo_routes::METHOD_NOT_ALLOWED_GET,
            _ => demo_routes::METHOD_NOT_ALLOWED_GET_HEAD,
        };
        Diagnostic::of(row).header("allow", allow)
    }

    /// A refusal of the chat-stream proxy's, answered by the route before the proxy runs.
    pub fn of_proxy(failure: ProxyFailure) -> Diagnostic {
        let diagnostic = Diagnostic::of(failure.row());
        match failure.allow() {
            Some(allow) => diagnostic.header("allow", allow),
            None => diagnostic,
        }
    }

    pub fn auth_required() -> Diagnostic {
        Diagnostic::of(demo_routes::AUTH_REQUIRED)
            .header("www-authenticate", "Bearer realm=\"turnkeep demo\"")
    }

    pub fn session_id_invalid() -> Diagnostic {
        Diagnostic::of(demo_routes::SESSION_ID_INVALID)
    }

    pub fn not_found() -> Diagnostic {
        Diagnostic::of(demo_routes::NOT_FOUND)
    }

    pub fn session_unreadable() -> Diagnostic {
        Diagnostic::of(demo_routes::SESSION_UNREADABLE)
    }
}

/// Demo auth: `Authorization: Bearer <tenant>` with a SafeId tenant; anything else is the
/// host's own 401 (no storage touched).
pub fn demo_tenant(authorization: Option<&str>) -> Result<&str, Diagnostic> {
    bearer(authorization)
        .filter(|tenant| is_safe_id(tenant))
        .ok_or_else(Diagnostic::auth_required)
}

/// `GET /api/sessions/:sessionId`: the tenant, then the session id (decoded, a SafeId).
pub fn session_view_target(
    authorization: Option<&str>,
    raw_session_id: &str,
) -> Result<(String, String), Diagnostic> {
    let tenant = demo_tenant(authorization)?;
    let session_id = decode_component(raw_session_id)
        .filter(|s| is_safe_id(s))
        .ok_or_else(Diagnostic::session_id_invalid)?;
    Ok((tenant.to_owned(), session_id))
}

/// The name of a session's `ChatSession` object: `<tenant>/<sessionId>` (both SafeIds, which
/// never contain '/', so names cannot collide across tenants).
pub fn chat_session_name(tenant: &str, session_id: &str) -> String {
    format!("{tenant}/{session_id}")
}

/// The demo credentials of a live read on a WebSocket (`streams::sockets`). A browser cannot set
/// `Authorization` on a socket, so without one the tenant the page was rendered for stands in
/// (`page::page_tenant`: its cookie, else the default tenant) — but only when the handshake's
/// `Origin` is the Worker's own: a browser always sends `Origin` with a socket handshake, so
/// another site's page cannot read a tenant's stream with its cookie (cross-site WebSocket
/// hijacking). Returns the `Authorization` value demo auth then reads, or `None` (demo auth
/// answers 401).
pub fn socket_authorization(
    authorization: Option<&str>,
    cookie: Option<&str>,
    origin: Option<&str>,
    own_origin: &str,
) -> Option<String> {
    if let Some(given) = authorization {
        return Some(given.to_owned());
    }
    if origin != Some(own_origin) {
        return None;
    }
    Some(format!("Bearer {}", super::page::page_tenant(cookie)))
}

/// What `/api/chat/stream/:sessionId` does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChatStreamRoute {
    /// A CORS preflight: 204 with the streams preflight headers.
    Preflight,
    Refuse(Diagnostic),
    /// Proxy the read (`createChatStreamProxy`) to the session's own `SessionStream` object.
    /// The Worker reads its own object directly, past the public streams route: the streams
    /// token guards `/v1/stream/*` for servers elsewhere, while this route has already
    /// authenticated the tenant and reads only that tenant's stream, so `npm start`'s and
    /// `wrangler deploy`'s defaults (no secret) serve a live page.
    Proxy(SessionStreamRead),
}

/// A read of one session's stream by the chat-stream route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionStreamRead {
    pub tenant: String,
    pub session_id: String,
    /// The stream's name, `chat/<tenant>/<sessionId>`.
    pub stream: String,
    /// A `GET` of a stream that does not exist yet (no turn has published) creates it, empty,
    /// and reads again: a new session's page then holds one pending live read instead of
    /// polling a 404 every few seconds (each poll waking the object). A `HEAD` only looks.
    pub create_missing: bool,
}

/// Decides the chat-stream route: read-only for browsers (turns write the log: the proxy it
/// mounts has no `writes`, and a writing method is refused with the proxy's own read-only
/// diagnostic before demo auth), demo auth, the session id, then the tenant's stream
/// `chat/<tenant>/<sessionId>`.
pub fn chat_stream_route(
    method: &str,
    authorization: Option<&str>,
    raw_session_id: &str,
) -> ChatStreamRoute {
    if method == "OPTIONS" {
        return ChatStreamRoute::Preflight;
    }
    if let MethodDecision::Refuse(failure) = decide_method(method, Writes::Refused) {
        return ChatStreamRoute::Refuse(Diagnostic::of_proxy(failure));
    }
    let (tenant, session_id) = match session_view_target(authorization, raw_session_id) {
        Ok(target) => target,
        Err(refusal) => return ChatStreamRoute::Refuse(refusal),
    };
    ChatStreamRoute::Proxy(SessionStreamRead {
        stream: chat_stream_name(&tenant, &session_id),
        tenant,
        session_id,
        create_missing: method == "GET",
    })
}
