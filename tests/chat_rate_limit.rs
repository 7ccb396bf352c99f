//! `core::chat::rate_limit`: what a chat handler's `rateLimit` hook answered, decided. The
//! shell's side (the hook bounded and isolated, the 429 and its `retry-after`) is judged in
//! tests/js/rate-limit.test.mjs.
#![cfg(not(target_arch = "wasm32"))]

use serde_json::{json, Value};
use turnkeep::core::chat::rate_limit::{rate_decision, RateDecision};

fn check(answer: Value, expected: RateDecision) {
    assert_eq!(rate_decision(&answer), expected, "{answer}");
}

#[test]
fn every_answer_of_the_hook() {
    let refuse = |retry_after_s| RateDecision::Refuse { retry_after_s };
    check(json!({ "ok": true }), RateDecision::Allow);
    check(
        json!({ "ok": true, "retryAfterMs": 5 }),
        RateDecision::Allow,
    );
    check(json!({ "ok": false }), refuse(None));
    check(
        json!({ "ok": false, "retryAfterMs": 1500 }),
        refuse(Some(2)),
    );
    check(
        json!({ "ok": false, "retryAfterMs": 1000 }),
        refuse(Some(1)),
    );
    check(json!({ "ok": false, "retryAfterMs": 0 }), refuse(Some(0)));
    check(json!({ "ok": false, "retryAfterMs": 1 }), refuse(Some(1)));
    check(
        json!({ "ok": false, "retryAfterMs": 1e12 }),
        refuse(Some(86_400)),
    );
    check(json!({ "ok": false, "retryAfterMs": -5 }), refuse(None));
    check(json!({ "ok": false, "retryAfterMs": "soon" }), refuse(None));
    check(json!({ "ok": "yes" }), RateDecision::Malformed);
    check(json!({ "allowed": false }), RateDecision::Malformed);
    check(json!(null), RateDecision::Malformed);
    check(json!(true), RateDecision::Malformed);
}
