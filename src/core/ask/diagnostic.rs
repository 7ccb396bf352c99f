//! The one table of Ask failures: HTTP status (before the stream), code, literal message and
//! retryable flag, with AgentsKit's Ask backend codes and messages (wire facts).
//!
//! Before the stream starts a failure is the JSON body `{"error": {...}}`, versioned like every
//! turnkeep diagnostic (`version: 1` is an additive field; AgentsKit's clients read only the
//! status). Inside the stream it is the Ask NDJSON event `{"type":"error",...}`, exactly as
//! AgentsKit's strict event schema accepts it (no extra field there).

use serde::Serialize;

use crate::core::protocol::TurnDiagnostic;

/// Every way an Ask request can fail. One variant per (status, code, message) row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AskFailure {
    MethodNotAllowed,
    UnsupportedMediaType,
    TooLarge,
    InvalidJson,
    InvalidPayload,
    QuestionMissing,
    Forbidden,
    RateLimited,
    Timeout,
    RetrievalTimeout,
    Cancelled,
    RetrievalFailed,
    NoGroundedSources,
    AnswerTooLong,
    AnswerEmpty,
    PersistenceConflict,
    Internal,
    HostIdentityInvalid,
    PersistenceNotConfigured,
    RetrieverUnavailable,
    InvalidConfig,
}

/// One row of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AskRow {
    pub status: u16,
    pub code: &'static str,
    pub message: &'static str,
    pub retryable: bool,
}

impl AskFailure {
    pub const ALL: [AskFailure; 21] = [
        Self::MethodNotAllowed,
        Self::UnsupportedMediaType,
        Self::TooLarge,
        Self::InvalidJson,
        Self::InvalidPayload,
        Self::QuestionMissing,
        Self::Forbidden,
        Self::RateLimited,
        Self::Timeout,
        Self::RetrievalTimeout,
        Self::Cancelled,
        Self::RetrievalFailed,
        Self::NoGroundedSources,
        Self::AnswerTooLong,
        Self::AnswerEmpty,
        Self::PersistenceConflict,
        Self::Internal,
        Self::HostIdentityInvalid,
        Self::PersistenceNotConfigured,
        Self::RetrieverUnavailable,
        Self::InvalidConfig,
    ];

    /// The table. Every message is AgentsKit's literal text.
    #[rustfmt::skip]
    pub const fn row(self) -> AskRow {
        const INVALID: &str = "ASK_INVALID_REQUEST";
        const INTERNAL: &str = "ASK_INTERNAL";
        let (status, code, message, retryable) = match self {
            Self::MethodNotAllowed => (405, INVALID, "Only POST is supported.", false),
            Self::UnsupportedMediaType => (415, INVALID, "Content-Type must be application/json.", false),
            Self::TooLarge => (413, INVALID, "Request body is too large.", false),
            Self::InvalidJson => (400, INVALID, "Request body is not valid JSON.", false),
            Self::InvalidPayload => (400, INVALID, "The Ask request payload is invalid.", false),
            Self::QuestionMissing => (400, INVALID, "A user question is required.", false),
            Self::Forbidden => (403, "ASK_FORBIDDEN", "The requested assistant or corpus is not authorized for this site.", false),
            Self::RateLimited => (429, "ASK_RATE_LIMITED", "The Ask rate limit was exceeded.", true),
            Self::Timeout => (408, "ASK_TIMEOUT", "The Ask request timed out.", true),
            Self::RetrievalTimeout => (408, "ASK_TIMEOUT", "Grounded retrieval timed out.", true),
            Self::Cancelled => (499, "ASK_CANCELLED", "The Ask request was cancelled.", true),
            Self::RetrievalFailed => (502, "ASK_RETRIEVAL_FAILED", "Grounded retrieval is temporarily unavailable.", true),
            Self::NoGroundedSources => (422, "ASK_NO_GROUNDED_SOURCES", "No grounded sources were found for this question.", false),
            Self::AnswerTooLong => (502, "ASK_GENERATION_FAILED", "The grounded answer exceeded its safe limit.", true),
            Self::AnswerEmpty => (502, "ASK_GENERATION_FAILED", "The grounded answer was empty.", true),
            Self::PersistenceConflict => (409, "ASK_PERSISTENCE_CONFLICT", "The Ask session changed concurrently.", true),
            Self::Internal => (500, INTERNAL, "The Ask request failed.", true),
            Self::HostIdentityInvalid => (500, INTERNAL, "The Ask host identity is invalid.", false),
            Self::PersistenceNotConfigured => (500, INTERNAL, "Required Ask persistence is not configured.", false),
            Self::RetrieverUnavailable => (500, INTERNAL, "The configured Ask retriever is unavailable.", false),
            Self::InvalidConfig => (500, INTERNAL, "The Ask handler configuration is invalid.", false),
        };
        AskRow { status, code, message, retryable }
    }

    pub const fn status(self) -> u16 {
        self.row().status
    }

    /// The versioned diagnostic (`{version: 1, code, message, retryable}`).
    pub fn diagnostic(self) -> TurnDiagnostic {
        let row = self.row();
        TurnDiagnostic {
            code: row.code.to_owned(),
            message: row.message.to_owned(),
            retryable: row.retryable,
        }
    }

    /// The pre-stream body `{"error":{"version":1,...}}`.
    pub fn error_body_json(self) -> String {
        self.diagnostic().error_body_json(None)
    }

    /// The in-stream NDJSON line `{"type":"error","message","code","retryable"}\n`.
    pub fn error_event_line(self) -> String {
        #[derive(Serialize)]
        struct ErrorEvent {
            #[serde(rename = "type")]
            kind: &'static str,
            message: &'static str,
            code: &'static str,
            retryable: bool,
        }
        let row = self.row();
        super::events::line(&ErrorEvent {
            kind: "error",
            message: row.message,
            code: row.code,
            retryable: row.retryable,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::protocol::is_diagnostic_code;

    #[test]
    fn rows_are_valid_and_distinct() {
        let mut seen = std::collections::BTreeSet::new();
        for f in AskFailure::ALL {
            let row = f.row();
            assert!(
                is_diagnostic_code(row.code) && row.code.starts_with("ASK_"),
                "{f:?}"
            );
            assert!(!row.message.is_empty());
            assert!(
                seen.insert((row.status, row.code, row.message)),
                "duplicate row {f:?}"
            );
        }
    }

    #[test]
    fn bodies() {
        assert_eq!(
            AskFailure::RateLimited.error_body_json(),
            r#"{"error":{"version":1,"code":"ASK_RATE_LIMITED","message":"The Ask rate limit was exceeded.","retryable":true}}"#
        );
        assert_eq!(
            AskFailure::PersistenceConflict.error_event_line(),
            "{\"type\":\"error\",\"message\":\"The Ask session changed concurrently.\",\"code\":\"ASK_PERSISTENCE_CONFLICT\",\"retryable\":true}\n"
        );
    }
}
