//! Stream lifetime: `Stream-TTL` (sliding) and `Stream-Expires-At` (absolute), Durable Streams protocol
//! §4, §5.1, §5.5 and the fork table of §4.2.
//!
//! Facts relied on:
//! - `Stream-TTL` is whole seconds written as `0` or `[1-9][0-9]*`: no sign, no leading zero, no
//!   decimal point, no exponent, no spaces. Anything else is 400.
//! - `Stream-Expires-At` is an RFC 3339 timestamp; an unparsable one is 400. The server echoes
//!   the value it was given (HEAD), and an idempotent PUT compares that value as given.
//! - Giving both headers is 400.
//! - A TTL stream expires once it has been idle for the TTL: every read (GET in any mode,
//!   including `offset=now`; a live read counts when the server starts processing it) and every
//!   write (POST, including close-only) restarts the countdown. HEAD does not. `Expires-At` never
//!   moves. A stream is expired when `now >= deadline`; an expired stream is gone (404) and its
//!   path may be created again.
//! - Forks: an explicit TTL or Expires-At on the fork wins; otherwise the fork inherits the
//!   source's TTL value (with its own countdown) or the source's Expires-At; no expiry stays none.

use crate::diagnostics::{streams as rows, Row};
use std::fmt;

use super::Rejection;
use crate::checks::{is_calendar_date, parse_canonical_uint};
use crate::limits;

/// How a stream expires.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Expiry {
    #[default]
    Never,
    /// Sliding: idle for this many seconds.
    Ttl { seconds: u64 },
    /// Absolute.
    At(ExpiresAt),
}

/// A parsed `Stream-Expires-At`: the value as given (echoed back) and its epoch milliseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpiresAt {
    pub raw: String,
    /// Milliseconds since 1970-01-01T00:00:00Z; a moment before 1970 is stored as 0.
    pub at_ms: u64,
}

/// A stream's expiry plus the time of its last renewing access.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lifetime {
    pub expiry: Expiry,
    pub last_access_ms: u64,
}

/// Kinds of request, as far as the TTL cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// GET in any mode.
    Read,
    /// POST, including close-only.
    Write,
    /// HEAD: never renews.
    Head,
}

/// Why the expiry headers were refused (400).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpiryError {
    InvalidTtl,
    InvalidExpiresAt,
    /// Both `Stream-TTL` and `Stream-Expires-At`.
    Both,
}

/// Parses the two create headers into one expiry.
pub fn parse_expiry_headers(
    ttl: Option<&str>,
    expires_at: Option<&str>,
) -> Result<Expiry, ExpiryError> {
    match (ttl, expires_at) {
        (Some(_), Some(_)) => Err(ExpiryError::Both),
        (Some(ttl), None) => parse_ttl_seconds(ttl).map(|seconds| Expiry::Ttl { seconds }),
        (None, Some(at)) => parse_expires_at(at).map(Expiry::At),
        (None, None) => Ok(Expiry::Never),
    }
}

/// `0` or a decimal integer without leading zeros, at most [`limits::STREAM_TTL_SECONDS_MAX`].
pub fn parse_ttl_seconds(s: &str) -> Result<u64, ExpiryError> {
    parse_canonical_uint(s)
        .filter(|n| *n <= limits::STREAM_TTL_SECONDS_MAX)
        .ok_or(ExpiryError::InvalidTtl)
}

/// RFC 3339 `date-time`: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; `T` and `Z` in either case.
/// Fractions beyond milliseconds are truncated.
pub fn parse_expires_at(s: &str) -> Result<ExpiresAt, ExpiryError> {
    if s.len() > limits::STREAM_EXPIRES_AT_CHARS_MAX {
        return Err(ExpiryError::InvalidExpiresAt);
    }
    let at_ms = rfc3339_to_ms(s.as_bytes()).ok_or(ExpiryError::InvalidExpiresAt)?;
    Ok(ExpiresAt {
        raw: s.to_owned(),
        at_ms: u64::try_from(at_ms).unwrap_or(0),
    })
}

impl Expiry {
    /// The headers HEAD (and an idempotent PUT) reports: `Stream-TTL` or `Stream-Expires-At`.
    pub fn response_header(&self) -> Option<(&'static str, String)> {
        match self {
            Expiry::Never => None,
            Expiry::Ttl { seconds } => Some(("Stream-TTL", seconds.to_string())),
            Expiry::At(at) => Some(("Stream-Expires-At", at.raw.clone())),
        }
    }
}

impl Lifetime {
    /// A stream created at `now_ms`.
    pub fn new(expiry: Expiry, now_ms: u64) -> Lifetime {
        Lifetime {
            expiry,
            last_access_ms: now_ms,
        }
    }

    /// When the stream expires, if ever.
    pub fn deadline_ms(&self) -> Option<u64> {
        match &self.expiry {
            Expiry::Never => None,
            Expiry::Ttl { seconds } => Some(
                self.last_access_ms
                    .saturating_add(seconds.saturating_mul(1_000)),
            ),
            Expiry::At(at) => Some(at.at_ms),
        }
    }

    /// Expired at `now_ms` (the deadline itself is already expired).
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.deadline_ms()
            .is_some_and(|deadline| now_ms >= deadline)
    }

    /// The lifetime after an access at `now_ms`: reads and writes restart a TTL; HEAD and
    /// absolute expiries never move. Never moves backwards if the caller's clock does.
    pub fn touched(&self, access: Access, now_ms: u64) -> Lifetime {
        let renews = matches!(access, Access::Read | Access::Write);
        Lifetime {
            expiry: self.expiry.clone(),
            last_access_ms: if renews {
                self.last_access_ms.max(now_ms)
            } else {
                self.last_access_ms
            },
        }
    }
}

/// Whether a renewed last access must be written now, when storage holds `saved_ms`: only once
/// it is `STREAM_TTL_RENEWAL_UNSAVED_MS_MAX` or more ahead (see that limit). `saved_ms` ahead
/// of it (a clock that went back) needs no write either.
pub fn renewal_needs_save(saved_ms: u64, last_access_ms: u64) -> bool {
    last_access_ms.saturating_sub(saved_ms) >= limits::STREAM_TTL_RENEWAL_UNSAVED_MS_MAX
}

/// The expiry of a fork, from its source's expiry and what the fork request asked for.
pub fn resolve_fork_expiry(source: &Expiry, requested: &Expiry) -> Expiry {
    match requested {
        Expiry::Never => source.clone(),
        explicit => explicit.clone(),
    }
}

impl fmt::Display for ExpiryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ExpiryError::InvalidTtl => {
                "Stream-TTL must be a whole number of seconds without sign, leading zeros or decimals"
            }
            ExpiryError::InvalidExpiresAt => "Stream-Expires-At must be an RFC 3339 timestamp",
            ExpiryError::Both => "Stream-TTL and Stream-Expires-At cannot be given together",
        })
    }
}

impl Rejection for ExpiryError {
    fn row(&self) -> Row {
        match self {
            ExpiryError::InvalidTtl => rows::TTL_INVALID,
            ExpiryError::InvalidExpiresAt => rows::EXPIRES_AT_INVALID,
            ExpiryError::Both => rows::TTL_AND_EXPIRES_AT,
        }
    }
}

/// Epoch milliseconds of an RFC 3339 date-time, or `None` when it is not one.
fn rfc3339_to_ms(b: &[u8]) -> Option<i64> {
    if b.len() < 20 || !is_calendar_date(&b[..10]) || !matches!(b[10], b'T' | b't') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let year = digits(&b[0..4])?;
    let (month, day) = (digits(&b[5..7])?, digits(&b[8..10])?);
    let (hour, minute, second) = (
        digits(&b[11..13])?,
        digits(&b[14..16])?,
        digits(&b[17..19])?,
    );
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let (millis, zone) = split_fraction(&b[19..])?;
    let offset_minutes = parse_zone(zone)?;
    let days = days_from_civil(year, month, day);
    let local_ms = days * 86_400_000 + (hour * 3_600 + minute * 60 + second) * 1_000 + millis;
    Some(local_ms - offset_minutes * 60_000)
}

/// `[.digits]` then the zone: returns the milliseconds (truncated) and the zone bytes.
fn split_fraction(b: &[u8]) -> Option<(i64, &[u8])> {
    let Some(rest) = b.strip_prefix(b".") else {
        return Some((0, b));
    };
    let count = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    if count == 0 {
        return None;
    }
    let millis = rest[..count]
        .iter()
        .chain(std::iter::repeat(&b'0'))
        .take(3)
        .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0'));
    Some((millis, &rest[count..]))
}

/// `Z` / `z` is 0; `±HH:MM` is the signed offset in minutes.
fn parse_zone(b: &[u8]) -> Option<i64> {
    match b {
        [b'Z' | b'z'] => Some(0),
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let hours = digits(&[*h1, *h2])?;
            let minutes = digits(&[*m1, *m2])?;
            if hours > 23 || minutes > 59 {
                return None;
            }
            let total = hours * 60 + minutes;
            Some(if *sign == b'-' { -total } else { total })
        }
        _ => None,
    }
}

fn digits(b: &[u8]) -> Option<i64> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}
