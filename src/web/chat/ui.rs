//! `createUIMessageChatHandler(options)` → `(request, host?) => Promise<Response>`: the chat
//! pipeline of [`super::handler`] (the same authentication before the body, turn lease, replay
//! guard, session log, stop, confirmations, limits and diagnostics) speaking the AI SDK's UI
//! message stream, so the stock `DefaultChatTransport({ api })` works unchanged. One export
//! serves every route under `{api}` (`core::ui::ui_route` decides which):
//!
//! - `POST {api}` with an AG-UI `RunAgentInput` (TanStack AI through `toTanStackConnection`):
//!   the same turn, answered `202` and followed in the session log ([`super::agui`]);
//! - `POST {api}`: a turn — the user's message sent, the last answer regenerated, or tool
//!   approvals answered (each a `client.confirmation.resolve` of its token; a decision that lost
//!   the race follows the winner's continuation instead of failing) — answered with the UI
//!   message stream of its run ([`super::ui_sink`]);
//! - `GET {api}/:id/stream`: the running turn, from its start ([`super::ui_follow`]), or 204;
//! - `POST {api}/:id/stop`: stops whatever turn runs (the AI SDK's own `stop()` only
//!   disconnects);
//! - `GET {api}/:id/messages`: `{ messages: UIMessage[] }`, a first paint for
//!   `useChat({ messages })`;
//! - `POST {api}/:id/messages`: a turn as the Durable Streams TanStack transport sends it
//!   (`{ messages, data }`, `core::agui::decode_transport_send`), answered `202`;
//! - `GET {api}/:id/hydrate`: TanStack's `{ messages, activeRun, interrupts }`
//!   (`core::agui::hydration` of the session log's projection).
//!
//! Every failure before a stream starts is the registry's versioned diagnostic (the AI SDK shows
//! the body text as `error.message`), through the one mapping of [`Failure`].

use std::rc::Rc;

use js_sys::{Function, Promise};
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::future_to_promise;
use web_sys::{Request, Response};

use super::agui::RunAnswer;
use super::deadline::RequestDeadline;
use super::handler::{stop_response, ChatHost, Failure, Named, SessionIds};
use super::http::{bare_response, is_json_media_type, json_response, read_text_limited, BodyError};
use super::js::get_fn;
use super::options::HandlerOptions;
use super::ui_follow::{follow_response, join_response};
use super::ui_sink::UiSink;
use crate::core::agui::{decode_run_input, decode_transport_send, hydration, is_run_input};
use crate::core::limits;
use crate::core::protocol::{BoundaryError, Message};
use crate::core::ui::{
    decode_ui_request, turn_answer, ui_messages, ui_route, Approval, ToolConfirmations, UiRoute,
    UiTurn,
};
use crate::ports::PortError;
use crate::turn::follow::{join, join_run};
use crate::turn::{
    self, ChatSetup, MessageExtras, Ports, Refusal, Resolution, ResolveRequest, SettleWait, Stage,
    Submission, Turn,
};

/// Creates the handler. Throws an Error with `code: "SERVER_INVALID_CONFIG"` for bad options.
#[wasm_bindgen(js_name = createUIMessageChatHandler)]
pub fn create_ui_message_chat_handler(options: JsValue) -> Result<Function, JsValue> {
    let options = Rc::new(HandlerOptions::from_js(
        &options,
        limits::UI_BODY_BYTES_MAX_DEFAULT,
    )?);
    let handler = Closure::<dyn Fn(JsValue, JsValue) -> Promise>::new(
        move |request: JsValue, host: JsValue| {
            let options = options.clone();
            future_to_promise(async move {
                let keep_alive = |running: &Promise| {
                    if let Some(wait_until) = get_fn(&host, "waitUntil") {
                        let _ = wait_until.call1(&host, running);
                    }
                };
                let response = match crate::web::http::as_request(request) {
                    Ok(request) => respond(&*options, &request, &keep_alive).await,
                    Err(_) => Failure::from(BoundaryError::Internal)
                        .into_response(&*options, &Named::default()),
                };
                Ok(response.into())
            })
        },
    );
    Ok(handler.into_js_value().unchecked_into())
}

/// Every request ends here with a Response; `keep_alive` receives a running turn, for the host
/// to keep alive past the response.
pub async fn respond(
    host: &dyn ChatHost,
    request: &Request,
    keep_alive: &dyn Fn(&Promise),
) -> Response {
    let mut named = Named::default();
    match handle(host, request, keep_alive, &mut named).await {
        Ok(response) => response,
        Err(failure) => failure.into_response(host, &named),
    }
}

async fn handle(
    host: &dyn ChatHost,
    request: &Request,
    keep_alive: &dyn Fn(&Promise),
    named: &mut Named,
) -> Result<Response, Failure> {
    let path = web_sys::Url::new(&request.url())
        .map(|url| url.pathname())
        .map_err(|_| BoundaryError::Internal)?;
    let limits = host.limits();
    let route = ui_route(&request.method(), &path);
    match route.clone() {
        UiRoute::MethodNotAllowed { .. } => Err(BoundaryError::MethodNotAllowed.into()),
        UiRoute::BadSessionId => Err(BoundaryError::InvalidUiRequest.into()),
        UiRoute::Send | UiRoute::Post { .. } => {
            if !is_json_media_type(request) {
                return Err(BoundaryError::UnsupportedMediaType.into());
            }
            let deadline = RequestDeadline::start(request, limits.timeout_ms);
            let context = host.authenticate(request, &deadline).await?;
            let body = read_body(limits.ui_body_bytes_max, request, &deadline).await?;
            let run = match route {
                UiRoute::Post { session_id } => Some((
                    decode_transport_send(&body, &session_id)
                        .map_err(|_| BoundaryError::InvalidTanStackSend)?,
                    RunAnswer::Accepted,
                )),
                _ if is_run_input(&body) => Some((
                    decode_run_input(&body).map_err(|_| BoundaryError::InvalidRunInput)?,
                    RunAnswer::ByAccept,
                )),
                _ => None,
            };
            if let Some((run, answer)) = run {
                named.session_id = Some(run.session_id.clone());
                let id = run.session_id;
                return super::agui::run(
                    host, request, &context, id, run.turn, answer, deadline, keep_alive, named,
                )
                .await;
            }
            let ui = decode_ui_request(&body).map_err(|_| BoundaryError::InvalidUiRequest)?;
            named.session_id = Some(ui.session_id.clone());
            send(
                host,
                &context,
                ui.session_id,
                ui.turn,
                deadline,
                keep_alive,
                named,
            )
            .await
        }
        UiRoute::Resume { session_id } => {
            let (ports, chat, deadline) = open_session(host, request, &session_id, named).await?;
            resume(ports, &chat, &session_id, request, &deadline).await
        }
        UiRoute::Stop { session_id } => {
            let (ports, chat, deadline) = open_session(host, request, &session_id, named).await?;
            let answer =
                turn::request_stop_running(&ports, &chat, &session_id, deadline.interrupt())
                    .await?;
            let turn_id = match &answer {
                turn::StopAnswer::Stopping { turn_id } => turn_id.as_str(),
                _ => "",
            };
            stop_response(turn_id, &answer)
        }
        UiRoute::Messages { session_id } => {
            let (ports, chat, deadline) = open_session(host, request, &session_id, named).await?;
            messages(&ports, &chat, &session_id, &deadline).await
        }
        UiRoute::Hydrate { session_id } => {
            let (ports, _, deadline) = open_session(host, request, &session_id, named).await?;
            hydrate(&ports, &deadline).await
        }
    }
}

/// `GET {api}/:id/hydrate`: TanStack's hydration of the session log's projection (a pending
/// interrupt before an active run, as TanStack restores them).
async fn hydrate(ports: &Ports, deadline: &RequestDeadline) -> Result<Response, Failure> {
    let Some(log) = &ports.log else {
        return Err(BoundaryError::RunNeedsLog.into());
    };
    let joined = join(log.as_ref(), deadline.interrupt().token())
        .await
        .map_err(|e| Refusal::internal(Stage::SessionLog, e.port_error()))?;
    let body = hydration(&joined.projection).to_string();
    json_response(200, &body).map_err(|_| BoundaryError::Internal.into())
}

/// A session route's start (stream, stop, messages): its deadline, the request authenticated,
/// then the session's ports and chat as the host resolves them for no turn in particular.
async fn open_session(
    host: &dyn ChatHost,
    request: &Request,
    session_id: &str,
    named: &mut Named,
) -> Result<(Ports, ChatSetup, RequestDeadline), Failure> {
    named.session_id = Some(session_id.to_owned());
    let deadline = RequestDeadline::start(request, host.limits().timeout_ms);
    let context = host.authenticate(request, &deadline).await?;
    let ids = SessionIds {
        session_id,
        turn_id: None,
    };
    let (ports, chat) = host.resolve(&context, ids, &deadline).await?;
    Ok((ports, chat, deadline))
}

/// The body within the route's limit, as JSON.
async fn read_body(
    max_bytes: u64,
    request: &Request,
    deadline: &RequestDeadline,
) -> Result<Value, Failure> {
    let text = deadline
        .interrupt()
        .guard(async {
            read_text_limited(request, max_bytes)
                .await
                .map_err(|e| match e {
                    BodyError::TooLarge => Refusal::from(BoundaryError::TooLarge),
                    BodyError::Unreadable | BodyError::Failed => BoundaryError::InvalidJson.into(),
                })
        })
        .await?;
    serde_json::from_str(&text).map_err(|_| BoundaryError::InvalidJson.into())
}

/// `POST {api}`: the turn the request asks for, streamed.
async fn send(
    host: &dyn ChatHost,
    context: &JsValue,
    session_id: String,
    ui: UiTurn,
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
    let limits = host.limits().turn_limits();
    let interrupt = deadline.interrupt().clone();
    let submission = match ui {
        UiTurn::Approvals(approvals) => {
            return decide(
                ports,
                &chat,
                &session_id,
                approvals,
                limits,
                deadline,
                keep_alive,
            )
            .await
        }
        UiTurn::Send {
            turn_id,
            message_id,
            text,
            files,
        } => Submission {
            session_id: session_id.clone(),
            turn_id,
            input: text,
            message: MessageExtras {
                id: message_id,
                files,
                metadata: None,
            },
            regenerate: false,
        },
        UiTurn::Regenerate { turn_id } => Submission {
            turn_id: turn_id.unwrap_or_else(|| ports.ids.next_id("turn")),
            regenerate: true,
            ..Submission::text(&session_id, "", "")
        },
    };
    let claim = turn::admit(&ports, &chat, &submission, &limits, &interrupt).await?;
    let opened = turn::open(&ports, &chat, &submission, &claim, &limits, &interrupt).await?;
    let turn = Turn::new(ports, limits, submission, claim, opened);
    stream(turn, None, deadline, keep_alive).await
}

/// Answered approvals: the first one decided (each request decides one; a person who answers
/// several calls of one step at once sends them again as the continuation asks for the next).
/// The winner streams its continuation into the same UI message; a request that lost the
/// decision (an identical resubmit, another tab) follows the winner's continuation in the log.
async fn decide(
    ports: Ports,
    chat: &ChatSetup,
    session_id: &str,
    approvals: Vec<Approval>,
    limits: turn::TurnLimits,
    deadline: RequestDeadline,
    keep_alive: &dyn Fn(&Promise),
) -> Result<Response, Failure> {
    let Some(approval) = approvals.into_iter().next() else {
        return Err(BoundaryError::InvalidUiRequest.into());
    };
    let request = ResolveRequest {
        session_id: session_id.to_owned(),
        token: approval.token.clone(),
        approve: approval.approved,
        reason: approval.reason,
    };
    let interrupt = deadline.interrupt().clone();
    match turn::resolve_with(&ports, chat, &request, &limits, &interrupt, SettleWait::No).await? {
        Resolution::Continue(turn) => {
            let history = {
                let state = turn.state();
                turn_answer(&state.messages[..turn.history_len()]).to_vec()
            };
            stream(turn, Some(history), deadline, keep_alive).await
        }
        Resolution::Answered(record) => {
            let Some(log) = ports.log.clone() else {
                return Err(BoundaryError::ConfirmationUnavailable.into());
            };
            let joined = join_run(log.as_ref(), &record.token, deadline.interrupt().token())
                .await
                .map_err(|e| Refusal::internal(Stage::SessionLog, e.port_error()))?;
            let settled = !record.status.is_processing();
            join_response(
                log,
                ports.sleep.clone(),
                joined,
                record.token,
                settled,
                deadline,
            )
            .map_err(|_| BoundaryError::Internal.into())
        }
    }
}

/// Answers with the turn's UI message stream and runs the turn in a task the host keeps alive.
/// A stream that cannot be built gives the claim up.
async fn stream(
    turn: Rc<Turn>,
    continuing: Option<Vec<Message>>,
    deadline: RequestDeadline,
    keep_alive: &dyn Fn(&Promise),
) -> Result<Response, Failure> {
    let answer = UiSink::open(&turn, continuing.as_deref())
        .and_then(|(sink, body)| Ok((sink, super::ui_follow::ui_stream_response(&body)?)));
    let (sink, response) = match answer {
        Ok(answer) => answer,
        Err(_) => {
            turn::abandon(turn.ports(), &turn.claim().envelope, &turn.limits()).await;
            return Err(BoundaryError::Internal.into());
        }
    };
    deadline.hand_over(&turn);
    let running = future_to_promise(async move {
        turn::run(turn, sink).await;
        deadline.clear();
        Ok(JsValue::UNDEFINED)
    });
    keep_alive(&running);
    Ok(response)
}

/// `GET {api}/:id/stream`: 204 when no turn runs (or no session log records it), else the
/// running turn's stream from its start: the answer so far rebuilt, then what follows, live.
async fn resume(
    ports: Ports,
    chat: &ChatSetup,
    session_id: &str,
    request: &Request,
    deadline: &RequestDeadline,
) -> Result<Response, Failure> {
    let running =
        turn::follow::running_turn(&ports, chat, session_id, deadline.interrupt()).await?;
    let (Some(active), Some(log)) = (running, ports.log.clone()) else {
        return Ok(bare_response(204));
    };
    let token = deadline.interrupt().token().clone();
    let joined = join(log.as_ref(), &token)
        .await
        .map_err(|e| Refusal::internal(Stage::SessionLog, e.port_error()))?;
    let now_ms = ports.clock.now_ms();
    let follow_ms = active
        .expires_at
        .saturating_sub(now_ms)
        .min(limits::FOLLOW_MS_MAX);
    let follow_deadline =
        RequestDeadline::start(request, u32::try_from(follow_ms).unwrap_or(u32::MAX));
    follow_response(
        log,
        ports.sleep.clone(),
        joined,
        active.turn_id,
        follow_deadline,
    )
    .map_err(|_| BoundaryError::Internal.into())
}

/// `GET {api}/:id/messages`: the conversation as `UIMessage[]`. With a session log, its
/// projection (which holds a running turn's partial answer); else the saved messages and the
/// session's confirmation records.
async fn messages(
    ports: &Ports,
    chat: &ChatSetup,
    session_id: &str,
    deadline: &RequestDeadline,
) -> Result<Response, Failure> {
    let token = deadline.interrupt().token();
    let ui = match &ports.log {
        Some(log) => {
            let joined = join(log.as_ref(), token)
                .await
                .map_err(|e| Refusal::internal(Stage::SessionLog, e.port_error()))?;
            let confirmations = ToolConfirmations::from_log(joined.projection.confirmations());
            ui_messages(&joined.projection.to_messages(), &confirmations)
        }
        None => {
            let (messages, records) =
                turn::follow::saved_conversation(ports, chat, session_id, deadline.interrupt())
                    .await?;
            ui_messages(&messages, &ToolConfirmations::from_records(&records))
        }
    };
    let body = json!({ "messages": ui }).to_string();
    json_response(200, &body).map_err(|_| {
        Failure::from(Refusal::internal(
            Stage::SessionLoad,
            PortError::new("the messages response could not be built"),
        ))
    })
}
