//! Durable Streams request headers and query values (`core::streams`): `Producer-*`,
//! `Stream-TTL` / `Stream-Expires-At`, `Stream-Seq`, `Content-Type`, the read query and the
//! long-poll cursor.
//!
//! Properties, besides "never panics":
//! - `Producer-Epoch` / `Producer-Seq` parse exactly the digit strings whose value is at most
//!   2^53-1 (checked against the standard library's parser);
//! - `Stream-TTL` accepts exactly the canonical spelling of a number (`n.to_string()`);
//! - `Stream-Expires-At` of a known instant, written in UTC or with an offset, any fraction
//!   length, parses back to that instant (before 1970 as 0) and is echoed as given;
//! - `Stream-Seq` accepts exactly the values above the last one, byte-wise;
//! - content types match exactly when their media types are equal (so the relation is
//!   reflexive and symmetric), and JSON mode is exactly `application/json`;
//! - a read plan starts where the query's offset resolves; a cursor never goes backwards.

use turnkeep::core::checks::format_iso_millis;
use turnkeep::core::limits::{INTEGER_SAFE_MAX, STREAM_SEQ_BYTES_MAX, STREAM_TTL_SECONDS_MAX};
use turnkeep::core::streams::content_type::{
    check_append_content_type, is_json, is_well_formed, matches, media_type,
    resolve_create_content_type, CreateContentType, DEFAULT_CONTENT_TYPE,
};
use turnkeep::core::streams::cursor::{current_interval, response_cursor};
use turnkeep::core::streams::offset::{Offset, OffsetQuery};
use turnkeep::core::streams::producer::{parse_producer_headers, ProducerHeaderError};
use turnkeep::core::streams::read_query::{parse_read_query, plan_read, LiveMode, ReadStart};
use turnkeep::core::streams::stream_seq::{check_stream_seq, StreamSeqDecision};
use turnkeep::core::streams::ttl::{parse_expires_at, parse_expiry_headers, parse_ttl_seconds};

use super::gen::{input, Gen, Input};

pub fn run(data: &[u8]) {
    match input(data) {
        Input::Raw(bytes) => {
            // The same text in every header slot.
            let text = String::from_utf8_lossy(bytes);
            let t = text.as_ref();
            check_producer(Some(t), Some(t), Some(t));
            check_ttl(t);
            check_expires_at_text(t);
            check_stream_seq_pair(Some(t), t);
            check_content_types(t, t);
            check_cursor(0, Some(t), 1);
        }
        Input::Structured(mut g) => match g.below(6) {
            0 => {
                let (id, epoch, seq) = (
                    header(&mut g, id),
                    header(&mut g, digits),
                    header(&mut g, digits),
                );
                check_producer(id.as_deref(), epoch.as_deref(), seq.as_deref());
            }
            1 => {
                let ttl = if g.chance(60) {
                    digits(&mut g)
                } else {
                    g.string()
                };
                check_ttl(&ttl);
                let at = g.string();
                assert!(
                    parse_expiry_headers(Some(&ttl), Some(&at)).is_err(),
                    "both headers"
                );
                check_expires_at(&mut g);
            }
            2 => {
                let last = if g.chance(70) {
                    Some(seq_value(&mut g))
                } else {
                    None
                };
                let received = seq_value(&mut g);
                check_stream_seq_pair(last.as_deref(), &received);
            }
            3 => {
                let (a, b) = (content_type(&mut g), content_type(&mut g));
                check_content_types(&a, &b);
            }
            4 => check_read(&mut g),
            _ => {
                let now_ms = g.u64_any();
                let client = if g.chance(80) {
                    Some(cursor_text(&mut g, now_ms))
                } else {
                    None
                };
                let jitter = g.pick(&[0, 1, 19, 20, 21, 3_600, 3_601, u32::MAX]);
                check_cursor(now_ms, client.as_deref(), jitter);
            }
        },
    }
}

fn header(g: &mut Gen<'_>, value: fn(&mut Gen<'_>) -> String) -> Option<String> {
    g.chance(90).then(|| value(g))
}

fn id(g: &mut Gen<'_>) -> String {
    match g.below(4) {
        0 => String::new(),
        1 => "p".repeat(g.pick(&[256, 257])),
        _ => g.string(),
    }
}

/// Digit strings around the safe-integer limit, or near misses (`+1`, `1e3`, ` 1`...).
fn digits(g: &mut Gen<'_>) -> String {
    match g.below(6) {
        0 => g
            .pick(&[
                "9007199254740991",
                "9007199254740992",
                "09007199254740991",
                "0",
                "00",
                "",
            ])
            .to_owned(),
        1 => format!("{}{}", "0".repeat(g.below(30)), g.u64_any()),
        2 => {
            let n = g.u64_any().to_string();
            g.mutate_text(&n)
        }
        3 => g.u64_any().to_string() + &"0".repeat(g.below(5)),
        _ => g.u64_any().to_string(),
    }
}

/// The value of a decimal digit string when it is at most 2^53-1, by the standard library.
fn reference_uint(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let significant = s.trim_start_matches('0');
    if significant.len() > 20 {
        return None;
    }
    let n: u128 = if significant.is_empty() {
        0
    } else {
        significant.parse().ok()?
    };
    u64::try_from(n).ok().filter(|n| *n <= INTEGER_SAFE_MAX)
}

fn check_producer(id: Option<&str>, epoch: Option<&str>, seq: Option<&str>) {
    let parsed = parse_producer_headers(id, epoch, seq);
    let (id, epoch, seq) = match (id, epoch, seq) {
        (None, None, None) => return assert_eq!(parsed, Ok(None)),
        (Some(id), Some(epoch), Some(seq)) => (id, epoch, seq),
        _ => return assert_eq!(parsed, Err(ProducerHeaderError::Partial)),
    };
    match parsed {
        Ok(Some(headers)) => {
            assert_eq!(headers.id, id);
            assert_eq!(Some(headers.epoch), reference_uint(epoch));
            assert_eq!(Some(headers.seq), reference_uint(seq));
        }
        Err(ProducerHeaderError::EmptyId) => assert!(id.is_empty()),
        Err(ProducerHeaderError::IdTooLong) => assert!(id.len() > 256),
        Err(ProducerHeaderError::InvalidEpoch) => assert_eq!(reference_uint(epoch), None),
        Err(ProducerHeaderError::InvalidSeq) => assert_eq!(reference_uint(seq), None),
        other => panic!("{other:?} for all three headers"),
    }
}

fn check_ttl(text: &str) {
    let canonical = text.parse::<u64>().ok().filter(|n| n.to_string() == text);
    let expected = canonical.filter(|n| *n <= STREAM_TTL_SECONDS_MAX);
    assert_eq!(
        parse_ttl_seconds(text).ok(),
        expected,
        "Stream-TTL {text:?}"
    );
}

fn check_expires_at_text(text: &str) {
    if let Ok(at) = parse_expires_at(text) {
        assert_eq!(at.raw, text);
    }
}

/// A known instant written as RFC 3339 in some zone, with some fraction digits: it must parse
/// back to that instant.
fn check_expires_at(g: &mut Gen<'_>) {
    let ms = g.epoch_ms();
    let offset_minutes = match g.below(3) {
        0 => 0,
        _ => g.u64_in(0, 23 * 60 + 59) as i64 * if g.chance(50) { -1 } else { 1 },
    };
    let local_ms = ms + offset_minutes * 60_000;
    if !(-62_167_219_200_000..=253_402_300_799_999).contains(&local_ms) {
        return; // outside four-digit years
    }
    let iso = format_iso_millis(local_ms); // YYYY-MM-DDTHH:MM:SS.mmmZ
    let (seconds, millis) = (&iso[..19], &iso[20..23]);
    let fraction = match g.below(4) {
        0 => String::new(),
        1 => format!(".{millis}"),
        2 => format!(".{millis}{}", "7".repeat(1 + g.below(9))),
        _ => format!(".{}", &millis[..1 + g.below(2)]),
    };
    let zone = match offset_minutes {
        0 if g.chance(50) => g.pick(&["Z", "z"]).to_owned(),
        m => format!(
            "{}{:02}:{:02}",
            if m < 0 { '-' } else { '+' },
            m.abs() / 60,
            m.abs() % 60
        ),
    };
    let t = if g.chance(80) { "T" } else { "t" };
    let text = format!("{}{t}{}{fraction}{zone}", &seconds[..10], &seconds[11..]);
    let truncated_ms = match fraction.len() {
        0 => ms - ms.rem_euclid(1_000),
        2 => ms - ms.rem_euclid(100),
        3 => ms - ms.rem_euclid(10),
        _ => ms,
    };
    let parsed = parse_expires_at(&text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    assert_eq!(
        parsed.at_ms,
        u64::try_from(truncated_ms).unwrap_or(0),
        "{text:?}"
    );
    assert_eq!(parsed.raw, text);
    let mutated = g.mutate_text(&text);
    check_expires_at_text(&mutated);
}

fn seq_value(g: &mut Gen<'_>) -> String {
    match g.below(5) {
        0 => "9".repeat(g.pick(&[256, 257])),
        1 => format!("{:0width$}", g.below(100), width = g.below(4)),
        _ => g.string(),
    }
}

fn check_stream_seq_pair(last: Option<&str>, received: &str) {
    match check_stream_seq(last, Some(received)) {
        Err(_) => assert!(received.len() > STREAM_SEQ_BYTES_MAX),
        Ok(StreamSeqDecision::Accept { next }) => {
            assert_eq!(next, received);
            assert!(last.is_none_or(|l| received.as_bytes() > l.as_bytes()));
        }
        Ok(StreamSeqDecision::Regression {
            last: l,
            received: r,
        }) => {
            assert_eq!(Some(l.as_str()), last);
            assert_eq!(r, received);
            assert!(received.as_bytes() <= l.as_bytes());
        }
        Ok(StreamSeqDecision::NotProvided) => panic!("a header was given"),
    }
    assert_eq!(
        check_stream_seq(last, None),
        Ok(StreamSeqDecision::NotProvided)
    );
}

fn content_type(g: &mut Gen<'_>) -> String {
    let base = g.pick(&[
        "application/json",
        "APPLICATION/Json",
        "text/plain",
        "text/event-stream",
        "application/octet-stream",
        "a/b/c",
        "text/",
        "/json",
        "",
        " ",
    ]);
    match g.below(5) {
        0 => format!("{base}; charset=utf-8"),
        1 => format!("  {base}\t;"),
        2 => g.string(),
        3 => g.mutate_text(base),
        _ => base.to_owned(),
    }
}

fn check_content_types(a: &str, b: &str) {
    assert!(matches(a, a), "reflexive: {a:?}");
    assert_eq!(matches(a, b), matches(b, a), "symmetric");
    assert_eq!(matches(a, b), media_type(a) == media_type(b), "{a:?} {b:?}");
    assert_eq!(is_json(a), media_type(a) == "application/json");
    match resolve_create_content_type(Some(a), false) {
        CreateContentType::Use(value) if is_well_formed(a) => assert_eq!(value, a.trim()),
        CreateContentType::Use(value) => assert_eq!(value, DEFAULT_CONTENT_TYPE),
        CreateContentType::InheritFromSource => panic!("not a fork"),
    }
    let append = check_append_content_type(b, Some(a));
    assert_eq!(append.is_ok(), !a.trim().is_empty() && matches(a, b));
}

fn offset_value(g: &mut Gen<'_>) -> String {
    let offset = Offset {
        read_seq: g.u64_in(0, 2),
        byte_offset: g.u64_in(0, 40),
    };
    match g.below(5) {
        0 => "-1".into(),
        1 => "now".into(),
        2 => g.string(),
        _ => offset.to_string(),
    }
}

fn check_read(g: &mut Gen<'_>) {
    let values: Vec<String> = (0..g.below(3)).map(|_| offset_value(g)).collect();
    let values: Vec<&str> = values.iter().map(String::as_str).collect();
    let live = g.pick(&[
        None,
        Some("long-poll"),
        Some("sse"),
        Some("LONG-POLL"),
        Some(""),
    ]);
    let refused = match values.as_slice() {
        [] => LiveMode::parse(live) != LiveMode::CatchUp,
        [one] => OffsetQuery::parse(one).is_err(),
        _ => true,
    };
    let parsed = parse_read_query(&values, live, None);
    assert_eq!(parsed.is_err(), refused, "{values:?} {live:?}");
    let Ok(query) = parsed else { return };
    assert_eq!(query.live, LiveMode::parse(live));
    let start = Offset::ZERO;
    let tail = Offset {
        read_seq: g.u64_in(0, 2),
        byte_offset: g.u64_in(0, 40),
    };
    let closed = g.chance(50);
    let from = query.offset.resolve(start, tail);
    match plan_read(&query, start, tail, closed) {
        ReadStart::TailSnapshot { tail: t } => {
            assert_eq!(
                (query.live, query.offset, t),
                (LiveMode::CatchUp, OffsetQuery::Now, tail)
            )
        }
        ReadStart::ClosedAtTail { tail: t } => {
            assert!(query.live == LiveMode::LongPoll && closed && from == tail && t == tail)
        }
        ReadStart::WaitAt { offset } => {
            assert!(query.live == LiveMode::LongPoll && !closed && from == tail && offset == tail)
        }
        ReadStart::ReadFrom { from: f } => {
            assert_eq!(f, from);
            assert!(query.live != LiveMode::LongPoll || from != tail);
        }
    }
}

fn cursor_text(g: &mut Gen<'_>, now_ms: u64) -> String {
    let current = current_interval(now_ms);
    match g.below(4) {
        0 => current.to_string(),
        1 => current.saturating_add(g.u64_in(0, 400)).to_string(),
        2 => current.saturating_sub(g.u64_in(0, 400)).to_string(),
        _ => g.string(),
    }
}

fn check_cursor(now_ms: u64, client: Option<&str>, jitter_seconds: u32) {
    let current = current_interval(now_ms);
    let answer: u64 = response_cursor(now_ms, client, jitter_seconds)
        .parse()
        .expect("a cursor is a decimal number");
    assert!(
        answer >= current,
        "a cursor never goes below the current interval"
    );
    // What the server mints: at most 16 digits (2^53-1 has 16).
    let client = client
        .filter(|c| c.len() <= 16 && c.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|c| c.parse::<u64>().ok());
    if let Some(client) = client.filter(|c| *c >= current && *c <= INTEGER_SAFE_MAX - 180) {
        assert!(answer > client, "a held cursor moves forward");
        assert!(answer - client <= 180, "by at most 3600 s of intervals");
    }
    if current <= INTEGER_SAFE_MAX - 180 {
        assert!(answer <= INTEGER_SAFE_MAX, "a cursor stays a safe integer");
    }
}
