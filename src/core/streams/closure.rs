//! Stream closure (Durable Streams protocol §4.1, §5.2 `Stream-Closed`, §5.3 close-only, §5.2.1 closure with
//! idempotent producers).
//!
//! Facts relied on:
//! - `Stream-Closed` counts only when its value is `true`, compared case-insensitively; any other
//!   value (`false`, `1`, `yes`, empty) is as if the header were absent, never an error.
//! - A POST with an empty body is valid only as a close (`Stream-Closed: true`); otherwise 400.
//!   A close-only POST skips the content-type check entirely.
//! - Closure is durable and monotonic. On an already closed stream:
//!   - a close-only POST without producer headers is idempotent: 204 with `Stream-Closed: true`
//!     and the final `Stream-Next-Offset`;
//!   - a request whose `(Producer-Id, Producer-Epoch, Producer-Seq)` equals the tuple that closed
//!     the stream is a duplicate: 204 with `Stream-Closed: true`, `Producer-Epoch` and
//!     `Producer-Seq` echoed, whether or not it carries a body;
//!   - anything else (a body, or another producer's close) is 409 with `Stream-Closed: true` and
//!     `Stream-Next-Offset` = the final offset. This check comes before the content-type and
//!     sequence checks, so the client always sees the closure.
//! - A close that also appends (body + `Stream-Closed: true`) is atomic: the body is the final
//!   data. When producer headers performed the closing request, their tuple is remembered.

use crate::diagnostics::{streams as rows, Row};
use std::fmt;

use super::producer::ProducerHeaders;
use super::Rejection;

/// What a POST asks for, from its body length and `Stream-Closed` header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppendKind {
    /// Empty body with `Stream-Closed: true`.
    CloseOnly,
    /// A body to append, closing the stream after it when `close` is true.
    Append { close: bool },
}

/// A POST with an empty body and no close request (400).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmptyAppend;

/// The producer request that closed a stream, kept to recognise its retries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClosedBy {
    pub producer_id: String,
    pub epoch: u64,
    pub seq: u64,
}

/// The answer to a POST that reaches a stream which is already closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClosedStreamDecision {
    /// Close-only without producer headers: 204, `Stream-Closed: true`, final offset.
    AlreadyClosed,
    /// A retry of the closing producer request: 204, `Stream-Closed: true`, final offset,
    /// `Producer-Epoch: epoch`, `Producer-Seq: seq`.
    DuplicateOfClosingRequest { epoch: u64, seq: u64 },
    /// 409 with `Stream-Closed: true` and `Stream-Next-Offset` = final offset.
    Conflict,
}

/// `Stream-Closed` header: present only when exactly `true`, any letter case.
pub fn parse_stream_closed(value: Option<&str>) -> bool {
    value.is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

/// Classifies a POST; an empty body without a close request is refused.
pub fn classify_append(body_len: u64, close: bool) -> Result<AppendKind, EmptyAppend> {
    match (body_len, close) {
        (0, true) => Ok(AppendKind::CloseOnly),
        (0, false) => Err(EmptyAppend),
        (_, close) => Ok(AppendKind::Append { close }),
    }
}

/// Decides a POST on a closed stream. `closed_by` is the producer tuple that closed it, if any.
pub fn decide_on_closed(
    kind: AppendKind,
    producer: Option<&ProducerHeaders>,
    closed_by: Option<&ClosedBy>,
) -> ClosedStreamDecision {
    if let (Some(p), Some(c)) = (producer, closed_by) {
        if p.id == c.producer_id && p.epoch == c.epoch && p.seq == c.seq {
            return ClosedStreamDecision::DuplicateOfClosingRequest {
                epoch: p.epoch,
                seq: p.seq,
            };
        }
    }
    match (kind, producer) {
        (AppendKind::CloseOnly, None) => ClosedStreamDecision::AlreadyClosed,
        _ => ClosedStreamDecision::Conflict,
    }
}

/// The tuple to remember when an accepted request closes the stream.
pub fn closed_by(kind: AppendKind, producer: Option<&ProducerHeaders>) -> Option<ClosedBy> {
    let closes = matches!(
        kind,
        AppendKind::CloseOnly | AppendKind::Append { close: true }
    );
    let p = producer.filter(|_| closes)?;
    Some(ClosedBy {
        producer_id: p.id.clone(),
        epoch: p.epoch,
        seq: p.seq,
    })
}

impl ClosedStreamDecision {
    /// HTTP status of the decision.
    pub fn status(&self) -> u16 {
        match self {
            ClosedStreamDecision::AlreadyClosed
            | ClosedStreamDecision::DuplicateOfClosingRequest { .. } => 204,
            ClosedStreamDecision::Conflict => 409,
        }
    }
}

impl fmt::Display for EmptyAppend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "an append needs a non-empty body unless it closes the stream (Stream-Closed: true)",
        )
    }
}

impl Rejection for EmptyAppend {
    fn row(&self) -> Row {
        rows::EMPTY_APPEND
    }
}
