//! Offsets and the read query: golden cases plus properties (round trip, order, no panics).
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use proptest::prelude::*;
use turnkeep::core::limits;
use turnkeep::core::streams::offset::{check_fork_offset, Offset, OffsetError, OffsetQuery};
use turnkeep::core::streams::read_query::{
    parse_read_query, plan_read, LiveMode, ReadQueryError, ReadStart,
};
use turnkeep::core::streams::Rejection;

const ZERO: &str = "0000000000000000_0000000000000000";

fn at(read_seq: u64, byte_offset: u64) -> Offset {
    Offset {
        read_seq,
        byte_offset,
    }
}

fn check(input: &str, expected: Result<OffsetQuery, OffsetError>) {
    assert_eq!(OffsetQuery::parse(input), expected, "input {input:?}");
}

#[test]
fn offset_query_edge_cases() {
    use OffsetError::*;
    check("-1", Ok(OffsetQuery::Start));
    check("now", Ok(OffsetQuery::Now));
    check(ZERO, Ok(OffsetQuery::At(Offset::ZERO)));
    check(
        "0000000000000000_0000000000000042",
        Ok(OffsetQuery::At(at(0, 42))),
    );
    check(
        "0000000000000003_0000000000000042",
        Ok(OffsetQuery::At(at(3, 42))),
    );
    check(
        "9999999999999999_9999999999999999",
        Ok(OffsetQuery::At(at(
            9_999_999_999_999_999,
            9_999_999_999_999_999,
        ))),
    );
    check("", Err(Empty));
    for bad in [
        "0,1",
        "0 1",
        "0_0",
        "1_5",
        "-2",
        "NOW",
        "Now",
        "now ",
        " -1",
        "-1 ",
        "-0",
        "+1",
        "00000000000000000_0000000000000000", // 17 digits
        "000000000000000_0000000000000000",   // 15 digits
        "0000000000000000_000000000000000a",
        "0000000000000000-0000000000000000",
        "0000000000000000__000000000000000",
        "0000000000000000_0000000000000000 ",
        "../0000000000000000_000000000000000",
        "0000000000000000/0000000000000000",
        "0000000000000000_00000000000000\u{0}0",
        "0000000000000000_000000000000000\n",
        "٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠_٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠", // non-ASCII digits
        "abc",
        "null",
        "undefined",
        "%30",
    ] {
        check(bad, Err(Malformed));
    }
}

#[test]
fn every_offset_rejection_is_a_400_except_exhaustion() {
    for e in [
        OffsetError::Malformed,
        OffsetError::Empty,
        OffsetError::Repeated,
        OffsetError::SentinelNotAllowed,
        OffsetError::BeyondTail,
    ] {
        assert_eq!(e.status(), 400, "{e:?}");
        assert!(e.code().starts_with("streams.v1."));
    }
    assert_eq!(OffsetError::Exhausted.status(), 413);
}

#[test]
fn formats_with_sixteen_digits_each() {
    for (offset, expected) in [
        (Offset::ZERO, ZERO),
        (at(0, 1), "0000000000000000_0000000000000001"),
        (at(12, 345), "0000000000000012_0000000000000345"),
    ] {
        assert_eq!(offset.to_string(), expected);
        assert_eq!(expected.parse::<Offset>(), Ok(offset));
    }
}

#[test]
fn appends_advance_strictly_and_refuse_overflow() {
    let first = Offset::ZERO.after_append(5).unwrap();
    assert_eq!(first, at(0, 5));
    assert!(first.to_string().as_str() > ZERO);
    assert_eq!(Offset::ZERO.after_append(0), Err(OffsetError::Malformed));
    let max = limits::STREAM_OFFSET_COMPONENT_MAX;
    assert_eq!(at(0, max - 1).after_append(1), Ok(at(0, max)));
    assert_eq!(at(0, max).after_append(1), Err(OffsetError::Exhausted));
    assert_eq!(at(0, 1).after_append(u64::MAX), Err(OffsetError::Exhausted));
}

#[test]
fn query_values_absent_single_or_repeated() {
    assert_eq!(OffsetQuery::from_query_values(&[]), Ok(None));
    assert_eq!(
        OffsetQuery::from_query_values(&["now"]),
        Ok(Some(OffsetQuery::Now))
    );
    assert_eq!(
        OffsetQuery::from_query_values(&["a", "b"]),
        Err(OffsetError::Repeated)
    );
    assert_eq!(
        OffsetQuery::from_query_values(&["-1", "-1"]),
        Err(OffsetError::Repeated)
    );
    assert_eq!(
        OffsetQuery::from_query_values(&[""]),
        Err(OffsetError::Empty)
    );
}

#[test]
fn fork_offsets() {
    let tail = at(0, 100);
    let check_fork = |header: Option<&str>, expected: Result<Offset, OffsetError>| {
        assert_eq!(check_fork_offset(header, tail), expected, "{header:?}");
    };
    check_fork(None, Ok(tail));
    check_fork(Some(ZERO), Ok(Offset::ZERO));
    check_fork(Some("0000000000000000_0000000000000100"), Ok(tail));
    check_fork(
        Some("0000000000000000_0000000000000101"),
        Err(OffsetError::BeyondTail),
    );
    check_fork(
        Some("9999999999999999_9999999999999999"),
        Err(OffsetError::BeyondTail),
    );
    check_fork(Some("-1"), Err(OffsetError::SentinelNotAllowed));
    check_fork(Some("now"), Err(OffsetError::SentinelNotAllowed));
    check_fork(Some("1_1"), Err(OffsetError::Malformed));
    check_fork(Some(""), Err(OffsetError::Empty));
}

#[test]
fn read_query_requires_offset_for_live_modes() {
    let q = |offsets: &[&str], live: Option<&str>| parse_read_query(offsets, live, None);
    assert_eq!(
        q(&[], None).map(|r| (r.offset, r.live)),
        Ok((OffsetQuery::Start, LiveMode::CatchUp))
    );
    assert_eq!(
        q(&["now"], Some("sse")).map(|r| (r.offset, r.live)),
        Ok((OffsetQuery::Now, LiveMode::Sse))
    );
    assert_eq!(
        q(&[], Some("long-poll")),
        Err(ReadQueryError::OffsetRequired(LiveMode::LongPoll))
    );
    assert_eq!(
        q(&[], Some("sse")),
        Err(ReadQueryError::OffsetRequired(LiveMode::Sse))
    );
    assert_eq!(
        q(&["x"], None),
        Err(ReadQueryError::Offset(OffsetError::Malformed))
    );
    assert_eq!(
        q(&["-1"], Some("unknown")).map(|r| r.live),
        Ok(LiveMode::CatchUp)
    );
    assert_eq!(q(&[], Some("long-poll")).unwrap_err().status(), 400);
    let with_cursor = parse_read_query(&["-1"], Some("long-poll"), Some("123")).unwrap();
    assert_eq!(with_cursor.cursor.as_deref(), Some("123"));
}

#[test]
fn read_plans() {
    let tail = at(0, 50);
    let check_plan = |offset: &str, live: Option<&str>, closed: bool, expected: ReadStart| {
        let query = parse_read_query(&[offset], live, None).unwrap();
        assert_eq!(
            plan_read(&query, Offset::ZERO, tail, closed),
            expected,
            "{offset} {live:?} closed={closed}"
        );
    };
    let tail_s = "0000000000000000_0000000000000050";
    check_plan("now", None, false, ReadStart::TailSnapshot { tail });
    check_plan("now", None, true, ReadStart::TailSnapshot { tail });
    check_plan(
        "-1",
        None,
        false,
        ReadStart::ReadFrom { from: Offset::ZERO },
    );
    check_plan(tail_s, None, true, ReadStart::ReadFrom { from: tail });
    check_plan(
        "now",
        Some("long-poll"),
        false,
        ReadStart::WaitAt { offset: tail },
    );
    check_plan(
        "now",
        Some("long-poll"),
        true,
        ReadStart::ClosedAtTail { tail },
    );
    check_plan(
        tail_s,
        Some("long-poll"),
        false,
        ReadStart::WaitAt { offset: tail },
    );
    check_plan(
        tail_s,
        Some("long-poll"),
        true,
        ReadStart::ClosedAtTail { tail },
    );
    check_plan(
        "-1",
        Some("long-poll"),
        false,
        ReadStart::ReadFrom { from: Offset::ZERO },
    );
    check_plan(
        "now",
        Some("sse"),
        false,
        ReadStart::ReadFrom { from: tail },
    );
    check_plan(
        "-1",
        Some("sse"),
        true,
        ReadStart::ReadFrom { from: Offset::ZERO },
    );
}

proptest! {
    #[test]
    fn format_parse_round_trip(r in 0..=limits::STREAM_OFFSET_COMPONENT_MAX, b in 0..=limits::STREAM_OFFSET_COMPONENT_MAX) {
        let offset = at(r, b);
        let text = offset.to_string();
        prop_assert_eq!(text.len(), 33);
        prop_assert_eq!(Offset::parse(&text), Ok(offset));
        prop_assert_eq!(OffsetQuery::parse(&text), Ok(OffsetQuery::At(offset)));
    }

    #[test]
    fn string_order_is_offset_order(
        a in (0..=limits::STREAM_OFFSET_COMPONENT_MAX, 0..=limits::STREAM_OFFSET_COMPONENT_MAX),
        b in (0..=limits::STREAM_OFFSET_COMPONENT_MAX, 0..=limits::STREAM_OFFSET_COMPONENT_MAX),
    ) {
        let (x, y) = (at(a.0, a.1), at(b.0, b.1));
        prop_assert_eq!(x.cmp(&y), x.to_string().cmp(&y.to_string()));
    }

    #[test]
    fn parsing_arbitrary_strings_never_panics(s in any::<String>()) {
        let parsed = OffsetQuery::parse(&s);
        // Whatever parses as a real offset prints back to the same text.
        if let Ok(OffsetQuery::At(offset)) = parsed {
            prop_assert_eq!(offset.to_string(), s.as_str());
        }
        let _ = parse_read_query(&[&s], Some(&s), Some(&s));
        let _ = check_fork_offset(Some(&s), Offset::ZERO);
    }

    #[test]
    fn near_miss_shapes_never_panic(s in "[0-9_\\-now ,/]{0,40}") {
        if let Ok(OffsetQuery::At(offset)) = OffsetQuery::parse(&s) {
            prop_assert_eq!(offset.to_string(), s.as_str());
        }
    }

    #[test]
    fn appends_keep_offsets_increasing(start in 0..1_000_000u64, sizes in proptest::collection::vec(1..10_000u64, 1..50)) {
        let mut offset = at(0, start);
        for size in sizes {
            let next = offset.after_append(size).unwrap();
            prop_assert!(next.to_string() > offset.to_string());
            offset = next;
        }
    }
}
