//! `Stream-Seq` writer ordering (Durable Streams protocol §5.2, §12.6).
//!
//! Facts relied on:
//! - `Stream-Seq` is an opaque string compared byte by byte (so `"B" < "a"`, `"10" < "9"`,
//!   `"09" < "10"`). Each value must be strictly greater than the last one appended; equal or
//!   smaller is 409 Conflict.
//! - This server scopes the sequence per stream (the protocol lets a server choose per writer
//!   identity or per stream, and asks it to say which).
//! - The last value moves only after the append succeeded, and the check runs after producer
//!   validation (a producer duplicate answers 204 before `Stream-Seq` is looked at) and after the
//!   closed and content-type checks.
//! - Forks start with no `Stream-Seq` state.

use crate::diagnostics::{streams as rows, Row};
use std::fmt;

use super::Rejection;
use crate::limits;

/// The outcome of [`check_stream_seq`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamSeqDecision {
    /// No `Stream-Seq` header: nothing to check, nothing to store.
    NotProvided,
    /// Append, then store `next` as the stream's last `Stream-Seq`.
    Accept { next: String },
    /// 409: `received` is not greater than `last`.
    Regression { last: String, received: String },
}

/// A `Stream-Seq` longer than [`limits::STREAM_SEQ_BYTES_MAX`] (400).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamSeqTooLong;

/// Decides an append's `Stream-Seq` against the last stored value. Pure.
pub fn check_stream_seq(
    last: Option<&str>,
    header: Option<&str>,
) -> Result<StreamSeqDecision, StreamSeqTooLong> {
    let Some(received) = header else {
        return Ok(StreamSeqDecision::NotProvided);
    };
    if received.len() > limits::STREAM_SEQ_BYTES_MAX {
        return Err(StreamSeqTooLong);
    }
    match last {
        Some(last) if received.as_bytes() <= last.as_bytes() => Ok(StreamSeqDecision::Regression {
            last: last.to_owned(),
            received: received.to_owned(),
        }),
        _ => Ok(StreamSeqDecision::Accept {
            next: received.to_owned(),
        }),
    }
}

/// The one place the stored `Stream-Seq` moves: after a successful append.
pub fn commit_stream_seq(last: Option<&str>, decision: &StreamSeqDecision) -> Option<String> {
    match decision {
        StreamSeqDecision::Accept { next } => Some(next.clone()),
        StreamSeqDecision::NotProvided | StreamSeqDecision::Regression { .. } => {
            last.map(str::to_owned)
        }
    }
}

impl StreamSeqDecision {
    /// HTTP status when the decision stops the request (`Regression`), else `None`.
    pub fn rejection_status(&self) -> Option<u16> {
        matches!(self, StreamSeqDecision::Regression { .. }).then_some(409)
    }
}

impl fmt::Display for StreamSeqTooLong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Stream-Seq must be at most {} bytes",
            limits::STREAM_SEQ_BYTES_MAX
        )
    }
}

impl Rejection for StreamSeqTooLong {
    fn row(&self) -> Row {
        rows::STREAM_SEQ_TOO_LONG
    }
}
