//! Golden wire fixtures for the turn protocol (tests/fixtures/protocol, written by hand through
//! `generate.py`): every event kind encodes byte for byte, and every decode diagnostic carries the
//! right code, message and eventId echo, in the reference decoder's check order.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use serde_json::Value;
use turnkeep::core::protocol::{
    decode_turn_event, decode_turn_event_text, encode_turn_event, encode_turn_event_line,
    DecodeDiagnostic, EventKind,
};

const ENCODE: &str = include_str!("fixtures/protocol/encode.json");
const DECODE: &str = include_str!("fixtures/protocol/decode.json");

fn cases(text: &str) -> Vec<Value> {
    match serde_json::from_str(text) {
        Ok(Value::Array(items)) => items,
        other => panic!("fixture is not an array of cases: {other:?}"),
    }
}

fn name(case: &Value) -> &str {
    case["name"].as_str().unwrap_or("<unnamed>")
}

/// Decodes the case's input (raw `text` or a JSON `input`) and renders the result as the
/// fixture's `expect` shape: `{"ok": <wire>}` or `{"error": <diagnostic>}`.
fn run(case: &Value) -> Value {
    let result = match case.get("text").and_then(Value::as_str) {
        Some(text) => decode_turn_event_text(text),
        None => decode_turn_event(&case["input"]),
    };
    match result {
        Ok(event) => serde_json::json!({ "ok": encode_turn_event(&event) }),
        Err(d) => serde_json::json!({ "error": diagnostic_value(&d) }),
    }
}

fn diagnostic_value(d: &DecodeDiagnostic) -> Value {
    serde_json::to_value(d).expect("diagnostics serialize")
}

fn check(case: &Value, expected: &Value) {
    let got = run(case);
    assert_eq!(&got, expected, "case {:?}", name(case));
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
fn every_event_kind_encodes_byte_for_byte() {
    let mut kinds = Vec::new();
    for case in cases(ENCODE) {
        let wire = case["wire"].as_str().expect("wire string");
        let event = decode_turn_event(&case["event"])
            .unwrap_or_else(|d| panic!("case {:?} does not decode: {d:?}", name(&case)));
        assert_eq!(encode_turn_event(&event), wire, "case {:?}", name(&case));
        assert_eq!(
            encode_turn_event_line(&event),
            format!("{wire}\n"),
            "case {:?}",
            name(&case)
        );
        // The golden wire is itself a fixed point: text -> event -> text.
        let again = decode_turn_event_text(wire).expect("golden wire decodes");
        assert_eq!(again, event, "case {:?}", name(&case));
        kinds.push(event.body.kind());
    }
    for kind in EventKind::ALL {
        assert!(kinds.contains(&kind), "no encode fixture for {kind:?}");
    }
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
fn every_decode_case_matches_its_golden_result() {
    let all = cases(DECODE);
    assert!(all.len() >= 40, "decode fixtures went missing");
    for case in &all {
        check(case, &case["expect"]);
    }
    // Each decoder code appears at least once.
    for code in [
        "PROTOCOL_INVALID_PAYLOAD",
        "PROTOCOL_UNSUPPORTED_VERSION",
        "PROTOCOL_UNKNOWN_EVENT",
    ] {
        assert!(
            all.iter().any(|c| c["expect"]["error"]["code"] == code),
            "no decode fixture for {code}"
        );
    }
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
fn text_and_value_decoding_agree_on_every_fixture() {
    for case in cases(DECODE).iter().filter(|c| c.get("input").is_some()) {
        let text = serde_json::to_string(&case["input"]).expect("serialize");
        let via_text = decode_turn_event_text(&text).map_err(|d| diagnostic_value(&d));
        let via_value = decode_turn_event(&case["input"]).map_err(|d| diagnostic_value(&d));
        assert_eq!(via_text, via_value, "case {:?}", name(case));
    }
}
