//! The AG-UI `RunAgentInput` side of `createUIMessageChatHandler` (`POST {api}` with a body that
//! names a thread and a run, `core::agui::request`): TanStack AI's client through
//! `toTanStackConnection`, `@ag-ui/client`'s `HttpAgent`, and any client that POSTs AG-UI runs.
//! The run is a turn of the same pipeline (authentication, lease, replay guard, confirmations by
//! compare-and-set), run in a task the host keeps alive; its events are the session log's. The
//! answer, once the turn is admitted (or the decision claimed):
//!
//! - `202 { threadId, runId }` for a client that follows the log itself (it asks for JSON:
//!   `toTanStackConnection`);
//! - else the run's AG-UI events over SSE (`core::agui::AgUiStream`: the log followed from the
//!   run's start until its end, the client leaving, or `FOLLOW_MS_MAX`).
//!
//! A decision that lost the race (an identical resubmit, another tab) is answered the same: the
//! winner's run is in the log.

use std::rc::Rc;

use js_sys::Promise;
use serde_json::json;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::future_to_promise;
use web_sys::Response;

use super::deadline::RequestDeadline;
use super::handler::{ChatHost, Failure, Named, SessionIds};
use super::http::json_response;
use super::stream::EventStream;
use crate::core::agui::{prefers_json, AgUiStream};
use crate::core::limits;
use crate::core::protocol::BoundaryError;
use crate::core::ui::UiTurn;
use crate::ports::log::SessionLog;
use crate::turn::follow::{follow, join_run};
use crate::turn::{
    self, MessageExtras, Resolution, ResolveRequest, SettleWait, Submission, Turn, TurnSink,
};
use crate::turn::{Refusal, Stage};

/// How a run is answered once admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunAnswer {
    /// By the request's `Accept` (`core::agui::prefers_json`): `202`, or the run's events.
    ByAccept,
    /// `202` always (the Durable Streams transport reads the log itself, never the body).
    Accepted,
}

/// A run's turn: admitted and started (or its decision claimed), answered as `answer` says.
#[allow(clippy::too_many_arguments)] // the pipeline's state, handed on whole
pub async fn run(
    host: &dyn ChatHost,
    request: &web_sys::Request,
    context: &JsValue,
    session_id: String,
    ui: UiTurn,
    answer: RunAnswer,
    deadline: RequestDeadline,
    keep_alive: &dyn Fn(&Promise),
    named: &mut Named,
) -> Result<Response, Failure> {
    let turn_id = ui.turn_id().map(str::to_owned);
    named.turn_id = turn_id.clone();
    let ids = SessionIds {
        session_id: &session_id,
        turn_id: turn_id.as_deref(),
    };
    host.rate_limit(context, ids, &deadline).await?;
    let (ports, chat) = host.resolve(context, ids, &deadline).await?;
    let Some(log) = ports.log.clone() else {
        return Err(BoundaryError::RunNeedsLog.into());
    };
    let sleep = ports.sleep.clone();
    let limits = host.limits().turn_limits();
    let interrupt = deadline.interrupt().clone();
    let (run_id, turn) = match ui {
        UiTurn::Send {
            turn_id,
            message_id,
            text,
            files,
        } => {
            let submission = Submission {
                session_id: session_id.clone(),
                turn_id: turn_id.clone(),
                input: text,
                message: MessageExtras {
                    id: message_id,
                    files,
                    metadata: None,
                },
                regenerate: false,
            };
            let claim = turn::admit(&ports, &chat, &submission, &limits, &interrupt).await?;
            let opened =
                turn::open(&ports, &chat, &submission, &claim, &limits, &interrupt).await?;
            (
                turn_id,
                Some(Turn::new(ports, limits, submission, claim, opened)),
            )
        }
        UiTurn::Approvals(approvals) => {
            // Each request decides one (the first); a step with several waiting calls ends
            // again with the others' interrupts.
            let Some(approval) = approvals.into_iter().next() else {
                return Err(BoundaryError::InvalidRunInput.into());
            };
            let request = ResolveRequest {
                session_id: session_id.clone(),
                token: approval.token.clone(),
                approve: approval.approved,
                reason: approval.reason,
            };
            match turn::resolve_with(&ports, &chat, &request, &limits, &interrupt, SettleWait::No)
                .await?
            {
                Resolution::Continue(turn) => (approval.token, Some(turn)),
                Resolution::Answered(record) => (record.token, None),
            }
        }
        UiTurn::Regenerate { .. } => return Err(BoundaryError::InvalidRunInput.into()),
    };
    if let Some(turn) = turn {
        deadline.hand_over(&turn);
        let running = future_to_promise(async move {
            turn::run(turn, Rc::new(LogOnly)).await;
            deadline.clear();
            Ok(JsValue::UNDEFINED)
        });
        keep_alive(&running);
    }
    let accept = request.headers().get("accept").ok().flatten();
    if answer == RunAnswer::Accepted || prefers_json(accept.as_deref()) {
        let body = json!({ "threadId": session_id, "runId": run_id }).to_string();
        return json_response(202, &body).map_err(|_| BoundaryError::Internal.into());
    }
    let follow_deadline = RequestDeadline::start(request, limits::FOLLOW_MS_MAX as u32);
    events_response(log, sleep, run_id, follow_deadline).await
}

/// The run's AG-UI events: what the log holds of it, then what is appended, until it ends.
async fn events_response(
    log: Rc<dyn SessionLog>,
    sleep: Rc<dyn crate::ports::chat::Sleep>,
    run_id: String,
    deadline: RequestDeadline,
) -> Result<Response, Failure> {
    let token = deadline.interrupt().token().clone();
    let joined = join_run(log.as_ref(), &run_id, &token)
        .await
        .map_err(|e| Refusal::internal(Stage::SessionLog, e.port_error()))?;
    let cancelled = token.clone();
    let (stream, body) = EventStream::new(Box::new(move || cancelled.cancel()))
        .map_err(|_| BoundaryError::Internal)?;
    let response = crate::web::http::respond(200, &body, "text/event-stream", EVENT_HEADERS)
        .map_err(|_| BoundaryError::Internal)?;
    let mut events = AgUiStream::new(&run_id);
    let writer = stream.clone();
    let mut take = move |chunks: &[serde_json::Value]| {
        let mut out = Vec::new();
        for chunk in chunks {
            events.feed(chunk, &mut out);
        }
        writer.push(out);
        events.is_ended()
    };
    if take(&joined.run) {
        stream.close();
        deadline.clear();
        return Ok(response);
    }
    let offset = joined.offset;
    wasm_bindgen_futures::spawn_local(async move {
        // However it ends (the run's end, the time up, the client gone, the log failing), the
        // body closes: a stream that ends without `RUN_FINISHED` is one `HttpAgent` accepts.
        follow(log.as_ref(), sleep.as_ref(), offset, &token, &mut take).await;
        stream.close();
        deadline.clear();
    });
    Ok(response)
}

/// The headers of the events answer (AG-UI's SSE: LF-framed `data:` events, no `[DONE]`).
const EVENT_HEADERS: &[(&str, &str)] =
    &[("cache-control", "no-cache"), ("x-accel-buffering", "no")];

/// The sink of a run whose reader is the session log: the response is already sent.
struct LogOnly;

impl TurnSink for LogOnly {
    fn changed(&self) {}
    fn close(&self, _last: Option<BoundaryError>) {}
}
