//! The query of a read (`GET {stream}?offset=&live=&cursor=`, Durable Streams protocol §5.6-5.8 and §8) and
//! where the read starts.
//!
//! Facts relied on:
//! - `offset` is optional for catch-up reads (absent means `-1`) but required for
//!   `live=long-poll` and `live=sse`: without it the read is 400. Empty or repeated `offset`
//!   parameters are 400 as well.
//! - `live` selects the mode; like the reference server, any value other than `long-poll` and
//!   `sse` is a catch-up read (unknown query parameters are ignored, never an error).
//! - `offset=now` on a catch-up read answers at once with an empty body (`[]` in JSON mode), the
//!   tail as `Stream-Next-Offset`, `Stream-Up-To-Date: true`, `Cache-Control: no-store` and no
//!   ETag. With long-poll it waits from the tail without a first empty answer; with SSE it streams
//!   from the tail. On a closed stream every mode answers at once with the closure signal.
//! - A long-poll whose offset is the tail of a closed stream must not wait: 204 with
//!   `Stream-Closed: true` and `Stream-Up-To-Date: true` at once. Otherwise a long-poll at the tail
//!   waits; a long-poll behind the tail returns the data that is there.

use crate::diagnostics::{streams as rows, Row};
use std::fmt;

use super::offset::{Offset, OffsetError, OffsetQuery};
use super::Rejection;

/// How the client wants to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveMode {
    CatchUp,
    LongPoll,
    Sse,
}

/// A validated read query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadQuery {
    pub offset: OffsetQuery,
    pub live: LiveMode,
    /// The `cursor` the client echoed, verbatim (see `cursor::response_cursor`).
    pub cursor: Option<String>,
}

/// Why a read query was refused (always 400).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadQueryError {
    Offset(OffsetError),
    /// `live=long-poll` or `live=sse` without an `offset`.
    OffsetRequired(LiveMode),
}

/// Where a read starts, given the stream's state. The HTTP layer turns each case into a response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadStart {
    /// Catch-up `offset=now`: answer 200 at once with no data (see module doc), at `tail`.
    TailSnapshot { tail: Offset },
    /// Long-poll at the tail of a closed stream: 204 at once with the closure signal.
    ClosedAtTail { tail: Offset },
    /// Long-poll at the tail of an open stream: wait for the stream's own next append.
    WaitAt { offset: Offset },
    /// Serve data after `from` (catch-up, long-poll behind the tail, or SSE starting point).
    ReadFrom { from: Offset },
}

impl LiveMode {
    /// `live` parameter value to mode; absent or unknown is a catch-up read.
    pub fn parse(live: Option<&str>) -> LiveMode {
        match live {
            Some("long-poll") => LiveMode::LongPoll,
            Some("sse") => LiveMode::Sse,
            _ => LiveMode::CatchUp,
        }
    }
}

/// Validates the read query from every `offset` value, the `live` value and the `cursor` value.
pub fn parse_read_query(
    offset_values: &[&str],
    live: Option<&str>,
    cursor: Option<&str>,
) -> Result<ReadQuery, ReadQueryError> {
    let live = LiveMode::parse(live);
    let offset = OffsetQuery::from_query_values(offset_values).map_err(ReadQueryError::Offset)?;
    let offset = match (offset, live) {
        (Some(offset), _) => offset,
        (None, LiveMode::CatchUp) => OffsetQuery::Start,
        (None, mode) => return Err(ReadQueryError::OffsetRequired(mode)),
    };
    Ok(ReadQuery {
        offset,
        live,
        cursor: cursor.map(str::to_owned),
    })
}

/// Decides where the read starts. `start` is where `-1` begins: `Offset::ZERO`, also for a fork
/// (it shares the source's offsets and reads inherited data first). `tail` is the stream's current
/// tail, `closed` its closure state.
pub fn plan_read(query: &ReadQuery, start: Offset, tail: Offset, closed: bool) -> ReadStart {
    let from = query.offset.resolve(start, tail);
    match query.live {
        LiveMode::CatchUp if query.offset == OffsetQuery::Now => ReadStart::TailSnapshot { tail },
        LiveMode::LongPoll if from == tail && closed => ReadStart::ClosedAtTail { tail },
        LiveMode::LongPoll if from == tail => ReadStart::WaitAt { offset: tail },
        LiveMode::CatchUp | LiveMode::LongPoll | LiveMode::Sse => ReadStart::ReadFrom { from },
    }
}

impl fmt::Display for ReadQueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadQueryError::Offset(e) => e.fmt(f),
            ReadQueryError::OffsetRequired(LiveMode::Sse) => {
                f.write_str("live=sse requires offset")
            }
            ReadQueryError::OffsetRequired(_) => f.write_str("live=long-poll requires offset"),
        }
    }
}

impl Rejection for ReadQueryError {
    fn row(&self) -> Row {
        match self {
            ReadQueryError::Offset(e) => e.row(),
            ReadQueryError::OffsetRequired(_) => rows::OFFSET_REQUIRED,
        }
    }
}
