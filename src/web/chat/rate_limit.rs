//! Asking the host's `rateLimit({ context, sessionId, signal })` before a turn-starting request
//! claims anything, and performing what `core::chat::rate_limit` decided of its answer. The hook
//! is bounded (`RATE_LIMIT_MS_MAX`) and isolated: a hook that throws, answers something else or
//! does not answer in time lets the request go on, and `onError` gets `stage: "rateLimit"`.

use js_sys::Object;
use serde_json::Value;
use wasm_bindgen::JsValue;

use super::deadline::RequestDeadline;
use super::handler::{ChatHost, Failure, SessionIds};
use super::options::HandlerOptions;
use crate::core::chat::rate_limit::{rate_decision, RateDecision};
use crate::core::limits;
use crate::turn::race::{race, Either};
use crate::turn::{Fault, Stage};
use crate::web::adapters::host::port_error;
use crate::web::convert::to_json;
use crate::web::js::{call, set, sleep_ms};

/// `Ok` to go on; `Err(Failure::Limited)` when the hook refused.
pub(super) async fn ask(
    options: &HandlerOptions,
    context: &JsValue,
    ids: SessionIds<'_>,
    deadline: &RequestDeadline,
) -> Result<(), Failure> {
    let Some(hook) = &options.rate_limit else {
        return Ok(());
    };
    let input = Object::new();
    set(&input, "context", context.clone());
    set(&input, "sessionId", ids.session_id);
    set(&input, "signal", deadline.signal());
    let bound_ms = limits::RATE_LIMIT_MS_MAX as u32;
    let fault = match race(call(hook, &[&input]), sleep_ms(bound_ms)).await {
        Either::Left(Ok(answer)) => {
            let answer = to_json(&answer).unwrap_or(Value::Null);
            match rate_decision(&answer) {
                RateDecision::Allow => return Ok(()),
                RateDecision::Refuse { retry_after_s } => {
                    return Err(Failure::Limited { retry_after_s })
                }
                RateDecision::Malformed => Fault::new(
                    Stage::RateLimit,
                    crate::ports::PortError::new(
                        "rateLimit must return { ok: true } or { ok: false, retryAfterMs? }; the request went on",
                    ),
                ),
            }
        }
        Either::Left(Err(thrown)) => Fault::new(Stage::RateLimit, port_error("rateLimit", &thrown)),
        Either::Right(()) => Fault::new(
            Stage::RateLimit,
            crate::ports::PortError::new(format!(
                "rateLimit did not answer within {bound_ms} ms; the request went on"
            )),
        ),
    };
    options.report(&fault, Some(ids.session_id), ids.turn_id);
    Ok(())
}
