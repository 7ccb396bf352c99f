//! The one diagnostic registry: every error an HTTP surface answers with — the chat handler,
//! the session view and the other demo Worker routes, the Durable Streams routes, the chat-stream
//! proxy, Ask and the MCP sandbox — is a row here: (surface, HTTP status, code, safe message, retryable).
//!
//! Codes live only in this file (`tests/diagnostics_registry.rs` scans `src/` for code literals
//! elsewhere). Each surface maps its typed errors to rows in one place (`BoundaryError::row`,
//! `AskFailure::row`, `SandboxFailure::row`, `streams::Rejection::row`, `ProxyFailure::row`, the
//! Worker's `routes::Diagnostic`), and every body is the versioned shape
//! `{"error":{"version":1,"code","message","retryable"}}` ([`Row::error_body_json`]).
//!
//! Wire facts kept as they are: the chat rows are AgentsKit's handler table (codes, statuses and
//! literal messages) plus turnkeep's additive codes; the Ask rows are AgentsKit's Ask backend
//! table, where one code covers several statuses (`ASK_INVALID_REQUEST` is 405, 415, 413 and
//! 400); the Durable Streams rows carry the statuses the protocol prescribes, and codes of the
//! form `streams.v1.<what>` (their version is the prefix; `version: 1` is in the body too). A
//! streams rejection may name the broken rule more precisely than its row (e.g. with the limit it
//! broke): [`crate::streams::Rejection`]'s `Display`, never request or internal text.
//! README.md "Diagnostics" lists the table.

use crate::protocol::TurnDiagnostic;

/// Which HTTP surface answers with a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Surface {
    /// `createChatHandler` (`POST /api/chat`) and `toChatResponse`.
    Chat,
    /// `createAskServiceHandler` (`POST /api/ask`).
    Ask,
    /// `createMcpSandboxHandler` (`GET /mcp/sandbox`).
    Sandbox,
    /// The demo Worker's own routes: the session view, the page, unknown paths.
    Worker,
    /// The Durable Streams server (`/v1/stream/<name>`) and the Worker's chat-stream route.
    Streams,
    /// `createChatStreamProxy` (the demo's `GET /api/chat/stream/:sessionId`): its own failures
    /// and what an upstream error becomes (an upstream body never reaches the client).
    Proxy,
}

impl Surface {
    pub const fn name(self) -> &'static str {
        match self {
            Surface::Chat => "chat",
            Surface::Ask => "ask",
            Surface::Sandbox => "sandbox",
            Surface::Worker => "worker",
            Surface::Streams => "streams",
            Surface::Proxy => "proxy",
        }
    }
}

/// One row of the registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Row {
    pub surface: Surface,
    /// The HTTP status when the failure is answered before a response started.
    pub status: u16,
    pub code: &'static str,
    /// Safe to show to anyone: names what went wrong, never how (no cause, no request text).
    pub message: &'static str,
    pub retryable: bool,
}

const fn row(
    surface: Surface,
    status: u16,
    code: &'static str,
    message: &'static str,
    retryable: bool,
) -> Row {
    Row {
        surface,
        status,
        code,
        message,
        retryable,
    }
}

impl Row {
    /// The versioned diagnostic `{version: 1, code, message, retryable}`.
    pub fn diagnostic(&self) -> TurnDiagnostic {
        self.diagnostic_with(self.message)
    }

    /// The same diagnostic with a more precise safe message (streams rejections).
    pub fn diagnostic_with(&self, message: &str) -> TurnDiagnostic {
        TurnDiagnostic {
            code: self.code.to_owned(),
            message: message.to_owned(),
            retryable: self.retryable,
        }
    }

    /// The pre-stream body `{"error":{"version":1,"code","message","retryable"}}`.
    pub fn error_body_json(&self) -> String {
        self.diagnostic().error_body_json(None)
    }
}

use Surface::{Ask, Chat, Proxy, Sandbox, Streams, Worker};

/// The chat handler (AgentsKit's server table; turnkeep's additions are marked `+`).
#[rustfmt::skip]
pub mod chat {
    use super::*;
    pub const METHOD_NOT_ALLOWED: Row = row(Chat, 405, "REQUEST_METHOD_NOT_ALLOWED", "Only POST is supported.", false);
    pub(crate) const UNSUPPORTED_MEDIA_TYPE: Row = row(Chat, 415, "REQUEST_UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/json.", false);
    pub(crate) const TOO_LARGE: Row = row(Chat, 413, "REQUEST_TOO_LARGE", "Request body is too large.", false);
    pub(crate) const INVALID_JSON: Row = row(Chat, 400, "REQUEST_INVALID_JSON", "Request body is not valid JSON.", false);
    pub(crate) const INVALID_EVENT: Row = row(Chat, 400, "REQUEST_INVALID_EVENT", "Request body must be a valid turn submission.", false);
    pub const SESSION_BUSY: Row = row(Chat, 409, "SESSION_BUSY", "Another turn is active for this session.", true);
    pub(crate) const SESSION_CONFLICT: Row = row(Chat, 409, "SESSION_CONFLICT", "Another turn is active for this session.", true);
    pub(crate) const TIMEOUT: Row = row(Chat, 408, "SERVER_TIMEOUT", "The chat request timed out.", true);
    pub(crate) const CANCELLED: Row = row(Chat, 499, "REQUEST_CANCELLED", "The chat request was cancelled.", true);
    pub const INTERNAL: Row = row(Chat, 500, "SERVER_INTERNAL", "The chat request failed.", true);
    pub const TURN_FAILED: Row = row(Chat, 500, "CHAT_TURN_FAILED", "The chat turn failed.", true);
    /// + (AgentsKit's code, turnkeep's message)
    pub const INVALID_CONFIG: Row = row(Chat, 500, "SERVER_INVALID_CONFIG", "The chat handler configuration is invalid.", false);
    /// +
    pub(crate) const TURN_REPLAYED: Row = row(Chat, 409, "TURN_REPLAYED", "This turn has already been processed.", false);
    /// +
    pub(crate) const TURN_NOT_RUNNING: Row = row(Chat, 404, "TURN_NOT_RUNNING", "No such turn is running in this session.", false);
    /// +
    pub(crate) const STOP_UNAVAILABLE: Row = row(Chat, 409, "TURN_STOP_UNAVAILABLE", "Stopping a turn from another request needs a session log.", false);
    /// + (`sendPolicy: 'queue'`)
    pub(crate) const SEND_QUEUE_FULL: Row = row(Chat, 409, "SESSION_QUEUE_FULL", "Too many messages are waiting in this session.", true);
    /// + (`sendPolicy: 'queue'` / `'latest'`)
    pub(crate) const SEND_QUEUE_TIMEOUT: Row = row(Chat, 409, "SESSION_QUEUE_TIMEOUT", "The message waited too long for the turn before it.", true);
    /// + (`sendPolicy: 'latest'`)
    pub(crate) const TURN_SUPERSEDED: Row = row(Chat, 409, "TURN_SUPERSEDED", "A newer message replaced this one before it ran.", false);
    /// + (`toChatResponse`)
    pub const FORBIDDEN: Row = row(Chat, 403, "SESSION_FORBIDDEN", "This session is not yours to write.", false);
    /// + (`toChatResponse`)
    pub(crate) const INVALID_MESSAGES: Row = row(Chat, 400, "REQUEST_INVALID_MESSAGES", "The new messages must be chat messages.", false);
    /// +
    pub(crate) const CONFIRMATION_NOT_FOUND: Row = row(Chat, 404, "CONFIRMATION_NOT_FOUND", "No such confirmation in this session.", false);
    /// +
    pub(crate) const CONFIRMATION_UNAVAILABLE: Row = row(Chat, 409, "CONFIRMATION_UNAVAILABLE", "The tool call no longer waits for this confirmation.", false);
    /// + (AgentsKit answers `SERVER_INTERNAL`)
    pub(crate) const SESSION_INCOMPATIBLE: Row = row(Chat, 409, "SESSION_INCOMPATIBLE_DEFINITION", "The stored session cannot be resumed by this chat definition.", false);
    /// + (`createUIMessageChatHandler`)
    pub(crate) const INVALID_UI_REQUEST: Row = row(Chat, 400, "REQUEST_INVALID_UI_MESSAGES", "Request body must be an AI SDK chat request ending in a user message or answered approvals.", false);
    /// + (`createUIMessageChatHandler`, an AG-UI `RunAgentInput`)
    pub(crate) const INVALID_RUN_INPUT: Row = row(Chat, 400, "REQUEST_INVALID_RUN_INPUT", "Request body must be an AG-UI RunAgentInput ending in a user message or carrying resume entries.", false);
    /// + (a `RunAgentInput` where no session log is configured: its run is followed there)
    pub(crate) const RUN_NEEDS_LOG: Row = row(Chat, 501, "SERVER_SESSION_LOG_REQUIRED", "This chat has no session log to follow a run in.", false);
    /// + (`POST {api}/:id/messages`, the Durable Streams TanStack transport's body)
    /// + (the handler's `rateLimit` said no; `retry-after` when it said when)
    pub(crate) const RATE_LIMITED: Row = row(Chat, 429, "CHAT_RATE_LIMITED", "Too many turns for now; retry later.", true);
    pub(crate) const INVALID_TANSTACK_SEND: Row = row(Chat, 400, "REQUEST_INVALID_TANSTACK_SEND", "Request body must be { messages, data } ending in a user message or in an answer with approvals.", false);
}

/// The Ask service (AgentsKit's Ask backend table, messages literal).
#[rustfmt::skip]
pub mod ask {
    use super::*;
    const INVALID: &str = "ASK_INVALID_REQUEST";
    const INTERNAL_CODE: &str = "ASK_INTERNAL";
    pub const METHOD_NOT_ALLOWED: Row = row(Ask, 405, INVALID, "Only POST is supported.", false);
    pub(crate) const UNSUPPORTED_MEDIA_TYPE: Row = row(Ask, 415, INVALID, "Content-Type must be application/json.", false);
    pub(crate) const TOO_LARGE: Row = row(Ask, 413, INVALID, "Request body is too large.", false);
    pub(crate) const INVALID_JSON: Row = row(Ask, 400, INVALID, "Request body is not valid JSON.", false);
    pub(crate) const INVALID_PAYLOAD: Row = row(Ask, 400, INVALID, "The Ask request payload is invalid.", false);
    pub(crate) const QUESTION_MISSING: Row = row(Ask, 400, INVALID, "A user question is required.", false);
    pub const FORBIDDEN: Row = row(Ask, 403, "ASK_FORBIDDEN", "The requested assistant or corpus is not authorized for this site.", false);
    pub(crate) const RATE_LIMITED: Row = row(Ask, 429, "ASK_RATE_LIMITED", "The Ask rate limit was exceeded.", true);
    pub(crate) const TIMEOUT: Row = row(Ask, 408, "ASK_TIMEOUT", "The Ask request timed out.", true);
    pub(crate) const RETRIEVAL_TIMEOUT: Row = row(Ask, 408, "ASK_TIMEOUT", "Grounded retrieval timed out.", true);
    pub(crate) const CANCELLED: Row = row(Ask, 499, "ASK_CANCELLED", "The Ask request was cancelled.", true);
    pub(crate) const RETRIEVAL_FAILED: Row = row(Ask, 502, "ASK_RETRIEVAL_FAILED", "Grounded retrieval is temporarily unavailable.", true);
    pub(crate) const NO_GROUNDED_SOURCES: Row = row(Ask, 422, "ASK_NO_GROUNDED_SOURCES", "No grounded sources were found for this question.", false);
    pub(crate) const ANSWER_TOO_LONG: Row = row(Ask, 502, "ASK_GENERATION_FAILED", "The grounded answer exceeded its safe limit.", true);
    pub(crate) const ANSWER_EMPTY: Row = row(Ask, 502, "ASK_GENERATION_FAILED", "The grounded answer was empty.", true);
    pub(crate) const PERSISTENCE_CONFLICT: Row = row(Ask, 409, "ASK_PERSISTENCE_CONFLICT", "The Ask session changed concurrently.", true);
    pub const INTERNAL: Row = row(Ask, 500, INTERNAL_CODE, "The Ask request failed.", true);
    pub(crate) const HOST_IDENTITY_INVALID: Row = row(Ask, 500, INTERNAL_CODE, "The Ask host identity is invalid.", false);
    pub(crate) const PERSISTENCE_NOT_CONFIGURED: Row = row(Ask, 500, INTERNAL_CODE, "Required Ask persistence is not configured.", false);
    pub(crate) const RETRIEVER_UNAVAILABLE: Row = row(Ask, 500, INTERNAL_CODE, "The configured Ask retriever is unavailable.", false);
    pub const INVALID_CONFIG: Row = row(Ask, 500, INTERNAL_CODE, "The Ask handler configuration is invalid.", false);
}

/// The MCP ui:// sandbox (none echoes the request's values back).
#[rustfmt::skip]
pub mod sandbox {
    use super::*;
    pub const METHOD_NOT_ALLOWED: Row = row(Sandbox, 405, "REQUEST_METHOD_NOT_ALLOWED", "Only GET and HEAD are supported.", false);
    pub(crate) const URI_INVALID: Row = row(Sandbox, 400, "SANDBOX_URI_INVALID", "Expected a ui:// resource URI in ?uri=.", false);
    pub const NOT_FOUND: Row = row(Sandbox, 404, "SANDBOX_RESOURCE_NOT_FOUND", "No ui:// resource is registered at this URI.", false);
    pub(crate) const RESOURCE_INVALID: Row = row(Sandbox, 500, "SANDBOX_RESOURCE_INVALID", "The ui:// resource could not be served.", false);
    pub(crate) const CANCELLED: Row = row(Sandbox, 499, "REQUEST_CANCELLED", "The sandbox request was cancelled.", true);
    pub const INTERNAL: Row = row(Sandbox, 500, "SANDBOX_INTERNAL", "The sandbox request failed.", true);
    /// A bad option to `createMcpSandboxHandler` (thrown at construction, never answered).
    pub const INVALID_CONFIG: Row = row(Sandbox, 500, "SANDBOX_INVALID_CONFIG", "The sandbox handler configuration is invalid.", false);
}

/// The demo Worker's own routes (`cloudflare::routes`).
#[rustfmt::skip]
pub mod demo_routes {
    use super::*;
    pub const METHOD_NOT_ALLOWED_GET: Row = row(Worker, 405, "REQUEST_METHOD_NOT_ALLOWED", "Only GET is supported.", false);
    pub const METHOD_NOT_ALLOWED_GET_HEAD: Row = row(Worker, 405, "REQUEST_METHOD_NOT_ALLOWED", "Only GET, HEAD is supported.", false);
    pub const AUTH_REQUIRED: Row = row(Worker, 401, "AUTH_REQUIRED", "Send Authorization: Bearer <tenant>, a SafeId.", false);
    pub const SESSION_ID_INVALID: Row = row(Worker, 400, "REQUEST_INVALID_SESSION_ID", "The session id must be a SafeId.", false);
    pub const NOT_FOUND: Row = row(Worker, 404, "NOT_FOUND", "No such route.", false);
    pub const SESSION_UNREADABLE: Row = row(Worker, 500, "SERVER_INTERNAL", "The session could not be read.", true);
}

/// The chat-stream proxy (`createChatStreamProxy`).
#[rustfmt::skip]
pub mod proxy {
    use super::*;
    pub const METHOD_NOT_ALLOWED: Row = row(Proxy, 405, "REQUEST_METHOD_NOT_ALLOWED", "Only GET, HEAD and POST are supported.", false);
    pub const INTERNAL: Row = row(Proxy, 500, "STREAM_PROXY_INTERNAL", "The stream request could not be served.", true);
    pub const FORBIDDEN: Row = row(Proxy, 403, "STREAM_FORBIDDEN", "This request may not read this stream.", false);
    /// A writing method on a proxy without `writes` (the default).
    pub const READ_ONLY: Row = row(Proxy, 405, "STREAM_READ_ONLY", "This stream proxy serves reads only: GET and HEAD.", false);
    /// An append `writes.authorize` did not allow.
    pub const WRITE_FORBIDDEN: Row = row(Proxy, 403, "STREAM_WRITE_FORBIDDEN", "This request may not write to this stream.", false);
    pub(crate) const CANCELLED: Row = row(Proxy, 499, "REQUEST_CANCELLED", "The stream request was cancelled.", true);
    pub(crate) const UNREACHABLE: Row = row(Proxy, 502, "STREAM_UPSTREAM_UNREACHABLE", "The stream server could not be reached.", true);
    pub(crate) const BAD_REQUEST: Row = row(Proxy, 400, "STREAM_REQUEST_INVALID", "The stream server refused the request as invalid.", false);
    pub const NOT_FOUND: Row = row(Proxy, 404, "STREAM_NOT_FOUND", "The stream does not exist (yet).", true);
    pub const CONFLICT: Row = row(Proxy, 409, "STREAM_CONFLICT", "The stream refused the request in its current state.", false);
    pub(crate) const GONE: Row = row(Proxy, 410, "STREAM_GONE", "The stream is gone.", false);
    pub(crate) const TOO_LARGE: Row = row(Proxy, 413, "STREAM_TOO_LARGE", "The request is larger than the stream accepts.", false);
    pub(crate) const BUSY: Row = row(Proxy, 429, "STREAM_BUSY", "The stream server is busy; try again later.", true);
    pub(crate) const STALE_EPOCH: Row = row(Proxy, 403, "STREAM_PRODUCER_FENCED", "A newer writer owns this producer.", false);
    pub(crate) const UPSTREAM_AUTH: Row = row(Proxy, 502, "STREAM_UPSTREAM_REFUSED", "The stream server refused this server's credentials.", false);
    pub(crate) const UPSTREAM_REFUSED: Row = row(Proxy, 502, "STREAM_UPSTREAM_REFUSED", "The stream server refused the request.", false);
    pub(crate) const UPSTREAM_FAILED: Row = row(Proxy, 502, "STREAM_UPSTREAM_FAILED", "The stream server failed; try again later.", true);
    /// A bad option to `createChatStreamProxy` (thrown at construction, never answered).
    pub const INVALID_CONFIG: Row = row(Proxy, 500, "STREAM_PROXY_INVALID_CONFIG", "The chat-stream proxy configuration is invalid.", false);
}

/// The Durable Streams server and the chat-stream route (statuses: the protocol's).
#[rustfmt::skip]
pub mod streams {
    use super::*;
    // The Worker's side of the routes.
    pub const UNAUTHORIZED: Row = row(Streams, 401, "streams.v1.unauthorized", "send Authorization: Bearer <streams token>", false);
    pub const NAME_INVALID: Row = row(Streams, 400, "streams.v1.name_invalid", "the stream name is empty, too long or badly encoded", false);
    pub const METHOD_NOT_ALLOWED: Row = row(Streams, 405, "streams.v1.method_not_allowed", "method not allowed", false);
    pub const INTERNAL: Row = row(Streams, 500, "streams.v1.internal", "the stream could not be served", true);
    // The stream itself.
    pub const STREAM_NOT_FOUND: Row = row(Streams, 404, "streams.v1.stream_not_found", "no stream exists at this path", false);
    pub const STREAM_GONE: Row = row(Streams, 410, "streams.v1.stream_gone", "this stream was deleted; it stays reserved while forks of it exist", false);
    pub const STREAM_CLOSED: Row = row(Streams, 409, "streams.v1.stream_closed", "the stream is closed", false);
    pub(crate) const STREAM_EXISTS: Row = row(Streams, 409, "streams.v1.stream_exists", "a stream exists at this path with another configuration", false);
    pub(crate) const STREAM_FULL: Row = row(Streams, 413, "streams.v1.stream_full", "the stream holds as many bytes as it may", false);
    pub const APPEND_TOO_LARGE: Row = row(Streams, 413, "streams.v1.append_too_large", "the append is larger than the protocol allows", false);
    pub(crate) const EMPTY_APPEND: Row = row(Streams, 400, "streams.v1.empty_append", "an append must carry data or close the stream", false);
    pub(crate) const CONTENT_TYPE_MISSING: Row = row(Streams, 400, "streams.v1.content_type_missing", "Content-Type is required", false);
    pub(crate) const CONTENT_TYPE_MISMATCH: Row = row(Streams, 409, "streams.v1.content_type_mismatch", "Content-Type does not match the stream's", false);
    pub(crate) const JSON_INVALID: Row = row(Streams, 400, "streams.v1.json_invalid", "the body is not valid JSON", false);
    pub(crate) const JSON_EMPTY_ARRAY: Row = row(Streams, 400, "streams.v1.json_empty_array", "an append may not be an empty JSON array", false);
    pub(crate) const STREAM_SEQ_TOO_LONG: Row = row(Streams, 400, "streams.v1.stream_seq_too_long", "Stream-Seq is too long", false);
    pub(crate) const STREAM_SEQ_REGRESSION: Row = row(Streams, 409, "streams.v1.stream_seq_regression", "Stream-Seq must be greater than the last appended Stream-Seq", false);
    pub(crate) const TTL_INVALID: Row = row(Streams, 400, "streams.v1.ttl_invalid", "Stream-TTL is invalid", false);
    pub(crate) const EXPIRES_AT_INVALID: Row = row(Streams, 400, "streams.v1.expires_at_invalid", "Stream-Expires-At is invalid", false);
    pub(crate) const TTL_AND_EXPIRES_AT: Row = row(Streams, 400, "streams.v1.ttl_and_expires_at", "Stream-TTL and Stream-Expires-At exclude each other", false);
    // Offsets and reads.
    pub(crate) const OFFSET_MALFORMED: Row = row(Streams, 400, "streams.v1.offset_malformed", "the offset is malformed", false);
    pub(crate) const OFFSET_EMPTY: Row = row(Streams, 400, "streams.v1.offset_empty", "the offset is empty", false);
    pub(crate) const OFFSET_REPEATED: Row = row(Streams, 400, "streams.v1.offset_repeated", "the offset is given more than once", false);
    pub(crate) const OFFSET_SENTINEL_NOT_ALLOWED: Row = row(Streams, 400, "streams.v1.offset_sentinel_not_allowed", "this offset sentinel is not allowed here", false);
    pub(crate) const OFFSET_BEYOND_TAIL: Row = row(Streams, 400, "streams.v1.offset_beyond_tail", "the offset is beyond the stream's tail", false);
    pub(crate) const OFFSET_EXHAUSTED: Row = row(Streams, 413, "streams.v1.offset_exhausted", "the stream's offsets are exhausted", false);
    pub(crate) const OFFSET_REQUIRED: Row = row(Streams, 400, "streams.v1.offset_required", "this read needs an offset", false);
    // Forks.
    pub(crate) const FORK_SUB_OFFSET_INVALID: Row = row(Streams, 400, "streams.v1.fork_sub_offset_invalid", "Stream-Fork-Sub-Offset is invalid", false);
    pub const FORK_SUB_OFFSET_BEYOND: Row = row(Streams, 400, "streams.v1.fork_sub_offset_beyond", "Stream-Fork-Sub-Offset goes past the append that starts at the fork offset", false);
    pub(crate) const FORK_OFFSET_WITHOUT_SOURCE: Row = row(Streams, 400, "streams.v1.fork_offset_without_source", "a fork offset needs Stream-Forked-From", false);
    pub(crate) const FORK_SOURCE_MISSING: Row = row(Streams, 404, "streams.v1.fork_source_missing", "the fork source does not exist", false);
    pub(crate) const FORK_SOURCE_DELETED: Row = row(Streams, 409, "streams.v1.fork_source_deleted", "the fork source was deleted", false);
    pub(crate) const FORK_TOO_DEEP: Row = row(Streams, 400, "streams.v1.fork_too_deep", "the fork source is itself a fork as many levels deep as a stream may be", false);
    // Producers.
    pub(crate) const PRODUCER_HEADERS_PARTIAL: Row = row(Streams, 400, "streams.v1.producer_headers_partial", "Producer-Id, Producer-Epoch and Producer-Seq must be given together or not at all", false);
    pub(crate) const PRODUCER_ID_EMPTY: Row = row(Streams, 400, "streams.v1.producer_id_empty", "Producer-Id must not be empty", false);
    pub(crate) const PRODUCER_ID_TOO_LONG: Row = row(Streams, 400, "streams.v1.producer_id_too_long", "Producer-Id is too long", false);
    pub(crate) const PRODUCER_EPOCH_INVALID: Row = row(Streams, 400, "streams.v1.producer_epoch_invalid", "Producer-Epoch must be a non-negative integer no larger than 2^53-1", false);
    pub(crate) const PRODUCER_SEQ_INVALID: Row = row(Streams, 400, "streams.v1.producer_seq_invalid", "Producer-Seq must be a non-negative integer no larger than 2^53-1", false);
    pub(crate) const PRODUCER_SEQ_COUNT_INVALID: Row = row(Streams, 400, "streams.v1.producer_seq_count_invalid", "Producer-Seq-Count must be the count of the append's JSON items (1 to 1000), with the other producer headers", false);
    pub(crate) const PRODUCER_TABLE_FULL: Row = row(Streams, 429, "streams.v1.producer_table_full", "this stream already tracks as many producers as it can", true);
    pub(crate) const PRODUCER_STALE_EPOCH: Row = row(Streams, 403, "streams.v1.producer_stale_epoch", "a newer producer epoch has written to this stream", false);
    pub(crate) const PRODUCER_NEW_EPOCH_SEQ_NOT_ZERO: Row = row(Streams, 400, "streams.v1.producer_new_epoch_seq_not_zero", "a new producer epoch must start at Producer-Seq 0", false);
    pub(crate) const PRODUCER_SEQUENCE_GAP: Row = row(Streams, 409, "streams.v1.producer_sequence_gap", "Producer-Seq skips ahead of the next expected sequence", true);
    // Waiting readers.
    pub const READERS_BUSY: Row = row(Streams, 429, "streams.v1.readers_busy", "this stream has as many waiting readers as it serves; retry later", true);
    // Slow bodies.
    pub const BODY_TIMEOUT: Row = row(Streams, 408, "streams.v1.body_timeout", "the request body did not arrive in time", true);
    // Waiting creates and deletes.
    pub const WRITERS_BUSY: Row = row(Streams, 429, "streams.v1.writers_busy", "this stream has as many waiting creates and deletes as it serves; retry later", true);
}

/// Every row, grouped by surface. `tests/diagnostics_registry.rs` checks that it holds every
/// row each typed error maps to, that no row is there twice and that codes mean one thing.
#[rustfmt::skip]
pub const ALL: &[Row] = &[
    chat::METHOD_NOT_ALLOWED, chat::UNSUPPORTED_MEDIA_TYPE, chat::TOO_LARGE, chat::INVALID_JSON,
    chat::INVALID_EVENT, chat::SESSION_BUSY, chat::SESSION_CONFLICT, chat::TIMEOUT, chat::CANCELLED,
    chat::INTERNAL, chat::TURN_FAILED, chat::INVALID_CONFIG, chat::TURN_REPLAYED,
    chat::TURN_NOT_RUNNING, chat::STOP_UNAVAILABLE, chat::FORBIDDEN, chat::INVALID_MESSAGES,
    chat::CONFIRMATION_NOT_FOUND, chat::CONFIRMATION_UNAVAILABLE, chat::SESSION_INCOMPATIBLE, chat::INVALID_UI_REQUEST,
    chat::INVALID_RUN_INPUT, chat::RUN_NEEDS_LOG, chat::INVALID_TANSTACK_SEND, chat::RATE_LIMITED,
    chat::SEND_QUEUE_FULL, chat::SEND_QUEUE_TIMEOUT, chat::TURN_SUPERSEDED,
    ask::METHOD_NOT_ALLOWED, ask::UNSUPPORTED_MEDIA_TYPE, ask::TOO_LARGE, ask::INVALID_JSON,
    ask::INVALID_PAYLOAD, ask::QUESTION_MISSING, ask::FORBIDDEN, ask::RATE_LIMITED, ask::TIMEOUT,
    ask::RETRIEVAL_TIMEOUT, ask::CANCELLED, ask::RETRIEVAL_FAILED, ask::NO_GROUNDED_SOURCES,
    ask::ANSWER_TOO_LONG, ask::ANSWER_EMPTY, ask::PERSISTENCE_CONFLICT, ask::INTERNAL,
    ask::HOST_IDENTITY_INVALID, ask::PERSISTENCE_NOT_CONFIGURED, ask::RETRIEVER_UNAVAILABLE,
    ask::INVALID_CONFIG,
    sandbox::METHOD_NOT_ALLOWED, sandbox::URI_INVALID, sandbox::NOT_FOUND,
    sandbox::RESOURCE_INVALID, sandbox::CANCELLED, sandbox::INTERNAL, sandbox::INVALID_CONFIG,
    demo_routes::METHOD_NOT_ALLOWED_GET, demo_routes::METHOD_NOT_ALLOWED_GET_HEAD, demo_routes::AUTH_REQUIRED,
    demo_routes::SESSION_ID_INVALID, demo_routes::NOT_FOUND, demo_routes::SESSION_UNREADABLE,
    proxy::METHOD_NOT_ALLOWED, proxy::READ_ONLY, proxy::INTERNAL, proxy::FORBIDDEN, proxy::WRITE_FORBIDDEN, proxy::CANCELLED,
    proxy::UNREACHABLE, proxy::BAD_REQUEST, proxy::NOT_FOUND, proxy::CONFLICT, proxy::GONE,
    proxy::TOO_LARGE, proxy::BUSY, proxy::STALE_EPOCH, proxy::UPSTREAM_AUTH,
    proxy::UPSTREAM_REFUSED, proxy::UPSTREAM_FAILED, proxy::INVALID_CONFIG,
    streams::UNAUTHORIZED, streams::NAME_INVALID, streams::METHOD_NOT_ALLOWED, streams::INTERNAL, streams::STREAM_NOT_FOUND, streams::STREAM_GONE,
    streams::STREAM_CLOSED, streams::STREAM_EXISTS, streams::STREAM_FULL,
    streams::APPEND_TOO_LARGE, streams::EMPTY_APPEND, streams::CONTENT_TYPE_MISSING,
    streams::CONTENT_TYPE_MISMATCH, streams::JSON_INVALID, streams::JSON_EMPTY_ARRAY,
    streams::STREAM_SEQ_TOO_LONG, streams::STREAM_SEQ_REGRESSION, streams::TTL_INVALID,
    streams::EXPIRES_AT_INVALID, streams::TTL_AND_EXPIRES_AT, streams::OFFSET_MALFORMED,
    streams::OFFSET_EMPTY, streams::OFFSET_REPEATED, streams::OFFSET_SENTINEL_NOT_ALLOWED,
    streams::OFFSET_BEYOND_TAIL, streams::OFFSET_EXHAUSTED, streams::OFFSET_REQUIRED,
    streams::FORK_SUB_OFFSET_INVALID, streams::FORK_SUB_OFFSET_BEYOND,
    streams::FORK_OFFSET_WITHOUT_SOURCE, streams::FORK_SOURCE_MISSING,
    streams::FORK_SOURCE_DELETED, streams::FORK_TOO_DEEP,
    streams::PRODUCER_HEADERS_PARTIAL, streams::PRODUCER_ID_EMPTY, streams::PRODUCER_ID_TOO_LONG,
    streams::PRODUCER_EPOCH_INVALID, streams::PRODUCER_SEQ_INVALID,
    streams::PRODUCER_SEQ_COUNT_INVALID, streams::PRODUCER_TABLE_FULL,
    streams::PRODUCER_STALE_EPOCH, streams::PRODUCER_NEW_EPOCH_SEQ_NOT_ZERO,
    streams::PRODUCER_SEQUENCE_GAP, streams::READERS_BUSY, streams::WRITERS_BUSY,
    streams::BODY_TIMEOUT,
];

/// The row of `code` on `surface` (the first, for Ask codes that cover several statuses).
pub fn find(surface: Surface, code: &str) -> Option<&'static Row> {
    ALL.iter().find(|r| r.surface == surface && r.code == code)
}

/// The table as Markdown (README.md "Diagnostics" holds this text; a test keeps them equal).
pub fn markdown_table() -> String {
    let mut out =
        String::from("| surface | status | code | message | retryable |\n|---|---|---|---|---|\n");
    for r in ALL {
        out.push_str(&format!(
            "| {} | {} | `{}` | {} | {} |\n",
            r.surface.name(),
            r.status,
            r.code,
            r.message.replace('|', "\\|"),
            r.retryable
        ));
    }
    out
}
