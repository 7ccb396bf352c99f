//! Why readers of a live connection end with an error: the one table (code, literal message,
//! retryable), as versioned diagnostics. A refused read also says the HTTP status it got
//! (additive field `status`); nothing else from the server's answer is passed on.

use crate::projection::IdentityMismatch;
use crate::protocol::TurnDiagnostic;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConnectionFailure {
    /// The server refused the read for good (401, 403, 400...).
    Refused { status: u16 },
    /// Reads kept failing ([`crate::limits::CONNECTION_FAILURES_MAX`] in a row).
    Unavailable,
    /// The URL answered 200 with something other than an event stream.
    NotEventStream,
    /// This reader did not take its chunks and fell too far behind.
    ReaderOverflow,
    /// The connection already has as many readers as it may.
    ReadersExhausted,
    /// The chat endpoint answered a `send()` or `stopTurn()` with this status and no versioned
    /// diagnostic of its own.
    PostFailed { status: u16 },
    /// The stream delivered a chunk of another session or definition revision.
    Foreign(IdentityMismatch),
}

impl ConnectionFailure {
    #[rustfmt::skip]
    pub const fn row(self) -> (&'static str, &'static str, bool) {
        match self {
            Self::Refused { .. } => ("STREAM_REFUSED", "The session stream refused the read.", false),
            Self::Unavailable => ("STREAM_UNAVAILABLE", "The session stream could not be read; try again later.", true),
            Self::NotEventStream => ("STREAM_NOT_EVENT_STREAM", "The session stream URL did not answer with an event stream.", false),
            Self::ReaderOverflow => ("STREAM_READER_OVERFLOW", "This reader fell too far behind the session stream.", true),
            Self::ReadersExhausted => ("STREAM_READERS_EXHAUSTED", "The connection has as many readers as it may.", true),
            Self::PostFailed { .. } => ("CHAT_POST_FAILED", "The chat endpoint did not accept the request.", false),
            Self::Foreign(mismatch) => mismatch.row(),
        }
    }

    pub fn diagnostic(self) -> TurnDiagnostic {
        let (code, message, retryable) = self.row();
        let retryable = match self {
            Self::PostFailed { status } => matches!(status, 408 | 429 | 500..=599),
            _ => retryable,
        };
        TurnDiagnostic {
            code: code.into(),
            message: message.into(),
            retryable,
        }
    }

    /// The HTTP status a refused read or post got.
    pub fn status(self) -> Option<u16> {
        match self {
            Self::Refused { status } | Self::PostFailed { status } => Some(status),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::diagnostic::is_diagnostic_code;

    #[test]
    fn every_row_is_a_valid_diagnostic() {
        let all = [
            ConnectionFailure::Refused { status: 403 },
            ConnectionFailure::Unavailable,
            ConnectionFailure::NotEventStream,
            ConnectionFailure::ReaderOverflow,
            ConnectionFailure::ReadersExhausted,
            ConnectionFailure::PostFailed { status: 503 },
            ConnectionFailure::Foreign(IdentityMismatch::ForeignSession),
            ConnectionFailure::Foreign(IdentityMismatch::OtherRevision),
        ];
        let mut codes = crate::hash::FixedHashSet::default();
        for failure in all {
            let d = failure.diagnostic();
            assert!(is_diagnostic_code(&d.code), "{}", d.code);
            assert!(!d.message.is_empty());
            assert!(codes.insert(d.code.clone()), "duplicate code {}", d.code);
        }
        assert_eq!(
            ConnectionFailure::Refused { status: 401 }.status(),
            Some(401)
        );
        assert_eq!(ConnectionFailure::Unavailable.status(), None);
        assert!(
            ConnectionFailure::PostFailed { status: 503 }
                .diagnostic()
                .retryable
        );
        assert!(
            !ConnectionFailure::PostFailed { status: 400 }
                .diagnostic()
                .retryable
        );
    }
}
