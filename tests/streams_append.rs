//! One POST end to end: every branch of `decide_append`, in the protocol's precedence order.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use turnkeep::core::limits;
use turnkeep::core::streams::append::{
    decide_append, AppendCommit, AppendData, AppendDecision, AppendRejection, AppendRequest,
    StreamForAppend,
};
use turnkeep::core::streams::closure::{ClosedBy, ClosedStreamDecision};
use turnkeep::core::streams::offset::Offset;
use turnkeep::core::streams::producer::{ProducerDecision, ProducerHeaders, ProducerState};
use turnkeep::core::streams::Rejection;

const TAIL: Offset = Offset {
    read_seq: 0,
    byte_offset: 100,
};

fn open_stream(content_type: &str) -> StreamForAppend<'_> {
    StreamForAppend {
        content_type,
        tail: TAIL,
        stored_bytes: 100,
        closed: false,
        closed_by: None,
        last_stream_seq: Some("005"),
        producer_state: None,
        known_producers: 0,
    }
}

fn request<'a>(content_type: Option<&'a str>, body: &'a [u8]) -> AppendRequest<'a> {
    AppendRequest {
        content_type,
        stream_closed: None,
        stream_seq: None,
        producer: None,
        body,
    }
}

/// Expected outcome: the status and, for refusals, the diagnostic code.
#[derive(Debug, PartialEq)]
enum Expect {
    Commit(u16),
    Closed(ClosedStreamDecision),
    Producer(u16),
    Rejected(u16, &'static str),
}

fn check(
    name: &str,
    stream: &StreamForAppend<'_>,
    request: &AppendRequest<'_>,
    expected: Expect,
) -> Option<AppendCommit> {
    let decision = decide_append(stream, request);
    let got = match &decision {
        AppendDecision::Commit(c) => Expect::Commit(c.status),
        AppendDecision::Closed(d) => Expect::Closed(*d),
        AppendDecision::Producer(d) => Expect::Producer(d.status()),
        AppendDecision::Rejected(r) => Expect::Rejected(r.status(), r.code()),
    };
    assert_eq!(got, expected, "{name}: {decision:?}");
    match decision {
        AppendDecision::Commit(c) => Some(c),
        _ => None,
    }
}

fn producer(epoch: u64, seq: u64) -> ProducerHeaders {
    ProducerHeaders {
        id: "writer".to_owned(),
        epoch,
        seq,
        items: None,
    }
}

#[test]
fn request_shape_checks_come_first() {
    let text = open_stream("text/plain");
    let closed = StreamForAppend {
        closed: true,
        ..text
    };
    check(
        "empty body",
        &text,
        &request(Some("text/plain"), b""),
        Expect::Rejected(400, "streams.v1.empty_append"),
    );
    check(
        "empty body on closed",
        &closed,
        &request(Some("text/plain"), b""),
        Expect::Rejected(400, "streams.v1.empty_append"),
    );
    let big = vec![b'x'; limits::STREAM_APPEND_BYTES_MAX as usize + 1];
    check(
        "too large",
        &text,
        &request(Some("text/plain"), &big),
        Expect::Rejected(413, "streams.v1.append_too_large"),
    );
    check(
        "no content type",
        &text,
        &request(None, b"x"),
        Expect::Rejected(400, "streams.v1.content_type_missing"),
    );
    check(
        "no content type on closed",
        &closed,
        &request(None, b"x"),
        Expect::Rejected(400, "streams.v1.content_type_missing"),
    );
    check(
        "mismatch",
        &text,
        &request(Some("application/json"), b"{}"),
        Expect::Rejected(409, "streams.v1.content_type_mismatch"),
    );
}

#[test]
fn plain_appends_move_the_tail_by_the_body() {
    let text = open_stream("text/plain");
    let commit = check(
        "append",
        &text,
        &request(Some("TEXT/PLAIN; charset=utf-8"), b"hello"),
        Expect::Commit(204),
    )
    .unwrap();
    assert_eq!(commit.data, AppendData::Bytes(b"hello".to_vec()));
    assert_eq!(commit.stored_bytes, 5);
    assert_eq!(
        commit.next_offset,
        Offset {
            read_seq: 0,
            byte_offset: 105
        }
    );
    assert_eq!(
        (commit.close, commit.producer, commit.stream_seq.as_deref()),
        (false, None, None)
    );
    assert!(commit.producer_headers.is_empty());
}

#[test]
fn closed_streams_answer_before_other_conflicts() {
    let closer = ClosedBy {
        producer_id: "writer".to_owned(),
        epoch: 0,
        seq: 3,
    };
    let closed = StreamForAppend {
        closed: true,
        closed_by: Some(&closer),
        ..open_stream("text/plain")
    };
    let close_only = AppendRequest {
        stream_closed: Some("true"),
        ..request(None, b"")
    };
    check(
        "close again",
        &closed,
        &close_only,
        Expect::Closed(ClosedStreamDecision::AlreadyClosed),
    );
    check(
        "append",
        &closed,
        &request(Some("text/plain"), b"x"),
        Expect::Closed(ClosedStreamDecision::Conflict),
    );
    check(
        "append with wrong type",
        &closed,
        &request(Some("application/json"), b"{}"),
        Expect::Closed(ClosedStreamDecision::Conflict),
    );
    let retry = producer(0, 3);
    let retry_req = AppendRequest {
        producer: Some(&retry),
        stream_closed: Some("true"),
        ..request(Some("text/plain"), b"final")
    };
    check(
        "closing retry",
        &closed,
        &retry_req,
        Expect::Closed(ClosedStreamDecision::DuplicateOfClosingRequest { epoch: 0, seq: 3 }),
    );
    let other = producer(0, 4);
    let other_req = AppendRequest {
        producer: Some(&other),
        ..close_only
    };
    check(
        "other producer close",
        &closed,
        &other_req,
        Expect::Closed(ClosedStreamDecision::Conflict),
    );
}

#[test]
fn close_only_skips_content_type_and_stream_seq() {
    let text = open_stream("text/plain");
    let close_only = AppendRequest {
        stream_closed: Some("TRUE"),
        stream_seq: Some("001"), // would regress, but close-only ignores it
        ..request(Some("application/x-unrelated"), b"")
    };
    let commit = check("close-only", &text, &close_only, Expect::Commit(204)).unwrap();
    assert_eq!(
        (commit.data, commit.stored_bytes, commit.next_offset),
        (AppendData::Nothing, 0, TAIL)
    );
    assert!(commit.close);
    assert_eq!((commit.closed_by, commit.stream_seq), (None, None));
}

#[test]
fn producer_close_only_is_204_and_remembers_the_closer() {
    let text = open_stream("text/plain");
    let p = producer(2, 0);
    let req = AppendRequest {
        producer: Some(&p),
        stream_closed: Some("true"),
        ..request(None, b"")
    };
    let commit = check("producer close-only", &text, &req, Expect::Commit(204)).unwrap();
    assert_eq!(
        commit.producer,
        Some(ProducerState {
            epoch: 2,
            last_seq: 0
        })
    );
    assert_eq!(
        commit.closed_by,
        Some(ClosedBy {
            producer_id: "writer".to_owned(),
            epoch: 2,
            seq: 0
        })
    );
    assert_eq!(
        commit.producer_headers,
        vec![
            ("Producer-Epoch", "2".to_owned()),
            ("Producer-Seq", "0".to_owned())
        ]
    );
}

#[test]
fn producer_decisions_precede_stream_seq_and_json() {
    let state = ProducerState {
        epoch: 1,
        last_seq: 4,
    };
    let json = StreamForAppend {
        producer_state: Some(&state),
        known_producers: 1,
        ..open_stream("application/json")
    };
    let dup = producer(1, 4);
    let dup_req = AppendRequest {
        producer: Some(&dup),
        stream_seq: Some("001"),
        ..request(Some("application/json"), b"{ bad")
    };
    check(
        "duplicate beats seq and JSON",
        &json,
        &dup_req,
        Expect::Producer(204),
    );
    let stale = producer(0, 5);
    check(
        "stale",
        &json,
        &AppendRequest {
            producer: Some(&stale),
            ..dup_req
        },
        Expect::Producer(403),
    );
    let gap = producer(1, 7);
    check(
        "gap",
        &json,
        &AppendRequest {
            producer: Some(&gap),
            ..dup_req
        },
        Expect::Producer(409),
    );
    let bad_epoch = producer(2, 1);
    check(
        "new epoch seq 1",
        &json,
        &AppendRequest {
            producer: Some(&bad_epoch),
            ..dup_req
        },
        Expect::Producer(400),
    );
    let next = producer(1, 5);
    let next_req = AppendRequest {
        producer: Some(&next),
        ..dup_req
    };
    check(
        "accepted, then seq regression",
        &json,
        &next_req,
        Expect::Rejected(409, "streams.v1.stream_seq_regression"),
    );
    let next_req = AppendRequest {
        stream_seq: Some("006"),
        ..next_req
    };
    check(
        "accepted, then invalid JSON",
        &json,
        &next_req,
        Expect::Rejected(400, "streams.v1.json_invalid"),
    );
    let good = AppendRequest {
        body: b"[{\"a\": 1}, [2, 3]]",
        stream_closed: Some("true"),
        ..next_req
    };
    let commit = check("accepted", &json, &good, Expect::Commit(200)).unwrap();
    assert_eq!(
        commit.data,
        AppendData::Json(vec!["{\"a\":1}".to_owned(), "[2,3]".to_owned()])
    );
    assert_eq!(commit.stored_bytes, "{\"a\":1},[2,3]".len() as u64);
    assert_eq!(
        commit.next_offset,
        Offset {
            read_seq: 0,
            byte_offset: 100 + commit.stored_bytes
        }
    );
    assert_eq!(
        commit.producer,
        Some(ProducerState {
            epoch: 1,
            last_seq: 5
        })
    );
    assert_eq!(commit.stream_seq.as_deref(), Some("006"));
    assert!(commit.close);
    assert_eq!(
        commit.closed_by,
        Some(ClosedBy {
            producer_id: "writer".to_owned(),
            epoch: 1,
            seq: 5
        })
    );
    assert_eq!(
        commit.producer_headers,
        vec![
            ("Producer-Epoch", "1".to_owned()),
            ("Producer-Seq", "5".to_owned())
        ]
    );
    let decision = decide_append(
        &json,
        &AppendRequest {
            producer: Some(&dup),
            ..good
        },
    );
    assert_eq!(
        decision,
        AppendDecision::Producer(ProducerDecision::Duplicate {
            epoch: 1,
            highest_seq: 4
        })
    );
}

#[test]
fn json_mode_refusals() {
    let json = open_stream("application/json; charset=utf-8");
    check(
        "empty array",
        &json,
        &request(Some("application/json"), b"[]"),
        Expect::Rejected(400, "streams.v1.json_empty_array"),
    );
    check(
        "invalid",
        &json,
        &request(Some("application/json"), b"{ invalid json }"),
        Expect::Rejected(400, "streams.v1.json_invalid"),
    );
    let one = check(
        "one value",
        &json,
        &request(Some("application/json"), b" {\"x\": 1} "),
        Expect::Commit(204),
    )
    .unwrap();
    assert_eq!(one.data, AppendData::Json(vec!["{\"x\":1}".to_owned()]));
}

#[test]
fn limits_on_the_stream() {
    let text = open_stream("text/plain");
    let seq_long = "9".repeat(limits::STREAM_SEQ_BYTES_MAX + 1);
    let req = AppendRequest {
        stream_seq: Some(&seq_long),
        ..request(Some("text/plain"), b"x")
    };
    check(
        "seq too long",
        &text,
        &req,
        Expect::Rejected(400, "streams.v1.stream_seq_too_long"),
    );
    let almost_full = StreamForAppend {
        stored_bytes: limits::STREAM_BYTES_MAX - 2,
        ..text
    };
    check(
        "fits exactly",
        &almost_full,
        &request(Some("text/plain"), b"xy"),
        Expect::Commit(204),
    );
    check(
        "one byte too many",
        &almost_full,
        &request(Some("text/plain"), b"xyz"),
        Expect::Rejected(413, "streams.v1.stream_full"),
    );
    let crowded = StreamForAppend {
        known_producers: limits::STREAM_PRODUCERS_MAX,
        ..text
    };
    let newcomer = producer(0, 0);
    let req = AppendRequest {
        producer: Some(&newcomer),
        ..request(Some("text/plain"), b"x")
    };
    check(
        "producer table full",
        &crowded,
        &req,
        Expect::Rejected(429, "streams.v1.producer_table_full"),
    );
    let known = ProducerState {
        epoch: 0,
        last_seq: 0,
    };
    let crowded_known = StreamForAppend {
        producer_state: Some(&known),
        ..crowded
    };
    let req = AppendRequest {
        producer: Some(&producer(0, 1)),
        ..req
    };
    check(
        "known producer still writes",
        &crowded_known,
        &req,
        Expect::Commit(200),
    );
}

#[test]
fn every_rejection_has_a_message_and_code() {
    use turnkeep::core::streams::content_type::ContentTypeError;
    use turnkeep::core::streams::json_mode::JsonBodyError;
    for r in [
        AppendRejection::EmptyBody,
        AppendRejection::BodyTooLarge,
        AppendRejection::ContentType(ContentTypeError::Missing),
        AppendRejection::ContentType(ContentTypeError::Mismatch),
        AppendRejection::TooManyProducers,
        AppendRejection::StreamSeqTooLong,
        AppendRejection::StreamSeqRegression {
            last: "2".into(),
            received: "1".into(),
        },
        AppendRejection::Json(JsonBodyError::Invalid),
        AppendRejection::Json(JsonBodyError::EmptyArray),
        AppendRejection::StreamFull,
    ] {
        assert!(r.code().starts_with("streams.v1."), "{r:?}");
        assert!(!r.to_string().is_empty());
        assert!([400, 409, 413, 429].contains(&r.status()));
    }
}

/// Item seqs (`Producer-Seq-Count`, turnkeep's extension): each JSON item has its own seq; a
/// batch overlapping what is stored appends only the new items; the count must match the items.
#[test]
fn item_seqs_give_each_json_item_its_seq() {
    let stored = ProducerState {
        epoch: 2,
        last_seq: 4,
    };
    let json = StreamForAppend {
        producer_state: Some(&stored),
        known_producers: 1,
        ..open_stream("application/json")
    };
    let items = |seq: u64, n: u64| ProducerHeaders {
        items: Some(n),
        ..producer(2, seq)
    };
    let body = br#"[{"n":5},{"n":6},{"n":7}]"#;
    fn with<'a>(p: &'a ProducerHeaders, body: &'a [u8]) -> AppendRequest<'a> {
        AppendRequest {
            producer: Some(p),
            ..request(Some("application/json"), body)
        }
    }
    // Seqs 5..=7, next after 4: all three stored, the highest seq and the count echoed.
    let next = items(5, 3);
    let commit = check("next three", &json, &with(&next, body), Expect::Commit(200)).unwrap();
    assert_eq!(
        commit.data,
        AppendData::Json(vec![
            r#"{"n":5}"#.into(),
            r#"{"n":6}"#.into(),
            r#"{"n":7}"#.into()
        ])
    );
    assert_eq!(
        commit.producer,
        Some(ProducerState {
            epoch: 2,
            last_seq: 7
        })
    );
    assert!(commit
        .producer_headers
        .contains(&("Producer-Seq", "7".into())));
    assert!(commit
        .producer_headers
        .contains(&("Producer-Seq-Count", "3".into())));
    // Seqs 3..=5: 3 and 4 are stored, only the item with seq 5 goes in.
    let overlap = items(3, 3);
    let commit = check("overlap", &json, &with(&overlap, body), Expect::Commit(200)).unwrap();
    assert_eq!(commit.data, AppendData::Json(vec![r#"{"n":7}"#.into()]));
    assert_eq!(
        commit.producer,
        Some(ProducerState {
            epoch: 2,
            last_seq: 5
        })
    );
    // Seqs 2..=4: all stored.
    check(
        "duplicate",
        &json,
        &with(&items(2, 3), body),
        Expect::Producer(204),
    );
    // Seqs 6..: a gap after 4.
    check(
        "gap",
        &json,
        &with(&items(6, 3), body),
        Expect::Producer(409),
    );
    // Two declared, three sent; and a byte stream takes one item only.
    check(
        "count mismatch",
        &json,
        &with(&items(5, 2), body),
        Expect::Rejected(400, "streams.v1.producer_seq_count_invalid"),
    );
    let bytes = StreamForAppend {
        producer_state: Some(&stored),
        known_producers: 1,
        ..open_stream("text/plain")
    };
    let two = items(5, 2);
    check(
        "bytes, two items",
        &bytes,
        &AppendRequest {
            producer: Some(&two),
            ..request(Some("text/plain"), b"xy")
        },
        Expect::Rejected(400, "streams.v1.producer_seq_count_invalid"),
    );
    // Without the header the protocol as written: one seq for the batch.
    let plain = producer(2, 5);
    let commit = check("one seq", &json, &with(&plain, body), Expect::Commit(200)).unwrap();
    assert_eq!(
        commit.producer,
        Some(ProducerState {
            epoch: 2,
            last_seq: 5
        })
    );
    assert!(!commit
        .producer_headers
        .iter()
        .any(|(k, _)| *k == "Producer-Seq-Count"));
}
