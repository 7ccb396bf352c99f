//! Durable Streams offsets (`core::streams::offset`): the `offset` query parameter and
//! `Stream-Fork-Offset`, which clients send back verbatim and compare as strings.
//!
//! Properties:
//! - parsing never panics; an offset that parses prints back to exactly its text (only the
//!   minted shape is accepted, so there is one spelling per position);
//! - offsets order like their text: `a < b` exactly when `a.to_string() < b.to_string()`;
//! - an append moves the offset strictly forward, by exactly the stored bytes, or fails as
//!   exhausted only past the 16-digit limit;
//! - a fork offset is accepted only when it is a real offset not beyond the source's tail.

use turnkeep::core::limits::STREAM_OFFSET_COMPONENT_MAX;
use turnkeep::core::streams::offset::{check_fork_offset, Offset, OffsetError, OffsetQuery};

use super::gen::{input, Gen, Input};

pub fn run(data: &[u8]) {
    match input(data) {
        Input::Raw(bytes) => check_text(&String::from_utf8_lossy(bytes)),
        Input::Structured(mut g) => {
            let a = offset(&mut g);
            let b = offset(&mut g);
            check_order(a, b);
            check_append(a, &mut g);
            let text = if g.chance(50) {
                a.to_string()
            } else {
                g.mutate_text(&a.to_string())
            };
            check_text(&text);
            check_fork(&text, b);
        }
    }
}

fn check_text(text: &str) {
    if let Ok(offset) = Offset::parse(text) {
        assert_eq!(offset.to_string(), text, "one spelling per offset");
    }
    match OffsetQuery::parse(text) {
        Ok(OffsetQuery::At(offset)) => assert_eq!(Offset::parse(text), Ok(offset)),
        Ok(OffsetQuery::Start) => assert_eq!(text, "-1"),
        Ok(OffsetQuery::Now) => assert_eq!(text, "now"),
        Err(OffsetError::Empty) => assert!(text.is_empty()),
        Err(e) => assert_eq!(e, OffsetError::Malformed),
    }
    let repeated = OffsetQuery::from_query_values(&[text, text]);
    assert_eq!(repeated, Err(OffsetError::Repeated));
    assert_eq!(
        OffsetQuery::from_query_values(&[text]),
        OffsetQuery::parse(text).map(Some)
    );
}

fn check_order(a: Offset, b: Offset) {
    let (ta, tb) = (a.to_string(), b.to_string());
    assert_eq!(
        a.cmp(&b),
        ta.cmp(&tb),
        "offsets order like their text: {ta} {tb}"
    );
    assert_eq!(Offset::parse(&ta), Ok(a));
}

fn check_append(a: Offset, g: &mut Gen<'_>) {
    let stored = match g.below(3) {
        0 => 0,
        1 => g.u64_in(1, 1 << 20),
        _ => g.u64_any(),
    };
    match a.after_append(stored) {
        Ok(next) => {
            assert!(next > a, "an append moves forward");
            assert!(next.to_string() > a.to_string());
            assert_eq!(next.read_seq, a.read_seq);
            assert_eq!(next.byte_offset - a.byte_offset, stored);
        }
        Err(OffsetError::Malformed) => assert_eq!(stored, 0),
        Err(OffsetError::Exhausted) => {
            assert!(a.byte_offset.saturating_add(stored) > STREAM_OFFSET_COMPONENT_MAX)
        }
        Err(e) => panic!("after_append failed with {e:?}"),
    }
}

fn check_fork(header: &str, tail: Offset) {
    match check_fork_offset(Some(header), tail) {
        Ok(offset) => {
            assert_eq!(Offset::parse(header), Ok(offset));
            assert!(offset <= tail);
        }
        Err(OffsetError::SentinelNotAllowed) => assert!(header == "-1" || header == "now"),
        Err(OffsetError::BeyondTail) => assert!(Offset::parse(header).is_ok_and(|o| o > tail)),
        Err(_) => assert!(Offset::parse(header).is_err()),
    }
    assert_eq!(check_fork_offset(None, tail), Ok(tail));
}

/// An offset near a boundary or anywhere in range (components are at most 16 digits).
fn offset(g: &mut Gen<'_>) -> Offset {
    Offset {
        read_seq: component(g),
        byte_offset: component(g),
    }
}

fn component(g: &mut Gen<'_>) -> u64 {
    match g.below(4) {
        0 => g.u64_in(0, 3),
        1 => STREAM_OFFSET_COMPONENT_MAX - g.u64_in(0, 3),
        2 => 10u64.pow(g.u64_in(0, 15) as u32) - g.u64_in(0, 1),
        _ => g.u64_in(0, STREAM_OFFSET_COMPONENT_MAX),
    }
}
