//! Long-poll and SSE cursors (Durable Streams protocol §10.1): cache-busting keys for CDN request collapsing.
//!
//! Facts relied on:
//! - Every live response carries a cursor (`Stream-Cursor` header on long-poll, `streamCursor`
//!   in SSE control events); it may be left out once the stream is closed.
//! - The cursor is the number of whole 20-second intervals since 2024-10-09T00:00:00Z, written
//!   in decimal.
//! - Clients echo it as `?cursor=`. When the echoed cursor is not older than the current interval,
//!   the server must answer with a strictly larger one by adding a random jitter of 1 to 3600
//!   seconds (rounded up to whole intervals, at least one), so cursors never go backwards and a
//!   cached empty answer cannot loop forever. An older or unreadable cursor gets the current
//!   interval.
//!
//! The jitter is drawn by the caller (the core draws no randomness) and passed in seconds.

use crate::limits;

/// The interval number at `now_ms` (0 for a clock before the cursor epoch).
pub fn current_interval(now_ms: u64) -> u64 {
    now_ms.saturating_sub(limits::STREAM_CURSOR_EPOCH_MS) / limits::STREAM_CURSOR_INTERVAL_MS
}

/// The cursor for a live response. `client_cursor` is the `cursor` query value, if any;
/// `jitter_seconds` is a uniform random draw from 1..=3600 (other values are clamped into it).
pub fn response_cursor(now_ms: u64, client_cursor: Option<&str>, jitter_seconds: u32) -> String {
    let current = current_interval(now_ms);
    let next = match client_cursor.and_then(parse_cursor) {
        Some(client) if client >= current => {
            client.saturating_add(jitter_intervals(jitter_seconds))
        }
        _ => current,
    };
    next.to_string()
}

/// Whole intervals covering the (clamped) jitter, at least one.
pub fn jitter_intervals(jitter_seconds: u32) -> u64 {
    let seconds = u64::from(jitter_seconds.clamp(
        limits::STREAM_CURSOR_JITTER_SECONDS_MIN,
        limits::STREAM_CURSOR_JITTER_SECONDS_MAX,
    ));
    let interval_seconds = limits::STREAM_CURSOR_INTERVAL_MS / 1_000;
    seconds.div_ceil(interval_seconds).max(1)
}

/// A client cursor: ASCII digits only, at most 2^53-1 so the answer stays exact in JavaScript.
/// Anything else is treated as no cursor.
fn parse_cursor(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() > 16 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n = s
        .bytes()
        .fold(0u64, |acc, d| acc * 10 + u64::from(d - b'0'));
    (n <= limits::INTEGER_SAFE_MAX - jitter_intervals(u32::MAX)).then_some(n)
}
