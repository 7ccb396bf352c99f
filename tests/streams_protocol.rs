//! Durable Streams pure rules other than offsets and producers: `Stream-Seq`, TTL / Expires-At,
//! cursors, JSON mode (fixture-driven), content types and closure.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use proptest::prelude::*;
use serde_json::Value;
use turnkeep::core::limits;
use turnkeep::core::streams::closure::{
    classify_append, closed_by, decide_on_closed, parse_stream_closed, AppendKind, ClosedBy,
    ClosedStreamDecision, EmptyAppend,
};
use turnkeep::core::streams::content_type::{
    check_append_content_type, check_fork_content_type, is_json, matches,
    resolve_create_content_type, sse_needs_base64, ContentTypeError, CreateContentType,
};
use turnkeep::core::streams::cursor::{current_interval, jitter_intervals, response_cursor};
use turnkeep::core::streams::json_mode::{flatten_json_body, json_array_body, JsonWrite};
use turnkeep::core::streams::producer::ProducerHeaders;
use turnkeep::core::streams::stream_seq::{check_stream_seq, commit_stream_seq, StreamSeqDecision};
use turnkeep::core::streams::ttl::{
    parse_expires_at, parse_expiry_headers, parse_ttl_seconds, renewal_needs_save,
    resolve_fork_expiry, Access, Expiry, ExpiryError, Lifetime,
};
use turnkeep::core::streams::Rejection;

// ---- Stream-Seq

fn check_seq(last: Option<&str>, header: Option<&str>, expected: Option<u16>) {
    let decision = check_stream_seq(last, header).expect("within length");
    assert_eq!(
        decision.rejection_status(),
        expected,
        "last {last:?}, header {header:?}"
    );
}

#[test]
fn stream_seq_is_strictly_increasing_bytewise() {
    check_seq(None, None, None);
    check_seq(Some("5"), None, None);
    check_seq(None, Some("001"), None);
    check_seq(Some("001"), Some("002"), None);
    check_seq(Some("002"), Some("001"), Some(409));
    check_seq(Some("001"), Some("001"), Some(409));
    check_seq(Some("2"), Some("10"), Some(409)); // "10" < "2" bytewise
    check_seq(Some("09"), Some("10"), None);
    check_seq(Some("a"), Some("B"), Some(409)); // 'B' (0x42) < 'a' (0x61)
    check_seq(Some("B"), Some("a"), None);
    check_seq(Some("app-seq-001"), Some("app-seq-001"), Some(409));
    check_seq(Some("abc"), Some("abcd"), None);
    check_seq(None, Some(""), None);
    check_seq(Some(""), Some(""), Some(409));
}

#[test]
fn stream_seq_commits_only_accepted_values() {
    let accepted = check_stream_seq(Some("1"), Some("2")).unwrap();
    assert_eq!(
        commit_stream_seq(Some("1"), &accepted).as_deref(),
        Some("2")
    );
    let refused = check_stream_seq(Some("2"), Some("1")).unwrap();
    assert!(matches!(refused, StreamSeqDecision::Regression { .. }));
    assert_eq!(commit_stream_seq(Some("2"), &refused).as_deref(), Some("2"));
    assert_eq!(
        commit_stream_seq(None, &StreamSeqDecision::NotProvided),
        None
    );
    let long = "x".repeat(limits::STREAM_SEQ_BYTES_MAX + 1);
    let err = check_stream_seq(None, Some(&long)).unwrap_err();
    assert_eq!(
        (err.status(), err.code()),
        (400, "streams.v1.stream_seq_too_long")
    );
}

proptest! {
    #[test]
    fn stream_seq_agrees_with_byte_order(a in "[0-9a-zA-Z]{1,12}", b in "[0-9a-zA-Z]{1,12}") {
        let decision = check_stream_seq(Some(&a), Some(&b)).unwrap();
        prop_assert_eq!(decision.rejection_status().is_none(), b.as_bytes() > a.as_bytes());
    }
}

// ---- TTL and Expires-At

fn check_ttl(input: &str, expected: Result<u64, ExpiryError>) {
    assert_eq!(parse_ttl_seconds(input), expected, "Stream-TTL {input:?}");
}

#[test]
fn ttl_header_is_a_canonical_integer() {
    check_ttl("0", Ok(0));
    check_ttl("1", Ok(1));
    check_ttl("3600", Ok(3600));
    check_ttl(
        &limits::STREAM_TTL_SECONDS_MAX.to_string(),
        Ok(limits::STREAM_TTL_SECONDS_MAX),
    );
    for bad in [
        "", "abc", "-1", "+3600", "03600", "00", "3600.0", "3.6e3", " 3600", "3600 ", "1_000",
        "0x10",
    ] {
        check_ttl(bad, Err(ExpiryError::InvalidTtl));
    }
    check_ttl(
        &(limits::STREAM_TTL_SECONDS_MAX + 1).to_string(),
        Err(ExpiryError::InvalidTtl),
    );
    check_ttl("99999999999999999999999", Err(ExpiryError::InvalidTtl));
}

fn check_expires(input: &str, expected_ms: Option<u64>) {
    let got = parse_expires_at(input).ok().map(|e| {
        assert_eq!(e.raw, input, "kept as given");
        e.at_ms
    });
    assert_eq!(got, expected_ms, "Stream-Expires-At {input:?}");
}

#[test]
fn expires_at_is_rfc3339() {
    check_expires("2026-07-11T03:00:00.000Z", Some(1_783_738_800_000));
    check_expires("2026-07-11T03:00:00Z", Some(1_783_738_800_000));
    check_expires("2026-07-11T03:00:00.000+00:00", Some(1_783_738_800_000));
    check_expires("2026-07-11T05:30:00+02:30", Some(1_783_738_800_000));
    check_expires("2026-07-10T23:00:00-04:00", Some(1_783_738_800_000));
    check_expires("2026-07-11t03:00:00z", Some(1_783_738_800_000));
    check_expires("2026-07-11T03:00:00.123456789Z", Some(1_783_738_800_123));
    check_expires("2000-02-29T00:00:00.5Z", Some(951_782_400_500));
    check_expires("1970-01-01T00:00:00Z", Some(0));
    check_expires("1969-12-31T23:59:59Z", Some(0)); // before 1970: already expired
    for bad in [
        "not-a-timestamp",
        "",
        "2026-07-11",
        "2026-07-11T03:00Z",
        "2026-07-11T03:00:00",
        "2026-02-29T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-07-11T24:00:00Z",
        "2026-07-11T03:60:00Z",
        "2026-07-11T03:00:60Z",
        "2026-07-11T03:00:00.Z",
        "2026-07-11T03:00:00+0530",
        "2026-07-11T03:00:00+24:00",
        "2026-07-11 03:00:00Z",
        "+2026-07-11T03:00:00Z",
        "1783738800000",
    ] {
        check_expires(bad, None);
    }
    let long = format!(
        "2026-07-11T03:00:00.{}Z",
        "1".repeat(limits::STREAM_EXPIRES_AT_CHARS_MAX)
    );
    check_expires(&long, None);
}

#[test]
fn expiry_headers_combine() {
    assert_eq!(parse_expiry_headers(None, None), Ok(Expiry::Never));
    assert_eq!(
        parse_expiry_headers(Some("60"), None),
        Ok(Expiry::Ttl { seconds: 60 })
    );
    assert!(matches!(
        parse_expiry_headers(None, Some("2026-07-11T03:00:00Z")),
        Ok(Expiry::At(_))
    ));
    assert_eq!(
        parse_expiry_headers(Some("60"), Some("2026-07-11T03:00:00Z")),
        Err(ExpiryError::Both)
    );
    assert_eq!(
        parse_expiry_headers(Some("x"), None),
        Err(ExpiryError::InvalidTtl)
    );
    assert_eq!(
        parse_expiry_headers(None, Some("x")),
        Err(ExpiryError::InvalidExpiresAt)
    );
    for e in [
        ExpiryError::Both,
        ExpiryError::InvalidTtl,
        ExpiryError::InvalidExpiresAt,
    ] {
        assert_eq!(e.status(), 400);
    }
    assert_eq!(
        Expiry::Ttl { seconds: 3600 }.response_header(),
        Some(("Stream-TTL", "3600".to_owned()))
    );
    let at = parse_expiry_headers(None, Some("2026-07-11T03:00:00+00:00")).unwrap();
    assert_eq!(
        at.response_header(),
        Some(("Stream-Expires-At", "2026-07-11T03:00:00+00:00".to_owned()))
    );
    assert_eq!(Expiry::Never.response_header(), None);
}

#[test]
fn ttl_slides_on_reads_and_writes_but_not_head() {
    let created = Lifetime::new(Expiry::Ttl { seconds: 2 }, 10_000);
    assert_eq!(created.deadline_ms(), Some(12_000));
    assert!(!created.is_expired(11_999));
    assert!(created.is_expired(12_000));
    let after_head = created.touched(Access::Head, 11_500);
    assert!(after_head.is_expired(12_000), "HEAD does not renew");
    let after_read = created.touched(Access::Read, 11_500);
    assert_eq!(after_read.deadline_ms(), Some(13_500));
    let after_write = after_read.touched(Access::Write, 13_000);
    assert!(!after_write.is_expired(14_999));
    assert!(after_write.is_expired(15_000));
    let clock_went_back = after_write.touched(Access::Read, 1_000);
    assert_eq!(
        clock_went_back.deadline_ms(),
        Some(15_000),
        "never moves backwards"
    );
}

#[test]
fn a_read_renewal_is_saved_only_once_it_moves_the_stored_access_by_the_bound() {
    let bound = limits::STREAM_TTL_RENEWAL_UNSAVED_MS_MAX;
    let check = |saved: u64, renewed: u64, expected: bool| {
        assert_eq!(
            renewal_needs_save(saved, renewed),
            expected,
            "saved {saved}, renewed {renewed}"
        );
    };
    check(10_000, 10_000, false); // readers woken in the append's millisecond
    check(10_000, 10_000 + bound - 1, false); // ... or just after it: kept in memory
    check(10_000, 10_000 + bound, true);
    check(10_000, 99_000, true);
    check(10_000, 9_000, false); // a clock that went back never writes an older access
}

#[test]
fn expires_at_never_moves_and_never_expires_without_expiry() {
    let at = parse_expiry_headers(None, Some("1970-01-01T00:00:04Z")).unwrap();
    let lifetime = Lifetime::new(at, 1_000)
        .touched(Access::Read, 3_000)
        .touched(Access::Write, 3_500);
    assert_eq!(lifetime.deadline_ms(), Some(4_000));
    assert!(lifetime.is_expired(4_000));
    let never = Lifetime::new(Expiry::Never, 0);
    assert_eq!(never.deadline_ms(), None);
    assert!(!never.is_expired(u64::MAX));
}

#[test]
fn fork_expiry_table() {
    let ttl = |s| Expiry::Ttl { seconds: s };
    let at = |s: &str| parse_expiry_headers(None, Some(s)).unwrap();
    let (a1, a2) = (at("2030-01-01T00:00:00Z"), at("2031-01-01T00:00:00Z"));
    for (source, requested, expected) in [
        (Expiry::Never, Expiry::Never, Expiry::Never),
        (Expiry::Never, ttl(5), ttl(5)),
        (Expiry::Never, a1.clone(), a1.clone()),
        (ttl(9), Expiry::Never, ttl(9)),
        (ttl(9), ttl(5), ttl(5)),
        (ttl(9), a1.clone(), a1.clone()),
        (a1.clone(), Expiry::Never, a1.clone()),
        (a1.clone(), ttl(5), ttl(5)),
        (a1.clone(), a2.clone(), a2.clone()),
    ] {
        assert_eq!(
            resolve_fork_expiry(&source, &requested),
            expected,
            "{source:?} + {requested:?}"
        );
    }
}

proptest! {
    #[test]
    fn expiry_parsers_never_panic(s in any::<String>()) {
        let _ = parse_expiry_headers(Some(&s), None);
        let _ = parse_expiry_headers(None, Some(&s));
    }

    #[test]
    fn iso_strings_parse_to_their_own_millis(ms in 0u64..253_402_300_799_999) {
        let text = turnkeep::core::checks::format_iso_millis(ms as i64);
        prop_assert_eq!(parse_expires_at(&text).map(|e| e.at_ms), Ok(ms));
    }
}

// ---- Cursors

const EPOCH: u64 = limits::STREAM_CURSOR_EPOCH_MS;

#[test]
fn cursor_counts_twenty_second_intervals_since_the_epoch() {
    assert_eq!(current_interval(EPOCH), 0);
    assert_eq!(current_interval(EPOCH + 19_999), 0);
    assert_eq!(current_interval(EPOCH + 20_000), 1);
    assert_eq!(current_interval(EPOCH - 1), 0);
    assert_eq!(current_interval(EPOCH + 1_000 * 20_000 + 5), 1_000);
    // 2026-07-11T03:00:00Z is 55_306_800 s after 2024-10-09T00:00:00Z.
    assert_eq!(current_interval(1_783_738_800_000), 2_765_340);
}

#[test]
fn cursor_answers() {
    let now = EPOCH + 1_000 * 20_000;
    let check_cursor = |client: Option<&str>, jitter: u32, expected: &str| {
        assert_eq!(
            response_cursor(now, client, jitter),
            expected,
            "client {client:?}, jitter {jitter}"
        );
    };
    check_cursor(None, 1, "1000");
    check_cursor(Some("999"), 1, "1000"); // older: current interval
    check_cursor(Some("0"), 3600, "1000");
    check_cursor(Some("1000"), 1, "1001"); // same interval: strictly larger
    check_cursor(Some("1000"), 20, "1001");
    check_cursor(Some("1000"), 21, "1002");
    check_cursor(Some("1000"), 3600, "1180");
    check_cursor(Some("1050"), 40, "1052"); // ahead of the clock: still strictly larger
    check_cursor(Some("1000"), 0, "1001"); // jitter clamped to 1 s
    check_cursor(Some("1000"), 99_999, "1180"); // jitter clamped to 3600 s
    for junk in [
        "",
        "abc",
        "-5",
        "1e3",
        " 1000",
        "10.5",
        "99999999999999999999",
    ] {
        check_cursor(Some(junk), 7, "1000");
    }
}

#[test]
fn jitter_is_whole_intervals() {
    assert_eq!(jitter_intervals(1), 1);
    assert_eq!(jitter_intervals(20), 1);
    assert_eq!(jitter_intervals(21), 2);
    assert_eq!(jitter_intervals(3_600), 180);
}

proptest! {
    #[test]
    fn cursor_never_goes_backwards(
        now in EPOCH..EPOCH + 10_000_000_000,
        client in 0u64..1_000_000_000,
        jitter in 1u32..=3600,
    ) {
        let answer: u64 = response_cursor(now, Some(&client.to_string()), jitter).parse().unwrap();
        prop_assert!(answer >= current_interval(now));
        if client >= current_interval(now) {
            prop_assert!(answer > client);
        }
    }

    #[test]
    fn cursor_never_panics(now in any::<u64>(), client in any::<String>(), jitter in any::<u32>()) {
        let answer = response_cursor(now, Some(&client), jitter);
        prop_assert!(answer.bytes().all(|b| b.is_ascii_digit()));
    }
}

// ---- JSON mode

#[test]
fn json_bodies_match_the_fixture() {
    let fixture: Value =
        serde_json::from_str(include_str!("fixtures/streams/json_mode.json")).unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() >= 20);
    for case in cases {
        let body = case["body"].as_str().unwrap();
        for (key, write) in [("append", JsonWrite::Append), ("create", JsonWrite::Create)] {
            let expected = match (&case[key], write) {
                (Value::Null, JsonWrite::Create) => &case["append"], // same answer unless stated
                (v, _) => v,
            };
            let got = flatten_json_body(body.as_bytes(), write);
            match (expected, got) {
                (Value::Array(messages), Ok(got)) => {
                    let messages: Vec<&str> =
                        messages.iter().map(|m| m.as_str().unwrap()).collect();
                    assert_eq!(got, messages, "{key} {body:?}");
                    for m in &got {
                        assert!(
                            serde_json::from_str::<Value>(m).is_ok(),
                            "stored message is JSON: {m}"
                        );
                    }
                }
                (Value::String(code), Err(e)) => {
                    assert_eq!(e.code(), code, "{key} {body:?}");
                    assert_eq!(e.status(), 400);
                }
                (expected, got) => panic!("{key} {body:?}: expected {expected}, got {got:?}"),
            }
        }
    }
}

#[test]
fn json_body_edge_cases() {
    assert!(flatten_json_body(b"\xff\xfe", JsonWrite::Append).is_err());
    let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let max = limits::STREAM_JSON_DEPTH_MAX;
    let deepest = flatten_json_body(nested(max).as_bytes(), JsonWrite::Append).unwrap();
    assert_eq!(deepest, vec![nested(max - 1)]);
    assert!(
        serde_json::from_str::<Value>(&nested(max)).is_ok(),
        "the limit is what serde_json reads"
    );
    let deep = flatten_json_body(nested(max + 1).as_bytes(), JsonWrite::Append);
    assert_eq!(deep.unwrap_err().code(), "streams.v1.json_invalid");
    let deep_object = format!("{}1{}", "{\"a\":".repeat(max + 1), "}".repeat(max + 1));
    assert!(flatten_json_body(deep_object.as_bytes(), JsonWrite::Append).is_err());
    let big: Vec<String> = (0..1000).map(|i| format!("{{\"n\":{i}}}")).collect();
    let body = format!("[{}]", big.join(" , "));
    assert_eq!(
        flatten_json_body(body.as_bytes(), JsonWrite::Append).unwrap(),
        big
    );
}

/// Found by fuzzing (fuzz/regressions/streams_json_mode/): the body was validated by skipping
/// over values, which does not range-check numbers, so `1e400` was stored as a message that
/// serde_json (the server's own reader) cannot parse. Validation now accepts exactly what
/// serde_json parses into a `Value`.
#[test]
fn json_bodies_the_server_cannot_read_back_are_refused() {
    for body in [
        "1e400",
        "[1, -1e400]",
        "{\"a\": [1e309]}",
        "[\"\\ud800\"]",
        "{\"\\udc00\": 1}",
    ] {
        assert!(serde_json::from_str::<Value>(body).is_err(), "{body}");
        let got = flatten_json_body(body.as_bytes(), JsonWrite::Append);
        assert_eq!(
            got.map_err(|e| e.code()),
            Err("streams.v1.json_invalid"),
            "{body}"
        );
    }
    for body in [
        "1.7976931348623157e308",
        "[1e-400, -0, 18446744073709551616]",
        "[\"\\ud83d\\ude00\"]",
    ] {
        assert!(
            flatten_json_body(body.as_bytes(), JsonWrite::Append).is_ok(),
            "{body}"
        );
    }
}

#[test]
fn json_read_bodies() {
    let none: [&str; 0] = [];
    assert_eq!(json_array_body(&none), "[]");
    assert_eq!(json_array_body(&["{\"a\":1}"]), "[{\"a\":1}]");
    assert_eq!(
        json_array_body(&["1".to_owned(), "[2]".to_owned(), "\"x\"".to_owned()]),
        "[1,[2],\"x\"]"
    );
}

proptest! {
    #[test]
    fn flattening_round_trips_through_a_read(values in proptest::collection::vec(json_value(), 1..8)) {
        let body = serde_json::to_string_pretty(&Value::Array(values.clone())).unwrap();
        let stored = flatten_json_body(body.as_bytes(), JsonWrite::Append).unwrap();
        let read: Value = serde_json::from_str(&json_array_body(&stored)).unwrap();
        prop_assert_eq!(read, Value::Array(values));
    }

    #[test]
    fn a_single_value_is_one_message(value in json_value()) {
        prop_assume!(!value.is_array());
        let body = serde_json::to_string_pretty(&value).unwrap();
        let stored = flatten_json_body(body.as_bytes(), JsonWrite::Append).unwrap();
        prop_assert_eq!(stored.len(), 1);
        prop_assert_eq!(serde_json::from_str::<Value>(&stored[0]).unwrap(), value);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = flatten_json_body(&bytes, JsonWrite::Append);
        let _ = flatten_json_body(&bytes, JsonWrite::Create);
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::from),
        "[ -~\\t\\n\"\\\\é😀]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z ,\"]{0,4}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

// ---- Content types

#[test]
fn content_types_match_on_media_type() {
    for (a, b, expected) in [
        ("text/plain", "TEXT/PLAIN", true),
        ("application/json", "application/json; charset=utf-8", true),
        ("APPLICATION/JSON", " application/json ", true),
        ("text/plain", "application/json", false),
        ("application/json", "application/ndjson", false),
    ] {
        assert_eq!(matches(a, b), expected, "{a} vs {b}");
    }
    assert!(is_json("Application/JSON; charset=utf-8"));
    assert!(!is_json("application/ndjson"));
    assert!(!sse_needs_base64("text/plain"));
    assert!(!sse_needs_base64("TEXT/event-stream"));
    assert!(!sse_needs_base64("application/json"));
    assert!(sse_needs_base64("application/octet-stream"));
    assert!(sse_needs_base64("application/ndjson"));
}

#[test]
fn create_content_type_defaults_or_inherits() {
    let use_ = |s: &str| CreateContentType::Use(s.to_owned());
    for (header, fork, expected) in [
        (Some("text/plain"), false, use_("text/plain")),
        (
            Some("application/json; charset=utf-8"),
            false,
            use_("application/json; charset=utf-8"),
        ),
        (
            Some("application/vnd.api+json"),
            false,
            use_("application/vnd.api+json"),
        ),
        (None, false, use_("application/octet-stream")),
        (Some(""), false, use_("application/octet-stream")),
        (Some("garbage"), false, use_("application/octet-stream")),
        (Some("text/"), false, use_("application/octet-stream")),
        (Some("te xt/plain"), false, use_("application/octet-stream")),
        (None, true, CreateContentType::InheritFromSource),
        (Some("text/plain"), true, use_("text/plain")),
    ] {
        assert_eq!(
            resolve_create_content_type(header, fork),
            expected,
            "{header:?} fork={fork}"
        );
    }
    assert_eq!(
        check_fork_content_type(&CreateContentType::InheritFromSource, "text/plain"),
        Ok("text/plain".to_owned())
    );
    assert_eq!(
        check_fork_content_type(&use_("TEXT/plain"), "text/plain"),
        Ok("TEXT/plain".to_owned())
    );
    assert_eq!(
        check_fork_content_type(&use_("application/json"), "text/plain"),
        Err(ContentTypeError::Mismatch)
    );
}

#[test]
fn append_content_type_rules() {
    assert_eq!(
        check_append_content_type("text/plain", Some("text/plain; charset=utf-8")),
        Ok(())
    );
    assert_eq!(
        check_append_content_type("text/plain", None),
        Err(ContentTypeError::Missing)
    );
    assert_eq!(
        check_append_content_type("text/plain", Some(" ")),
        Err(ContentTypeError::Missing)
    );
    assert_eq!(
        check_append_content_type("text/plain", Some("application/json")),
        Err(ContentTypeError::Mismatch)
    );
    assert_eq!(ContentTypeError::Missing.status(), 400);
    assert_eq!(ContentTypeError::Mismatch.status(), 409);
}

// ---- Closure

fn producer(id: &str, epoch: u64, seq: u64) -> ProducerHeaders {
    ProducerHeaders {
        id: id.to_owned(),
        epoch,
        seq,
        items: None,
    }
}

#[test]
fn stream_closed_header_is_true_in_any_case_only() {
    for (value, expected) in [
        (Some("true"), true),
        (Some("TRUE"), true),
        (Some("True"), true),
        (Some("false"), false),
        (Some("1"), false),
        (Some("yes"), false),
        (Some(""), false),
        (Some(" true"), false),
        (None, false),
    ] {
        assert_eq!(parse_stream_closed(value), expected, "{value:?}");
    }
}

#[test]
fn empty_bodies_only_close() {
    assert_eq!(classify_append(0, true), Ok(AppendKind::CloseOnly));
    assert_eq!(classify_append(0, false), Err(EmptyAppend));
    assert_eq!(
        classify_append(3, false),
        Ok(AppendKind::Append { close: false })
    );
    assert_eq!(
        classify_append(3, true),
        Ok(AppendKind::Append { close: true })
    );
    assert_eq!(EmptyAppend.status(), 400);
}

#[test]
fn requests_on_a_closed_stream() {
    let closer = ClosedBy {
        producer_id: "p".to_owned(),
        epoch: 1,
        seq: 4,
    };
    let same = producer("p", 1, 4);
    let other_seq = producer("p", 1, 5);
    let other_id = producer("q", 1, 4);
    let close_only = AppendKind::CloseOnly;
    let append = AppendKind::Append { close: false };
    let append_close = AppendKind::Append { close: true };
    let dup = ClosedStreamDecision::DuplicateOfClosingRequest { epoch: 1, seq: 4 };
    for (kind, request, closed, expected) in [
        (close_only, None, None, ClosedStreamDecision::AlreadyClosed),
        (
            close_only,
            None,
            Some(&closer),
            ClosedStreamDecision::AlreadyClosed,
        ),
        (close_only, Some(&same), Some(&closer), dup),
        (append_close, Some(&same), Some(&closer), dup),
        (append, Some(&same), Some(&closer), dup),
        (
            close_only,
            Some(&other_seq),
            Some(&closer),
            ClosedStreamDecision::Conflict,
        ),
        (
            close_only,
            Some(&other_id),
            Some(&closer),
            ClosedStreamDecision::Conflict,
        ),
        (
            close_only,
            Some(&same),
            None,
            ClosedStreamDecision::Conflict,
        ),
        (append, None, None, ClosedStreamDecision::Conflict),
        (
            append_close,
            None,
            Some(&closer),
            ClosedStreamDecision::Conflict,
        ),
        (
            append,
            Some(&other_seq),
            Some(&closer),
            ClosedStreamDecision::Conflict,
        ),
    ] {
        let got = decide_on_closed(kind, request, closed);
        assert_eq!(got, expected, "{kind:?} {request:?} {closed:?}");
    }
    assert_eq!(ClosedStreamDecision::AlreadyClosed.status(), 204);
    assert_eq!(dup.status(), 204);
    assert_eq!(ClosedStreamDecision::Conflict.status(), 409);
}

#[test]
fn the_closing_producer_tuple_is_remembered() {
    let p = producer("p", 2, 7);
    let expected = Some(ClosedBy {
        producer_id: "p".to_owned(),
        epoch: 2,
        seq: 7,
    });
    assert_eq!(closed_by(AppendKind::CloseOnly, Some(&p)), expected);
    assert_eq!(
        closed_by(AppendKind::Append { close: true }, Some(&p)),
        expected
    );
    assert_eq!(
        closed_by(AppendKind::Append { close: false }, Some(&p)),
        None
    );
    assert_eq!(closed_by(AppendKind::CloseOnly, None), None);
}
