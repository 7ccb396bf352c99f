//! The snapshot cursor as a table: each row feeds one input and states the decision and the
//! cursor position afterwards.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use serde_json::{json, Value};
use turnkeep::core::protocol::{
    encode_turn_event_line, CursorDecision, IgnoreReason, TurnSnapshotCursor,
};

const SESSION: &str = "session-1";

fn event(session: &str, sequence: u64, event: &str, payload: Value) -> Value {
    json!({
        "protocol": "agentskit.chat.turn", "version": 1, "eventId": format!("evt-{sequence}"),
        "sessionId": session, "turnId": "turn-1", "sequence": sequence,
        "emittedAt": "2026-07-11T03:00:00.000Z", "event": event, "payload": payload
    })
}

fn snapshot(session: &str, sequence: u64) -> Value {
    let usage = json!({"promptTokens": 1, "completionTokens": 2, "totalTokens": 3});
    event(
        session,
        sequence,
        "server.turn.snapshot",
        json!({"messages": [], "status": "complete", "usage": usage}),
    )
}

fn diagnostic(sequence: u64) -> Value {
    let payload =
        json!({"version": 1, "code": "SERVER_TIMEOUT", "message": "m", "retryable": true});
    event(SESSION, sequence, "server.turn.diagnostic", payload)
}

fn submit(sequence: u64) -> Value {
    event(
        SESSION,
        sequence,
        "client.turn.submit",
        json!({"input": "hi"}),
    )
}

#[derive(Debug, PartialEq)]
enum Expect {
    Accept(u64),
    Ignore(IgnoreReason),
}

/// Feeds `input`, checks the (pure) decision, commits it, and checks the position.
fn check(
    cursor: &mut TurnSnapshotCursor,
    input: &Value,
    expected: Expect,
    last_after: Option<u64>,
) {
    let decision = match cursor.decide(input) {
        CursorDecision::Accept(e) => Expect::Accept(e.envelope.sequence),
        CursorDecision::Ignore(reason) => Expect::Ignore(reason),
    };
    assert_eq!(decision, expected, "input {input}");
    let accepted = cursor.accept(input).map(|e| e.envelope.sequence);
    assert_eq!(
        accepted,
        match expected {
            Expect::Accept(s) => Some(s),
            Expect::Ignore(_) => None,
        }
    );
    assert_eq!(cursor.last_sequence(), last_after, "input {input}");
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
fn accepts_the_first_snapshot_then_only_strictly_newer_ones() {
    use IgnoreReason::*;
    let mut cursor = TurnSnapshotCursor::new(SESSION).expect("valid session id");
    let version_two = json!({"protocol": "agentskit.chat.turn", "version": 2});
    let rows: Vec<(Value, Expect, Option<u64>)> = vec![
        (diagnostic(5), Expect::Ignore(NotSnapshot), None),
        (submit(1), Expect::Ignore(NotSnapshot), None),
        (snapshot("session-2", 1), Expect::Ignore(OtherSession), None),
        (version_two, Expect::Ignore(Undecodable), None),
        (json!(null), Expect::Ignore(Undecodable), None),
        (snapshot(SESSION, 7), Expect::Accept(7), Some(7)),
        (snapshot(SESSION, 7), Expect::Ignore(NotNewer), Some(7)),
        (snapshot(SESSION, 3), Expect::Ignore(NotNewer), Some(7)),
        (diagnostic(100), Expect::Ignore(NotSnapshot), Some(7)),
        (snapshot(SESSION, 8), Expect::Accept(8), Some(8)),
        (snapshot(SESSION, 20), Expect::Accept(20), Some(20)),
        (
            snapshot("session-2", 21),
            Expect::Ignore(OtherSession),
            Some(20),
        ),
        (
            snapshot(SESSION, 9_007_199_254_740_991),
            Expect::Accept(9_007_199_254_740_991),
            Some(9_007_199_254_740_991),
        ),
        (
            snapshot(SESSION, 9_007_199_254_740_991),
            Expect::Ignore(NotNewer),
            Some(9_007_199_254_740_991),
        ),
    ];
    for (input, expected, last_after) in rows {
        check(&mut cursor, &input, expected, last_after);
    }
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
fn the_first_snapshot_may_have_sequence_zero() {
    let mut cursor = TurnSnapshotCursor::new(SESSION).expect("valid session id");
    check(
        &mut cursor,
        &snapshot(SESSION, 0),
        Expect::Accept(0),
        Some(0),
    );
    check(
        &mut cursor,
        &snapshot(SESSION, 0),
        Expect::Ignore(IgnoreReason::NotNewer),
        Some(0),
    );
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
fn accepts_ndjson_lines() {
    let mut cursor = TurnSnapshotCursor::new(SESSION).expect("valid session id");
    let line = |seq| {
        let event =
            turnkeep::core::protocol::decode_turn_event(&snapshot(SESSION, seq)).expect("valid");
        encode_turn_event_line(&event)
    };
    assert_eq!(
        cursor.accept_text(&line(4)).map(|e| e.envelope.sequence),
        Some(4)
    );
    assert_eq!(cursor.accept_text(&line(4)), None);
    assert_eq!(cursor.accept_text("{not json"), None);
    assert_eq!(
        cursor.accept_text(&line(6)).map(|e| e.envelope.sequence),
        Some(6)
    );
    assert_eq!(cursor.last_sequence(), Some(6));
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
fn the_session_id_must_be_a_safe_id() {
    let too_long = "s".repeat(129);
    for (id, ok) in [
        ("session-1", true),
        ("a", true),
        ("", false),
        ("-a", false),
        ("a b", false),
        (too_long.as_str(), false),
    ] {
        assert_eq!(TurnSnapshotCursor::new(id).is_ok(), ok, "{id:?}");
    }
    let err = TurnSnapshotCursor::new("a b").expect_err("invalid");
    assert!(
        err.message().starts_with("sessionId must be a SafeId"),
        "{}",
        err.message()
    );
}
