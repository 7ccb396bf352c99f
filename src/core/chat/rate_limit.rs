//! What a chat handler's `rateLimit({ context, sessionId, signal })` answered, decided once
//! (the shell calls the hook and performs this). A turn-starting request (a send, a decision)
//! asks before anything is claimed:
//!
//! - `{ ok: true }`: go on;
//! - `{ ok: false, retryAfterMs? }`: `429 CHAT_RATE_LIMITED`, with `retry-after` in whole
//!   seconds (rounded up, at most `RETRY_AFTER_S_MAX`) when it said when;
//! - anything else is the operator's bug: the request goes on and `onError` is told, as when
//!   the hook throws or does not answer within `RATE_LIMIT_MS_MAX` (a limiter is never a reason
//!   a chat stops working).

use serde_json::Value;

use crate::limits;

/// The hook's answer, decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateDecision {
    Allow,
    Refuse {
        retry_after_s: Option<u64>,
    },
    /// Not `{ ok: boolean }`: allowed, and reported.
    Malformed,
}

pub fn rate_decision(answer: &Value) -> RateDecision {
    match answer.get("ok").and_then(Value::as_bool) {
        Some(true) => RateDecision::Allow,
        Some(false) => RateDecision::Refuse {
            retry_after_s: answer
                .get("retryAfterMs")
                .and_then(Value::as_f64)
                .filter(|ms| ms.is_finite() && *ms >= 0.0)
                .map(retry_after_s),
        },
        None => RateDecision::Malformed,
    }
}

/// Milliseconds as `retry-after`'s whole seconds, rounded up, bounded.
fn retry_after_s(ms: f64) -> u64 {
    let max = limits::RETRY_AFTER_S_MAX;
    let seconds = (ms / 1000.0).ceil();
    if seconds >= max as f64 {
        max
    } else {
        seconds as u64
    }
}
