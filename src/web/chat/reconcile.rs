//! Crash safety for the host, as two methods on the handler (they reuse its `resolveDefinition`,
//! `sessionStorage` and `sessionLog`, so tenancy works as it does for requests):
//!
//! - `handler.listStuckConfirmations(sessionId, { context?, signal? })` → Promise of the
//!   session's records left `approving` / `rejecting` / `expiring` by a continuation that no
//!   longer runs;
//! - `handler.reconcileConfirmation(sessionId, token, { resolution?, context?, signal? })` →
//!   Promise of the record finished by CAS (into `resolution`, a final status, or by default the
//!   final status of its processing state). Neither runs a tool (`turn::reconcile`).
//!
//! Failures reject with an Error whose `code` says why: `CONFIRMATION_NOT_FOUND`,
//! `CONFIRMATION_NOT_STUCK` (pending, or its continuation still holds a live lease),
//! `CONFIRMATION_INVALID_RESOLUTION`, `REQUEST_INVALID_EVENT` (bad arguments), or a boundary
//! code (`SESSION_BUSY`, `SESSION_INCOMPATIBLE_DEFINITION`, `SERVER_INTERNAL`, ...). Faults go to
//! `onError` as for requests.

use std::rc::Rc;

use js_sys::{Function, Promise};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::future_to_promise;

use super::deadline::RequestDeadline;
use super::handler::{resolve, ChatHost, Failure};
use super::host::OnError;
use super::js::{coded_error, get, set};
use super::options::HandlerOptions;
use crate::core::checks::is_safe_id;
use crate::core::protocol::BoundaryError;
use crate::core::session::ConfirmationStatus;
use crate::turn::{self, ChatSetup, FaultReport, Ports, ReconcileError, Refusal};
use crate::web::convert::from_json;

/// Adds the two methods to `handler`.
pub(super) fn attach(handler: &Function, options: Rc<HandlerOptions>) {
    let list_options = options.clone();
    let list = Closure::<dyn Fn(JsValue, JsValue) -> Promise>::new(
        move |session_id: JsValue, extra: JsValue| {
            let options = list_options.clone();
            future_to_promise(async move { list_stuck(&options, session_id, extra).await })
        },
    );
    let reconcile = Closure::<dyn Fn(JsValue, JsValue, JsValue) -> Promise>::new(
        move |session_id: JsValue, token: JsValue, extra: JsValue| {
            let options = options.clone();
            future_to_promise(async move { reconcile(&options, session_id, token, extra).await })
        },
    );
    set(handler, "listStuckConfirmations", list.into_js_value());
    set(handler, "reconcileConfirmation", reconcile.into_js_value());
}

async fn list_stuck(
    options: &HandlerOptions,
    session_id: JsValue,
    extra: JsValue,
) -> Result<JsValue, JsValue> {
    let session_id = safe_id(&session_id, "sessionId")?;
    let (ports, chat, deadline) = ports_of(options, &session_id, &extra).await?;
    let records = turn::list_stuck(&ports, &chat, &session_id, deadline.interrupt())
        .await
        .map_err(|r| failure_error(options, Failure::Refused(r), &session_id))?;
    Ok(from_json(
        &serde_json::to_value(records).unwrap_or(Value::Null),
    ))
}

async fn reconcile(
    options: &HandlerOptions,
    session_id: JsValue,
    token: JsValue,
    extra: JsValue,
) -> Result<JsValue, JsValue> {
    let session_id = safe_id(&session_id, "sessionId")?;
    let token = safe_id(&token, "token")?;
    let resolution = match get(&extra, "resolution").as_string() {
        None if get(&extra, "resolution").is_undefined() => None,
        None => return Err(invalid("resolution must be approved, rejected or expired")),
        Some(text) => Some(final_status(&text).ok_or_else(|| {
            coded_error(
                "CONFIRMATION_INVALID_RESOLUTION",
                "resolution must be approved, rejected or expired",
            )
        })?),
    };
    let (ports, chat, deadline) = ports_of(options, &session_id, &extra).await?;
    let limits = options.limits().turn_limits();
    let done = turn::reconcile(
        &ports,
        &chat,
        &session_id,
        &token,
        resolution,
        &limits,
        deadline.interrupt(),
    )
    .await;
    match done {
        Ok(record) => Ok(from_json(
            &serde_json::to_value(record).unwrap_or(Value::Null),
        )),
        Err(ReconcileError::NotFound) => {
            let row = BoundaryError::ConfirmationNotFound.row();
            Err(coded_error(row.code, row.message))
        }
        Err(ReconcileError::NotStuck(status)) => Err(coded_error(
            "CONFIRMATION_NOT_STUCK",
            &format!(
                "The confirmation is {} and not stuck: nothing to reconcile.",
                status.as_str()
            ),
        )),
        Err(ReconcileError::InvalidResolution) => Err(coded_error(
            "CONFIRMATION_INVALID_RESOLUTION",
            "resolution must be approved, rejected or expired",
        )),
        Err(ReconcileError::Refused(refusal)) => Err(failure_error(
            options,
            Failure::Refused(refusal),
            &session_id,
        )),
    }
}

/// The session's ports as a request with `extra.context` would get them, under the handler's
/// deadline (`timeoutMs`, ended early by `extra.signal` when given).
async fn ports_of(
    options: &HandlerOptions,
    session_id: &str,
    extra: &JsValue,
) -> Result<(Ports, ChatSetup, RequestDeadline), JsValue> {
    let signal = get(extra, "signal").dyn_into::<web_sys::AbortSignal>().ok();
    let deadline = RequestDeadline::start_with(signal, options.timeout_ms);
    let context = get(extra, "context");
    let (ports, chat) = resolve(options, &context, (session_id, None), &deadline)
        .await
        .map_err(|f| failure_error(options, f, session_id))?;
    Ok((ports, chat, deadline))
}

/// A refusal as a coded Error; its fault goes to `onError` first.
fn failure_error(options: &HandlerOptions, failure: Failure, session_id: &str) -> JsValue {
    let refusal: Refusal = match failure {
        Failure::Refused(refusal) => refusal,
        Failure::Host(_) => BoundaryError::Internal.into(),
        Failure::Limited { .. } => BoundaryError::RateLimited.into(),
    };
    if let Some(fault) = &refusal.fault {
        OnError::new(options.on_error.clone(), Some(session_id), None).report(fault);
    }
    let row = refusal.error.row();
    coded_error(row.code, row.message)
}

fn safe_id(value: &JsValue, what: &str) -> Result<String, JsValue> {
    value
        .as_string()
        .filter(|s| is_safe_id(s))
        .ok_or_else(|| invalid(&format!("{what} must be a SafeId")))
}

fn invalid(detail: &str) -> JsValue {
    coded_error(BoundaryError::InvalidEvent.code(), detail)
}

fn final_status(text: &str) -> Option<ConfirmationStatus> {
    [
        ConfirmationStatus::Approved,
        ConfirmationStatus::Rejected,
        ConfirmationStatus::Expired,
    ]
    .into_iter()
    .find(|s| s.as_str() == text)
}
