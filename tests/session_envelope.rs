//! Session envelope decode (`agentskit.chat.session` v1): golden fixtures, the check order of the reference
//! decoder, the v0 migration, field limits and canonical serialization.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use serde_json::{json, Value};
use turnkeep::core::session::{
    decode_session_snapshot, ConfirmationStatus, SessionDecodeCode, SessionEnvelope, TurnOutcome,
};

const INVALID: SessionDecodeCode = SessionDecodeCode::InvalidSnapshot;
const UNSUPPORTED: SessionDecodeCode = SessionDecodeCode::UnsupportedVersion;

/// Fixtures are compiled in, so the tests also build for targets without a file system.
fn fixture(name: &str) -> String {
    match name {
        "v1_full.json" => include_str!("fixtures/session/v1_full.json"),
        "v0_full.json" => include_str!("fixtures/session/v0_full.json"),
        "v1_full.canonical.json" => include_str!("fixtures/session/v1_full.canonical.json"),
        "v1_minimal.json" => include_str!("fixtures/session/v1_minimal.json"),
        "v1_minimal.canonical.json" => include_str!("fixtures/session/v1_minimal.canonical.json"),
        other => panic!("no fixture {other}"),
    }
    .to_owned()
}

fn fixture_value(name: &str) -> Value {
    serde_json::from_str(&fixture(name)).expect("fixture is JSON")
}

/// The full v1 fixture with `edit` applied.
fn v1_with(edit: impl FnOnce(&mut Value)) -> Value {
    let mut v = fixture_value("v1_full.json");
    edit(&mut v);
    v
}

/// Expected outcome: `Ok(())` or the code plus a fragment the detail must contain.
type Expected = Result<(), (SessionDecodeCode, &'static str)>;

fn check(label: &str, input: &Value, expected: Expected) {
    let got = decode_session_snapshot(input);
    match (&got, expected) {
        (Ok(env), Ok(())) => {
            // Whatever decodes must re-encode to something that decodes to the same envelope.
            let again = decode_session_snapshot(&env.to_value()).expect("re-decode");
            assert_eq!(&again, env, "{label}: round trip");
        }
        (Err(e), Err((code, fragment))) => {
            assert_eq!(e.code, code, "{label}: {e}");
            assert!(
                e.detail.contains(fragment),
                "{label}: detail {:?} lacks {fragment:?}",
                e.detail
            );
        }
        _ => panic!("{label}: got {got:?}, expected {expected:?}"),
    }
}

#[test]
fn golden_v1_decodes_and_serializes_in_schema_order() {
    let env = decode_session_snapshot(&fixture_value("v1_full.json")).expect("decode");
    assert_eq!(
        env.to_json_string(),
        fixture("v1_full.canonical.json").trim_end()
    );
    // The value handed to storage keeps the same key order.
    assert_eq!(env.to_value().to_string(), env.to_json_string());
    assert_eq!(env.cursor, 17);
    assert_eq!(env.terminal_turns[1].outcome, TurnOutcome::Indeterminate);
    assert_eq!(env.confirmations[0].status, ConfirmationStatus::Pending);
}

#[test]
fn golden_v0_migrates_to_the_same_v1_envelope() {
    let v0 = decode_session_snapshot(&fixture_value("v0_full.json")).expect("decode v0");
    let v1 = decode_session_snapshot(&fixture_value("v1_full.json")).expect("decode v1");
    assert_eq!(v0, v1);
    assert_eq!(
        v0.to_json_string(),
        fixture("v1_full.canonical.json").trim_end()
    );
}

#[test]
fn absent_and_empty_optionals_are_omitted_and_unknown_fields_dropped() {
    let env = decode_session_snapshot(&fixture_value("v1_minimal.json")).expect("decode");
    assert_eq!(
        env.to_json_string(),
        fixture("v1_minimal.canonical.json").trim_end()
    );
    let v = env.to_value();
    for key in ["activeTurn", "terminalTurns", "conversation", "extra"] {
        assert!(v.get(key).is_none(), "{key} must be omitted");
    }
}

#[test]
fn json_text_decodes_like_the_object() {
    let text = Value::String(fixture("v0_full.json"));
    let from_text = decode_session_snapshot(&text).expect("decode text");
    assert_eq!(
        from_text,
        decode_session_snapshot(&fixture_value("v1_full.json")).expect("decode")
    );
}

#[test]
fn check_order_matches_the_reference_decoder() {
    let cases: Vec<(&str, Value, Expected)> = vec![
        (
            "text that is not JSON",
            json!("{not json"),
            Err((INVALID, "not JSON")),
        ),
        ("JSON text of null", json!("null"), Err((INVALID, "object"))),
        ("null", Value::Null, Err((INVALID, "object"))),
        ("array", json!([]), Err((INVALID, "object"))),
        ("number", json!(1), Err((INVALID, "object"))),
        (
            "version 2",
            v1_with(|v| v["version"] = json!(2)),
            Err((UNSUPPORTED, "version 2")),
        ),
        (
            "version 2 as text",
            json!(r#"{"version":2}"#),
            Err((UNSUPPORTED, "version")),
        ),
        (
            "version -1",
            v1_with(|v| v["version"] = json!(-1)),
            Err((UNSUPPORTED, "version")),
        ),
        (
            "version 1.5",
            v1_with(|v| v["version"] = json!(1.5)),
            Err((UNSUPPORTED, "version")),
        ),
        // The version check does not look at `protocol`.
        (
            "version 3 with a foreign protocol",
            json!({"protocol": "other", "version": 3}),
            Err((UNSUPPORTED, "version 3")),
        ),
        (
            "version 1.0",
            v1_with(|v| v["version"] = json!(1.0)),
            Ok(()),
        ),
        (
            "version as text \"1\"",
            v1_with(|v| v["version"] = json!("1")),
            Err((INVALID, "version")),
        ),
        (
            "version missing",
            v1_with(|v| drop(v.as_object_mut().map(|o| o.remove("version")))),
            Err((INVALID, "version")),
        ),
        (
            "foreign protocol at v1",
            v1_with(|v| v["protocol"] = json!("other")),
            Err((INVALID, "protocol")),
        ),
        (
            "v1 without protocol",
            v1_with(|v| drop(v.as_object_mut().map(|o| o.remove("protocol")))),
            Err((INVALID, "protocol")),
        ),
        // v0 has no `protocol`; an extra one is an unknown field and is dropped.
        (
            "v0 with a protocol key",
            v1_with(|v| v["version"] = json!(0)),
            Ok(()),
        ),
        (
            "v0 with a bad field reports the v0 schema",
            v1_with(|v| {
                v["version"] = json!(0);
                v["cursor"] = json!(-1);
            }),
            Err((INVALID, "v0: cursor")),
        ),
    ];
    for (label, input, expected) in cases {
        check(label, &input, expected);
    }
}

#[test]
fn identity_and_cursor_fields() {
    let safe_max = json!(9_007_199_254_740_991u64);
    let beyond = json!(9_007_199_254_740_992u64);
    let cases: Vec<(&str, Value, Expected)> = vec![
        (
            "sessionId not SafeId",
            v1_with(|v| v["sessionId"] = json!("a b")),
            Err((INVALID, "sessionId")),
        ),
        (
            "sessionId missing",
            v1_with(|v| drop(v.as_object_mut().map(|o| o.remove("sessionId")))),
            Err((INVALID, "sessionId: required")),
        ),
        (
            "definitionId empty",
            v1_with(|v| v["definitionId"] = json!("")),
            Err((INVALID, "definitionId")),
        ),
        (
            "definitionRevision 0",
            v1_with(|v| v["definitionRevision"] = json!(0)),
            Err((INVALID, "definitionRevision")),
        ),
        (
            "definitionRevision fraction",
            v1_with(|v| v["definitionRevision"] = json!(1.5)),
            Err((INVALID, "definitionRevision")),
        ),
        (
            "definitionRevision max",
            v1_with(|v| v["definitionRevision"] = safe_max.clone()),
            Ok(()),
        ),
        (
            "cursor 2^53-1",
            v1_with(|v| v["cursor"] = safe_max.clone()),
            Ok(()),
        ),
        (
            "cursor 2^53",
            v1_with(|v| v["cursor"] = beyond.clone()),
            Err((INVALID, "cursor")),
        ),
        (
            "cursor negative",
            v1_with(|v| v["cursor"] = json!(-1)),
            Err((INVALID, "cursor")),
        ),
        (
            "cursor text",
            v1_with(|v| v["cursor"] = json!("1")),
            Err((INVALID, "cursor")),
        ),
        (
            "updatedAt with offset",
            v1_with(|v| v["updatedAt"] = json!("2026-07-11T03:00+05:30")),
            Ok(()),
        ),
        (
            "updatedAt not a date",
            v1_with(|v| v["updatedAt"] = json!("2026-02-30T00:00:00Z")),
            Err((INVALID, "updatedAt")),
        ),
        (
            "updatedAt +HHMM",
            v1_with(|v| v["updatedAt"] = json!("2026-07-11T03:00:00+0530")),
            Err((INVALID, "updatedAt")),
        ),
    ];
    for (label, input, expected) in cases {
        check(label, &input, expected);
    }
}

fn terminal(n: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|i| json!({"turnId": format!("t{i}"), "outcome": "completed"}))
            .collect(),
    )
}

#[test]
fn turn_lease_and_terminal_history_fields() {
    let cases: Vec<(&str, Value, Expected)> = vec![
        (
            "activeTurn null",
            v1_with(|v| v["activeTurn"] = Value::Null),
            Err((INVALID, "activeTurn")),
        ),
        (
            "activeTurn without expiresAt",
            v1_with(|v| v["activeTurn"] = json!({"turnId": "t"})),
            Err((INVALID, "activeTurn.expiresAt")),
        ),
        (
            "activeTurn bad id",
            v1_with(|v| v["activeTurn"]["turnId"] = json!("-t")),
            Err((INVALID, "activeTurn.turnId")),
        ),
        (
            "activeTurn expiresAt 2^53",
            v1_with(|v| v["activeTurn"]["expiresAt"] = json!(9_007_199_254_740_992u64)),
            Err((INVALID, "activeTurn.expiresAt")),
        ),
        (
            "64 terminal turns",
            v1_with(|v| v["terminalTurns"] = terminal(64)),
            Ok(()),
        ),
        (
            "65 terminal turns",
            v1_with(|v| v["terminalTurns"] = terminal(65)),
            Err((INVALID, "terminalTurns: 65 entries")),
        ),
        (
            "duplicate terminal turn",
            v1_with(|v| v["terminalTurns"][1]["turnId"] = json!("turn-7")),
            Err((INVALID, "duplicate turnId")),
        ),
        (
            "bad outcome",
            v1_with(|v| v["terminalTurns"][0]["outcome"] = json!("done")),
            Err((INVALID, "terminalTurns[0].outcome")),
        ),
    ];
    for (label, input, expected) in cases {
        check(label, &input, expected);
    }
}

fn decisions(n: usize) -> Value {
    let one = |i: usize| {
        json!({"messageId": format!("m{i}"), "input": "", "routeId": "r", "kind": "fallback",
               "content": "", "fromState": "a", "toState": "b"})
    };
    Value::Array((0..n).map(one).collect())
}

#[test]
fn conversation_fields() {
    let set = |pointer: &'static str, value: Value| {
        v1_with(move |v| *v.pointer_mut(pointer).expect("pointer") = value)
    };
    let cases: Vec<(&str, Value, Expected)> = vec![
        (
            "state empty",
            set("/conversation/state", json!("")),
            Err((INVALID, "conversation.state")),
        ),
        (
            "state 128",
            set("/conversation/state", json!("s".repeat(128))),
            Ok(()),
        ),
        (
            "state 129",
            set("/conversation/state", json!("s".repeat(129))),
            Err((INVALID, "conversation.state")),
        ),
        (
            "1000 decisions",
            set("/conversation/decisions", decisions(1000)),
            Ok(()),
        ),
        (
            "1001 decisions",
            set("/conversation/decisions", decisions(1001)),
            Err((INVALID, "conversation.decisions: 1001")),
        ),
        (
            "decisions missing",
            v1_with(|v| v["conversation"] = json!({"state": "s"})),
            Err((INVALID, "conversation.decisions: required")),
        ),
        (
            "input 16384 UTF-16 units",
            v1_with(|v| v["conversation"]["decisions"][0]["input"] = json!("😀".repeat(8192))),
            Ok(()),
        ),
        (
            "input 16385",
            v1_with(|v| v["conversation"]["decisions"][0]["input"] = json!("x".repeat(16_385))),
            Err((INVALID, "decisions[0].input")),
        ),
        (
            "content 65537",
            v1_with(|v| v["conversation"]["decisions"][0]["content"] = json!("x".repeat(65_537))),
            Err((INVALID, "decisions[0].content")),
        ),
        (
            "bad kind",
            v1_with(|v| v["conversation"]["decisions"][0]["kind"] = json!("guess")),
            Err((INVALID, "decisions[0].kind")),
        ),
        (
            "routeId not SafeId",
            v1_with(|v| v["conversation"]["decisions"][0]["routeId"] = json!("")),
            Err((INVALID, "decisions[0].routeId")),
        ),
        (
            "toState empty",
            v1_with(|v| v["conversation"]["decisions"][0]["toState"] = json!("")),
            Err((INVALID, "decisions[0].toState")),
        ),
        (
            "duplicate messageId",
            v1_with(|v| {
                let first = v["conversation"]["decisions"][0].clone();
                v["conversation"]["decisions"]
                    .as_array_mut()
                    .expect("array")
                    .push(first);
            }),
            Err((INVALID, "duplicate messageId")),
        ),
    ];
    for (label, input, expected) in cases {
        check(label, &input, expected);
    }
}

fn confirmations(n: usize) -> Value {
    let one = |i: usize| {
        json!({"token": format!("c{i}"), "action": "a", "input": {}, "toolCallId": format!("t{i}"),
               "expiresAt": 0, "status": "expired"})
    };
    Value::Array((0..n).map(one).collect())
}

#[test]
fn confirmation_fields() {
    let deep = (0..20).fold(json!(1), |acc, _| json!({"k": acc}));
    let too_deep = json!({"k": deep.clone()});
    let c0 =
        |field: &'static str, value: Value| v1_with(move |v| v["confirmations"][0][field] = value);
    let mut cases: Vec<(&str, Value, Expected)> = vec![
        (
            "confirmations missing",
            v1_with(|v| drop(v.as_object_mut().map(|o| o.remove("confirmations")))),
            Err((INVALID, "confirmations: required")),
        ),
        (
            "confirmations null",
            v1_with(|v| v["confirmations"] = Value::Null),
            Err((INVALID, "confirmations")),
        ),
        (
            "1000 confirmations",
            v1_with(|v| v["confirmations"] = confirmations(1000)),
            Ok(()),
        ),
        (
            "1001 confirmations",
            v1_with(|v| v["confirmations"] = confirmations(1001)),
            Err((INVALID, "confirmations: 1001")),
        ),
        (
            "duplicate token",
            c0("token", json!("confirm-t0")),
            Err((INVALID, "duplicate token")),
        ),
        (
            "duplicate toolCallId",
            c0("toolCallId", json!("app-t0")),
            Err((INVALID, "duplicate toolCallId")),
        ),
        (
            "input array",
            c0("input", json!([1])),
            Err((INVALID, "confirmations[0].input")),
        ),
        (
            "input null",
            c0("input", Value::Null),
            Err((INVALID, "confirmations[0].input")),
        ),
        ("input depth 20", c0("input", deep.clone()), Ok(())),
        (
            "input depth 21",
            c0("input", too_deep),
            Err((INVALID, "bounded-JSON")),
        ),
        (
            "input long string",
            c0("input", json!({"s": "x".repeat(16_385)})),
            Err((INVALID, "bounded-JSON")),
        ),
        (
            "action not SafeId",
            c0("action", json!("a b")),
            Err((INVALID, "confirmations[0].action")),
        ),
        (
            "expiresAt negative",
            c0("expiresAt", json!(-1)),
            Err((INVALID, "confirmations[0].expiresAt")),
        ),
        (
            "status unknown",
            c0("status", json!("done")),
            Err((INVALID, "confirmations[0].status")),
        ),
    ];
    for status in [
        "pending",
        "approving",
        "rejecting",
        "expiring",
        "approved",
        "rejected",
        "expired",
    ] {
        cases.push(("each status decodes", c0("status", json!(status)), Ok(())));
    }
    for (label, input, expected) in cases {
        check(label, &input, expected);
    }
}

#[test]
fn unknown_fields_are_dropped_at_every_level() {
    let noisy = v1_with(|v| {
        v["x"] = json!(1);
        v["activeTurn"]["x"] = json!(1);
        v["terminalTurns"][0]["x"] = json!(1);
        v["conversation"]["x"] = json!(1);
        v["conversation"]["decisions"][0]["x"] = json!(1);
        v["confirmations"][0]["x"] = json!(1);
    });
    let env: SessionEnvelope = decode_session_snapshot(&noisy).expect("decode");
    assert_eq!(
        env.to_json_string(),
        fixture("v1_full.canonical.json").trim_end()
    );
    // The confirmation input is opaque: unknown keys inside it are the host's data and stay.
    let with_input_key = v1_with(|v| v["confirmations"][0]["input"]["x"] = json!(1));
    let env = decode_session_snapshot(&with_input_key).expect("decode");
    assert_eq!(env.confirmations[0].input.get("x"), Some(&json!(1)));
}

#[test]
fn errors_name_their_code() {
    let e = decode_session_snapshot(&json!({"version": 7})).expect_err("unsupported");
    assert_eq!(e.code.as_str(), "SESSION_UNSUPPORTED_VERSION");
    assert!(e.to_string().starts_with("SESSION_UNSUPPORTED_VERSION: "));
    let e = decode_session_snapshot(&json!({})).expect_err("invalid");
    assert_eq!(e.code.as_str(), "SESSION_INVALID_SNAPSHOT");
}
