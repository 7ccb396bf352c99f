//! The AG-UI `RunAgentInput` side of `createUIMessageChatHandler` (`POST {api}` with a body that
//! names a thread and a run, `core::agui::request`): TanStack AI's client through
//! `toTanStackConnection`, and any client that POSTs AG-UI runs. The run is a turn of the same
//! pipeline (authentication, lease, replay guard, confirmations by compare-and-set); its events
//! are the session log's, which the client follows over its one connection, so the answer is
//! `202 { threadId, runId }` as soon as the turn is admitted (or the decision claimed), and the
//! turn runs in a task the host keeps alive. A decision that lost the race (an identical
//! resubmit, another tab) is answered the same: the winner's run is in the log.

use std::rc::Rc;

use js_sys::Promise;
use serde_json::json;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::future_to_promise;
use web_sys::Response;

use super::deadline::RequestDeadline;
use super::handler::{ChatHost, Failure, Named, SessionIds};
use super::http::json_response;
use crate::core::protocol::BoundaryError;
use crate::core::ui::UiTurn;
use crate::turn::{
    self, MessageExtras, Resolution, ResolveRequest, SettleWait, Submission, Turn, TurnSink,
};

/// A run's turn: admitted and started (or its decision claimed), answered with `202`.
pub async fn run(
    host: &dyn ChatHost,
    context: &JsValue,
    session_id: String,
    ui: UiTurn,
    deadline: RequestDeadline,
    keep_alive: &dyn Fn(&Promise),
    named: &mut Named,
) -> Result<Response, Failure> {
    let turn_id = match &ui {
        UiTurn::Send { turn_id, .. } => Some(turn_id.clone()),
        UiTurn::Approvals(approvals) => approvals.first().map(|a| a.token.clone()),
        UiTurn::Regenerate { turn_id } => turn_id.clone(),
    };
    named.turn_id = turn_id.clone();
    let ids = SessionIds {
        session_id: &session_id,
        turn_id: turn_id.as_deref(),
    };
    let (ports, chat) = host.resolve(context, ids, &deadline).await?;
    if ports.log.is_none() {
        return Err(BoundaryError::RunNeedsLog.into());
    }
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
    let body = json!({ "threadId": session_id, "runId": run_id }).to_string();
    json_response(202, &body).map_err(|_| BoundaryError::Internal.into())
}

/// The sink of a run whose reader is the session log: the response is already sent.
struct LogOnly;

impl TurnSink for LogOnly {
    fn changed(&self) {}
    fn close(&self, _last: Option<BoundaryError>) {}
}
