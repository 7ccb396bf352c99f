//! Idempotent producer decisions, driven by `tests/fixtures/streams/producer.json`.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use serde_json::Value;
use turnkeep::core::limits;
use turnkeep::core::streams::producer::{
    check_producer_capacity, commit_producer, parse_producer_headers, validate_producer,
    ProducerDecision, ProducerHeaders, ProducerState,
};
use turnkeep::core::streams::Rejection;

fn fixture() -> Value {
    let text = include_str!("fixtures/streams/producer.json");
    serde_json::from_str(text).expect("fixture is JSON")
}

fn state_of(v: &Value) -> Option<ProducerState> {
    if v.is_null() {
        return None;
    }
    Some(ProducerState {
        epoch: v["epoch"].as_u64().expect("epoch"),
        last_seq: v["last_seq"].as_u64().expect("last_seq"),
    })
}

fn headers(epoch: u64, seq: u64) -> ProducerHeaders {
    ProducerHeaders {
        id: "writer-1".to_owned(),
        epoch,
        seq,
        items: None,
    }
}

/// One validate + commit case: status, response headers and the committed state.
fn check(name: &str, state: Option<ProducerState>, request: &ProducerHeaders, expected: &Value) {
    let decision = validate_producer(state.as_ref(), request);
    assert_eq!(
        decision.status() as u64,
        expected["status"].as_u64().unwrap(),
        "{name}: status"
    );
    let got: serde_json::Map<String, Value> = decision
        .response_headers()
        .into_iter()
        .map(|(k, v)| (k.to_owned(), Value::String(v)))
        .collect();
    assert_eq!(Value::Object(got), expected["headers"], "{name}: headers");
    let next = commit_producer(state.as_ref(), &decision);
    assert_eq!(
        next,
        state_of(&expected["next_state"]),
        "{name}: committed state"
    );
}

#[test]
fn every_decision_matches_the_fixture() {
    let fixture = fixture();
    let cases = fixture["validate"].as_array().unwrap();
    assert!(cases.len() >= 10);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let request = headers(
            case["epoch"].as_u64().unwrap(),
            case["seq"].as_u64().unwrap(),
        );
        check(name, state_of(&case["state"]), &request, case);
    }
}

#[test]
fn every_decision_variant_is_covered_by_the_fixture() {
    let fixture = fixture();
    let mut seen = [false; 5];
    for case in fixture["validate"].as_array().unwrap() {
        let request = headers(
            case["epoch"].as_u64().unwrap(),
            case["seq"].as_u64().unwrap(),
        );
        let index = match validate_producer(state_of(&case["state"]).as_ref(), &request) {
            ProducerDecision::Accepted { .. } => 0,
            ProducerDecision::Duplicate { .. } => 1,
            ProducerDecision::StaleEpoch { .. } => 2,
            ProducerDecision::NewEpochSeqNotZero { .. } => 3,
            ProducerDecision::SequenceGap { .. } => 4,
        };
        seen[index] = true;
    }
    assert_eq!(seen, [true; 5]);
}

#[test]
fn header_parsing_matches_the_fixture() {
    let fixture = fixture();
    for case in fixture["headers"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let result = parse_producer_headers(
            case["id"].as_str(),
            case["epoch"].as_str(),
            case["seq"].as_str(),
        );
        match (case["result"].as_str().unwrap(), result) {
            ("none", Ok(None)) => {}
            ("ok", Ok(Some(h))) => {
                assert_eq!(h.id, case["id"].as_str().unwrap(), "{name}");
                assert_eq!(h.epoch, case["epoch_value"].as_u64().unwrap(), "{name}");
                assert_eq!(h.seq, case["seq_value"].as_u64().unwrap(), "{name}");
            }
            (code, Err(e)) => {
                assert_eq!(e.code(), code, "{name}");
                assert_eq!(e.status(), 400, "{name}");
                assert!(!e.to_string().is_empty(), "{name}");
            }
            (expected, got) => panic!("{name}: expected {expected}, got {got:?}"),
        }
    }
}

#[test]
fn producer_id_length_is_bounded() {
    let ok = "p".repeat(limits::STREAM_PRODUCER_ID_BYTES_MAX);
    let long = "p".repeat(limits::STREAM_PRODUCER_ID_BYTES_MAX + 1);
    assert!(parse_producer_headers(Some(&ok), Some("0"), Some("0")).is_ok());
    let err = parse_producer_headers(Some(&long), Some("0"), Some("0")).unwrap_err();
    assert_eq!(err.code(), "streams.v1.producer_id_too_long");
}

#[test]
fn scenarios_replay_through_validate_and_commit() {
    let fixture = fixture();
    for scenario in fixture["scenarios"].as_array().unwrap() {
        let name = scenario["name"].as_str().unwrap();
        let mut state: Option<ProducerState> = None;
        for (i, step) in scenario["steps"].as_array().unwrap().iter().enumerate() {
            let step: Vec<u64> = step
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect();
            let decision = validate_producer(state.as_ref(), &headers(step[0], step[1]));
            assert_eq!(
                u64::from(decision.status()),
                step[2],
                "{name}, step {i}: {decision:?}"
            );
            state = commit_producer(state.as_ref(), &decision);
        }
    }
}

#[test]
fn capacity_refuses_only_new_ids_at_the_limit() {
    let max = limits::STREAM_PRODUCERS_MAX;
    assert!(check_producer_capacity(max - 1, false).is_ok());
    assert!(check_producer_capacity(max, true).is_ok());
    let err = check_producer_capacity(max, false).unwrap_err();
    assert_eq!(
        (err.status(), err.code()),
        (429, "streams.v1.producer_table_full")
    );
}

#[test]
fn producer_seq_count_is_parsed_with_the_other_headers() {
    use turnkeep::core::streams::producer::{with_seq_count, ProducerHeaderError};
    let parsed = |count: Option<&str>| {
        let p = parse_producer_headers(Some("p"), Some("1"), Some("10")).unwrap();
        with_seq_count(p, count)
    };
    assert_eq!(parsed(None).unwrap().unwrap().items, None);
    assert_eq!(parsed(Some("3")).unwrap().unwrap().items, Some(3));
    assert_eq!(parsed(Some("3")).unwrap().unwrap().last_seq(), 12);
    let max = limits::STREAM_PRODUCER_SEQ_COUNT_MAX.to_string();
    assert!(parsed(Some(&max)).is_ok());
    for bad in ["0", "-1", "1.5", "", "1001", "x"] {
        assert_eq!(
            parsed(Some(bad)),
            Err(ProducerHeaderError::InvalidSeqCount),
            "{bad:?}"
        );
    }
    assert_eq!(
        with_seq_count(None, Some("2")),
        Err(ProducerHeaderError::InvalidSeqCount),
        "a count without the producer headers"
    );
    let near_max = parse_producer_headers(Some("p"), Some("0"), Some("9007199254740990")).unwrap();
    assert_eq!(
        with_seq_count(near_max, Some("3")),
        Err(ProducerHeaderError::InvalidSeqCount),
        "the last seq would pass 2^53-1"
    );
}
