//! A read of a session log served over the Durable Streams read protocol by
//! `createSessionLogHandler` (a log that lives in a database: Redis, Postgres, a host's own), so
//! `createChatConnection`, the Durable Streams client and TanStack's durable transport can follow
//! it. Read-only. The log's offsets are its own opaque tokens (the protocol's rules for them
//! hold: never empty, never a sentinel, compared as strings); `-1` is the start, `now` the tail.
//! The facts of the query are [`super::read_query`]'s: `offset` is required for `long-poll` and
//! `sse`, may be given once, and any other `live` value is a catch-up read.

use super::read_query::LiveMode;
use crate::connection::wire::is_offset_text;
use crate::diagnostics::{streams as rows, Row};

/// Where the read starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogFrom {
    Start,
    Now,
    After(String),
}

/// A validated read of a session log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogReadQuery {
    pub from: LogFrom,
    pub live: LiveMode,
}

/// The query from every `offset` value and the `live` value; a refusal is its registry row.
pub fn log_read_query(offset_values: &[&str], live: Option<&str>) -> Result<LogReadQuery, Row> {
    let live = LiveMode::parse(live);
    let from = match offset_values {
        [] if live == LiveMode::CatchUp => LogFrom::Start,
        [] => return Err(rows::OFFSET_REQUIRED),
        [_, _, ..] => return Err(rows::OFFSET_REPEATED),
        [""] => return Err(rows::OFFSET_EMPTY),
        ["-1"] => LogFrom::Start,
        ["now"] => LogFrom::Now,
        [offset] if is_offset_text(offset) => LogFrom::After((*offset).to_owned()),
        [_] => return Err(rows::OFFSET_MALFORMED),
    };
    Ok(LogReadQuery { from, live })
}
