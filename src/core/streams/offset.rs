//! Stream offsets (Durable Streams protocol §8).
//!
//! Facts relied on:
//! - An offset is an opaque, case-sensitive token that clients compare lexicographically; offsets
//!   minted for later data must compare strictly greater, and no two positions share one.
//! - This server (like the reference server) mints `RRRRRRRRRRRRRRRR_BBBBBBBBBBBBBBBB`: a read
//!   sequence and a byte position, each zero-padded to exactly 16 decimal digits. Fixed width is
//!   what makes string order equal numeric order, so parsing accepts only that exact shape.
//! - A new stream starts at `0000000000000000_0000000000000000`; each append moves the byte
//!   position forward by the bytes it stored (at least one), so offsets strictly increase. The
//!   read sequence stays 0 unless a storage layer rotates segments; it orders before the byte
//!   position.
//! - On input, `-1` means "from the beginning" (same as no `offset` parameter) and `now` means
//!   "from the current tail". Both are reserved: the server never emits them as offsets.
//! - Offsets never contain `,` `&` `=` `?` `/`; anything but the sentinels and the minted shape
//!   (empty, spaces, path traversal, other lengths) is a malformed offset: 400.

use crate::diagnostics::{streams as rows, Row};
use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use super::Rejection;
use crate::limits;

/// Digits in each of the two components of a printed offset.
const COMPONENT_DIGITS: usize = 16;
/// `16 digits + '_' + 16 digits`.
const OFFSET_LEN: usize = COMPONENT_DIGITS * 2 + 1;

/// A position in a stream. Field order matters: the derived ordering compares `read_seq` first,
/// exactly as the printed form compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Offset {
    pub read_seq: u64,
    pub byte_offset: u64,
}

/// The `offset` query parameter of a read, once validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OffsetQuery {
    /// `-1` (or no parameter on a catch-up read): from the beginning of the stream.
    Start,
    /// `now`: from the tail, skipping existing data.
    Now,
    /// A previously returned offset.
    At(Offset),
}

/// Why an offset was refused. Always 400 except [`OffsetError::Exhausted`] (413).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OffsetError {
    /// Not `-1`, `now` or the minted `16digits_16digits` shape.
    Malformed,
    /// The `offset` parameter was present but empty.
    Empty,
    /// More than one `offset` parameter.
    Repeated,
    /// `-1` / `now` where only a real offset is allowed (e.g. `Stream-Fork-Offset`).
    SentinelNotAllowed,
    /// A fork offset past the source stream's tail.
    BeyondTail,
    /// Appending would move a component past 16 digits (the stream is full).
    Exhausted,
}

impl Offset {
    /// Where every new, non-forked stream starts.
    pub const ZERO: Offset = Offset {
        read_seq: 0,
        byte_offset: 0,
    };

    /// Parses a minted offset (no sentinels). Use [`OffsetQuery::parse`] for the query parameter.
    pub fn parse(s: &str) -> Result<Offset, OffsetError> {
        let b = s.as_bytes();
        if b.len() != OFFSET_LEN || b[COMPONENT_DIGITS] != b'_' {
            return Err(OffsetError::Malformed);
        }
        let read_seq = parse_digits(&b[..COMPONENT_DIGITS]).ok_or(OffsetError::Malformed)?;
        let byte_offset = parse_digits(&b[COMPONENT_DIGITS + 1..]).ok_or(OffsetError::Malformed)?;
        Ok(Offset {
            read_seq,
            byte_offset,
        })
    }

    /// The offset after appending `stored_bytes` (what the server stored for this append).
    /// Zero bytes would mint a duplicate offset, so it is refused like an overflow.
    pub fn after_append(self, stored_bytes: u64) -> Result<Offset, OffsetError> {
        if stored_bytes == 0 {
            return Err(OffsetError::Malformed);
        }
        let byte_offset = self
            .byte_offset
            .checked_add(stored_bytes)
            .filter(|b| *b <= limits::STREAM_OFFSET_COMPONENT_MAX)
            .ok_or(OffsetError::Exhausted)?;
        Ok(Offset {
            read_seq: self.read_seq,
            byte_offset,
        })
    }
}

impl OffsetQuery {
    /// Parses one `offset` value: `-1`, `now` or a minted offset; empty and anything else fail.
    pub fn parse(s: &str) -> Result<OffsetQuery, OffsetError> {
        match s {
            "" => Err(OffsetError::Empty),
            "-1" => Ok(OffsetQuery::Start),
            "now" => Ok(OffsetQuery::Now),
            _ => Offset::parse(s).map(OffsetQuery::At),
        }
    }

    /// Parses every value the URL carried for `offset`: none is `Ok(None)` (the caller decides
    /// whether the parameter was required), more than one is refused.
    pub fn from_query_values(values: &[&str]) -> Result<Option<OffsetQuery>, OffsetError> {
        match values {
            [] => Ok(None),
            [one] => OffsetQuery::parse(one).map(Some),
            _ => Err(OffsetError::Repeated),
        }
    }

    /// Resolves the sentinels against the stream: `Start` is `start` (ZERO, or the first
    /// offset a fork reads from), `Now` is `tail`.
    pub fn resolve(self, start: Offset, tail: Offset) -> Offset {
        match self {
            OffsetQuery::Start => start,
            OffsetQuery::Now => tail,
            OffsetQuery::At(offset) => offset,
        }
    }
}

/// Compares an offset with the tail: an offset past the tail was never minted by this stream.
/// The reference server answers such a read with an empty, up-to-date response; a fork offset
/// past the source tail is 400 (see [`check_fork_offset`]).
pub(crate) fn is_beyond(offset: Offset, tail: Offset) -> bool {
    offset.cmp(&tail) == Ordering::Greater
}

/// `Stream-Fork-Offset`: a minted offset not beyond the source's tail. Absent means the tail.
pub fn check_fork_offset(header: Option<&str>, source_tail: Offset) -> Result<Offset, OffsetError> {
    let offset = match header.map(OffsetQuery::parse).transpose()? {
        None => None,
        Some(OffsetQuery::At(offset)) => Some(offset),
        Some(OffsetQuery::Start | OffsetQuery::Now) => return Err(OffsetError::SentinelNotAllowed),
    };
    resolve_fork_offset(offset, source_tail)
}

/// [`check_fork_offset`] for an offset already parsed: not beyond the source's tail; absent
/// means the tail.
pub(crate) fn resolve_fork_offset(
    offset: Option<Offset>,
    source_tail: Offset,
) -> Result<Offset, OffsetError> {
    match offset {
        None => Ok(source_tail),
        Some(offset) if is_beyond(offset, source_tail) => Err(OffsetError::BeyondTail),
        Some(offset) => Ok(offset),
    }
}

impl fmt::Display for Offset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016}_{:016}", self.read_seq, self.byte_offset)
    }
}

impl FromStr for Offset {
    type Err = OffsetError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Offset::parse(s)
    }
}

impl fmt::Display for OffsetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OffsetError::Malformed => {
                "offset must be -1, now, or an offset this server returned in Stream-Next-Offset"
            }
            OffsetError::Empty => "offset must not be empty",
            OffsetError::Repeated => "offset must be given at most once",
            OffsetError::SentinelNotAllowed => "a fork offset must be a real offset, not -1 or now",
            OffsetError::BeyondTail => "the fork offset is beyond the source stream's tail",
            OffsetError::Exhausted => "the stream has reached its largest offset",
        })
    }
}

impl Rejection for OffsetError {
    fn row(&self) -> Row {
        match self {
            OffsetError::Malformed => rows::OFFSET_MALFORMED,
            OffsetError::Empty => rows::OFFSET_EMPTY,
            OffsetError::Repeated => rows::OFFSET_REPEATED,
            OffsetError::SentinelNotAllowed => rows::OFFSET_SENTINEL_NOT_ALLOWED,
            OffsetError::BeyondTail => rows::OFFSET_BEYOND_TAIL,
            OffsetError::Exhausted => rows::OFFSET_EXHAUSTED,
        }
    }
}

/// Exactly `COMPONENT_DIGITS` ASCII digits (no sign, no spaces) as a number.
fn parse_digits(b: &[u8]) -> Option<u64> {
    if b.len() != COMPONENT_DIGITS || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0u64, |acc, d| acc * 10 + u64::from(d - b'0')))
}
