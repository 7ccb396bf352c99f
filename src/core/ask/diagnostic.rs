//! The one table of Ask failures: HTTP status (before the stream), code, literal message and
//! retryable flag, with AgentsKit's Ask backend codes and messages (wire facts).
//!
//! Before the stream starts a failure is the JSON body `{"error": {"code", "message",
//! "retryable"}}`, exactly AgentsKit's Ask backend diagnostic (its own tests compare the body
//! whole, so turnkeep's additive `version` is not written here). Inside the stream it is the Ask
//! NDJSON event `{"type":"error",...}`, exactly as AgentsKit's strict event schema accepts it.

use serde::Serialize;

use crate::protocol::TurnDiagnostic;

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

/// One row of the table (a row of the diagnostic registry).
pub type AskRow = crate::diagnostics::Row;

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

    /// The mapping to the registry's rows (`core::diagnostics::ask`: AgentsKit's literal texts).
    pub const fn row(self) -> AskRow {
        use crate::diagnostics::ask;
        match self {
            Self::MethodNotAllowed => ask::METHOD_NOT_ALLOWED,
            Self::UnsupportedMediaType => ask::UNSUPPORTED_MEDIA_TYPE,
            Self::TooLarge => ask::TOO_LARGE,
            Self::InvalidJson => ask::INVALID_JSON,
            Self::InvalidPayload => ask::INVALID_PAYLOAD,
            Self::QuestionMissing => ask::QUESTION_MISSING,
            Self::Forbidden => ask::FORBIDDEN,
            Self::RateLimited => ask::RATE_LIMITED,
            Self::Timeout => ask::TIMEOUT,
            Self::RetrievalTimeout => ask::RETRIEVAL_TIMEOUT,
            Self::Cancelled => ask::CANCELLED,
            Self::RetrievalFailed => ask::RETRIEVAL_FAILED,
            Self::NoGroundedSources => ask::NO_GROUNDED_SOURCES,
            Self::AnswerTooLong => ask::ANSWER_TOO_LONG,
            Self::AnswerEmpty => ask::ANSWER_EMPTY,
            Self::PersistenceConflict => ask::PERSISTENCE_CONFLICT,
            Self::Internal => ask::INTERNAL,
            Self::HostIdentityInvalid => ask::HOST_IDENTITY_INVALID,
            Self::PersistenceNotConfigured => ask::PERSISTENCE_NOT_CONFIGURED,
            Self::RetrieverUnavailable => ask::RETRIEVER_UNAVAILABLE,
            Self::InvalidConfig => ask::INVALID_CONFIG,
        }
    }

    pub const fn status(self) -> u16 {
        self.row().status
    }

    /// The versioned diagnostic (`{version: 1, code, message, retryable}`).
    pub fn diagnostic(self) -> TurnDiagnostic {
        self.row().diagnostic()
    }

    /// The pre-stream body `{"error":{"code":...,"message":...,"retryable":...}}` (AgentsKit's
    /// `AskBackendDiagnostic`, key order as its schema writes it).
    pub fn error_body_json(self) -> String {
        #[derive(Serialize)]
        struct Diagnostic {
            code: &'static str,
            message: &'static str,
            retryable: bool,
        }
        #[derive(Serialize)]
        struct Body {
            error: Diagnostic,
        }
        let row = self.row();
        let body = Body {
            error: Diagnostic {
                code: row.code,
                message: row.message,
                retryable: row.retryable,
            },
        };
        serde_json::to_string(&body).unwrap_or_default()
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
    use crate::protocol::is_diagnostic_code;

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
            r#"{"error":{"code":"ASK_RATE_LIMITED","message":"The Ask rate limit was exceeded.","retryable":true}}"#
        );
        assert_eq!(
            AskFailure::PersistenceConflict.error_event_line(),
            "{\"type\":\"error\",\"message\":\"The Ask session changed concurrently.\",\"code\":\"ASK_PERSISTENCE_CONFLICT\",\"retryable\":true}\n"
        );
    }
}
