//! `createChatHandler(options)` → `(request, host?) => Promise<Response>`. One
//! straight pipeline; each step returns what the next one takes, and every failure comes back
//! as a [`Failure`] that exactly one place ([`Failure::into_response`]) turns into a response,
//! after handing its cause to the operator's `onError`.
//!
//! 1. method and media type (405 / 415), then the deadline starts ([`RequestDeadline`]);
//! 2. `authenticate(request, signal)` before a byte of body is read;
//! 3. the body, up to `maxBodyBytes`, decoded into a client request (submit, stop);
//! 4. `resolveDefinition`, `sessionStorage`, `sessionLog` → the turn's ports;
//! 5. submit: `turn::admit` → `turn::open` → the NDJSON stream, and `turn::run` in a task the host
//!    keeps alive (`host.waitUntil`); stop: `turn::request_stop`; a confirmation's decision:
//!    `turn::resolve` → the continuation streamed and run like a submitted turn, or (the record
//!    was not pending) a JSON answer with its state.
//!
//! The second argument is optional: a host that can keep work alive past the response (a
//! Cloudflare Worker's `ctx`, anything with `waitUntil(promise)`) passes it, so a turn whose
//! client went away still finishes, saves and releases.
//!
//! What the host decides (steps 2 and 4, and where faults go) comes through [`ChatHost`]: the JS
//! options of `createChatHandler` are one ([`HandlerOptions`]); the demo Worker's Rust host
//! (`crate::cloudflare::chat`) is another, with Rust ports and no JS callbacks at all.

use std::rc::Rc;

use js_sys::{Function, Object, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::future_to_promise;
use web_sys::{Request, Response};

use super::deadline::RequestDeadline;
use super::host::{HostClock, OnError};
use super::http::{
    is_json_media_type, json_response, ndjson_response, read_text_limited, BodyError,
};
use super::js::{call, get, get_fn, set};
use super::options::HandlerOptions;
use super::response::ResponseSink;
use crate::core::coalesce::Pacing;
use crate::core::protocol::{
    decode_client_request, resolve_answer, BoundaryError, ClientRequest, RequestKind,
};
use crate::ports::log::SessionLog;
use crate::ports::{LocalFuture, PortError};
use crate::turn::{
    self, ChatSetup, Fault, FaultReport, MessageExtras, Ports, Refusal, Resolution,
    ResolveRequest, Stage, StopAnswer, Submission, Turn,
};
use crate::web::adapters::host::HostSleep;
use crate::web::adapters::{JsSessionLog, JsSessionStorage};

/// Creates the handler. Throws an Error with `code: "SERVER_INVALID_CONFIG"` for bad options.
#[wasm_bindgen(js_name = createChatHandler)]
pub fn create_chat_handler(options: JsValue) -> Result<Function, JsValue> {
    let options = Rc::new(HandlerOptions::from_js(
        &options,
        crate::core::limits::BODY_BYTES_MAX_DEFAULT,
    )?);
    let methods = options.clone();
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
    let handler: Function = handler.into_js_value().unchecked_into();
    super::reconcile::attach(&handler, methods);
    Ok(handler)
}

/// The bounds of one handler's requests.
#[derive(Clone, Copy, Debug)]
pub struct ChatLimits {
    pub timeout_ms: u32,
    pub cleanup_timeout_ms: u32,
    pub body_bytes_max: u64,
    /// The body limit of the AI SDK UI message stream route, which the stock client sends the
    /// whole conversation to with every request.
    pub ui_body_bytes_max: u64,
    /// How long a tool confirmation a turn proposes stays approvable.
    pub confirmation_ttl_ms: u64,
    /// The snapshot stream's byte budget (`core::coalesce`).
    pub snapshot_bytes_per_s: u64,
    /// How long a model stream may go quiet after its first chunk (`modelStallMs`).
    pub model_stall_ms: u64,
}

impl ChatLimits {
    /// The lease covers the whole turn plus three cleanup budgets (settle, save, release).
    pub fn turn_limits(&self) -> crate::turn::TurnLimits {
        crate::turn::TurnLimits {
            lease_ms: crate::core::limits::lease_ms(
                u64::from(self.timeout_ms),
                u64::from(self.cleanup_timeout_ms),
            ),
            cleanup_budget_ms: u64::from(self.cleanup_timeout_ms),
            confirmation_ttl_ms: self.confirmation_ttl_ms,
            model_stall_ms: self.model_stall_ms,
        }
    }

    /// How the turn's snapshot stream is paced.
    pub fn pacing(&self) -> Pacing {
        Pacing {
            bytes_per_s: self.snapshot_bytes_per_s,
        }
    }
}

/// What a host decides for the pipeline: who the caller is (step 2), the ports of a session
/// (step 4), and where faults go. The context `authenticate` returns is handed only to
/// `resolve`; nothing in the payload can fill it.
pub trait ChatHost {
    fn limits(&self) -> ChatLimits;

    /// `Ok(context)`, or the host's own refusal (`Failure::Host`).
    fn authenticate<'a>(
        &'a self,
        request: &'a Request,
        deadline: &'a RequestDeadline,
    ) -> LocalFuture<'a, Result<JsValue, Failure>>;

    fn resolve<'a>(
        &'a self,
        context: &'a JsValue,
        ids: SessionIds<'a>,
        deadline: &'a RequestDeadline,
    ) -> LocalFuture<'a, Result<(Ports, ChatSetup), Failure>>;

    /// A fault of a request that ended before its stream started, for the operator.
    fn report(&self, fault: &Fault, session_id: Option<&str>, turn_id: Option<&str>);

    /// Before a turn-starting request (a send, a decision) claims anything: the host's rate
    /// limit, if it has one (`Err(Failure::Limited)` when it refused).
    fn rate_limit<'a>(
        &'a self,
        _context: &'a JsValue,
        _ids: SessionIds<'a>,
        _deadline: &'a RequestDeadline,
    ) -> LocalFuture<'a, Result<(), Failure>> {
        Box::pin(async { Ok(()) })
    }
}

/// The session a request is for, and its turn when it names one (for `onError`).
#[derive(Clone, Copy, Debug)]
pub struct SessionIds<'a> {
    pub session_id: &'a str,
    pub turn_id: Option<&'a str>,
}

/// Why a request ended before its stream started.
pub enum Failure {
    Refused(Refusal),
    /// The host's own response (authentication said no), returned verbatim.
    Host(Response),
    /// The host's rate limit said no: `429 CHAT_RATE_LIMITED`, `retry-after` when it said when.
    Limited {
        retry_after_s: Option<u64>,
    },
}

impl From<Refusal> for Failure {
    fn from(refusal: Refusal) -> Self {
        Failure::Refused(refusal)
    }
}

impl From<BoundaryError> for Failure {
    fn from(error: BoundaryError) -> Self {
        Failure::Refused(error.into())
    }
}

/// The ids a request named, once known (for `onError`).
#[derive(Default)]
pub struct Named {
    pub(super) session_id: Option<String>,
    pub(super) turn_id: Option<String>,
}

impl Failure {
    /// The one mapping: the fault to the operator, a safe diagnostic (or the host's own
    /// response) to the client.
    pub(super) fn into_response(self, host: &dyn ChatHost, named: &Named) -> Response {
        let refusal = match self {
            Failure::Host(response) => return response,
            Failure::Limited { retry_after_s } => return limited_response(retry_after_s),
            Failure::Refused(refusal) => refusal,
        };
        if let Some(fault) = &refusal.fault {
            host.report(fault, named.session_id.as_deref(), named.turn_id.as_deref());
        }
        let e = refusal.error;
        let body = e
            .diagnostic()
            .error_body_json(refusal.replayed.map(|o| o.as_str()));
        json_response(e.status(), &body).unwrap_or_else(|_| bare_response(e.status()))
    }
}

/// Last resort when even building a JSON response threw: a bodiless response with the status.
fn bare_response(status: u16) -> Response {
    let init = web_sys::ResponseInit::new();
    init.set_status(status);
    Response::new_with_opt_str_and_init(None, &init)
        .or_else(|_| Response::new())
        .unwrap_or_else(|_| JsValue::UNDEFINED.unchecked_into())
}

/// `429 CHAT_RATE_LIMITED`, with `retry-after` (seconds) when the limit said when.
fn limited_response(retry_after_s: Option<u64>) -> Response {
    let e = BoundaryError::RateLimited;
    let body = e.diagnostic().error_body_json(None);
    let retry = retry_after_s.map(|s| s.to_string());
    let headers: Vec<(&str, &str)> = retry.iter().map(|r| ("retry-after", r.as_str())).collect();
    crate::web::http::json_response_with(e.status(), &body, &headers)
        .unwrap_or_else(|_| bare_response(e.status()))
}

/// Every request ends here with a Response; nothing is thrown to the runtime. `keep_alive`
/// receives the running turn, for the host to keep alive past the response.
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
    if request.method() != "POST" {
        return Err(BoundaryError::MethodNotAllowed.into());
    }
    if !is_json_media_type(request) {
        return Err(BoundaryError::UnsupportedMediaType.into());
    }
    let limits = host.limits();
    let deadline = RequestDeadline::start(request, limits.timeout_ms);
    let context = host.authenticate(request, &deadline).await?;
    let client = read_request(&limits, request, &deadline).await?;
    named.session_id = Some(client.envelope.session_id.clone());
    named.turn_id = Some(client.envelope.turn_id.clone());
    let ids = SessionIds {
        session_id: &client.envelope.session_id,
        turn_id: Some(&client.envelope.turn_id),
    };
    if !matches!(client.kind, RequestKind::Stop) {
        host.rate_limit(&context, ids, &deadline).await?;
    }
    let (ports, chat) = host.resolve(&context, ids, &deadline).await?;
    match client.kind {
        RequestKind::Submit { input, message } => {
            let submission = Submission {
                message: MessageExtras {
                    id: message.id,
                    files: message.files,
                    metadata: message.metadata,
                },
                ..Submission::text(
                    &client.envelope.session_id,
                    &client.envelope.turn_id,
                    &input,
                )
            };
            submit(&limits, ports, chat, submission, deadline, keep_alive).await
        }
        RequestKind::Stop => {
            let envelope = &client.envelope;
            let answer = turn::request_stop(
                &ports,
                &chat,
                &envelope.session_id,
                &envelope.turn_id,
                deadline.interrupt(),
            )
            .await?;
            Ok(stop_response(&envelope.turn_id, &answer)?)
        }
        RequestKind::Resolve {
            token,
            approve,
            reason,
        } => {
            let request = ResolveRequest {
                session_id: client.envelope.session_id,
                token,
                approve,
                reason,
            };
            decide(&limits, ports, chat, request, deadline, keep_alive).await
        }
    }
}

impl ChatHost for HandlerOptions {
    fn limits(&self) -> ChatLimits {
        ChatLimits {
            timeout_ms: self.timeout_ms,
            cleanup_timeout_ms: self.cleanup_timeout_ms,
            body_bytes_max: self.body_bytes_max,
            ui_body_bytes_max: self.body_bytes_max,
            confirmation_ttl_ms: self.confirmation_ttl_ms,
            snapshot_bytes_per_s: self.snapshot_bytes_per_s,
            model_stall_ms: self.model_stall_ms,
        }
    }

    fn authenticate<'a>(
        &'a self,
        request: &'a Request,
        deadline: &'a RequestDeadline,
    ) -> LocalFuture<'a, Result<JsValue, Failure>> {
        Box::pin(authenticate(self, request, deadline))
    }

    fn resolve<'a>(
        &'a self,
        context: &'a JsValue,
        ids: SessionIds<'a>,
        deadline: &'a RequestDeadline,
    ) -> LocalFuture<'a, Result<(Ports, ChatSetup), Failure>> {
        Box::pin(resolve(
            self,
            context,
            (ids.session_id, ids.turn_id),
            deadline,
        ))
    }

    fn report(&self, fault: &Fault, session_id: Option<&str>, turn_id: Option<&str>) {
        OnError::new(self.on_error.clone(), session_id, turn_id).report(fault);
    }

    fn rate_limit<'a>(
        &'a self,
        context: &'a JsValue,
        ids: SessionIds<'a>,
        deadline: &'a RequestDeadline,
    ) -> LocalFuture<'a, Result<(), Failure>> {
        Box::pin(super::rate_limit::ask(self, context, ids, deadline))
    }
}

/// Step 2: the host's `authenticate(request, signal)`; absent means anonymous (`undefined`).
pub(super) async fn authenticate(
    options: &HandlerOptions,
    request: &Request,
    deadline: &RequestDeadline,
) -> Result<JsValue, Failure> {
    let Some(authenticate) = &options.authenticate else {
        return Ok(JsValue::UNDEFINED);
    };
    let signal = deadline.signal();
    let result = deadline
        .interrupt()
        .guard(async {
            call(authenticate, &[request.as_ref(), &signal])
                .await
                .map_err(|e| host_fault(Stage::Authenticate, "authenticate", &e))
        })
        .await?;
    if get(&result, "ok") == JsValue::TRUE {
        return Ok(get(&result, "context"));
    }
    match get(&result, "response").dyn_into::<Response>() {
        Ok(response) => Err(Failure::Host(response)),
        Err(_) => Err(Refusal::internal(
            Stage::Authenticate,
            PortError::new(
                "authenticate must return { ok: true, context } or { ok: false, response }",
            ),
        )
        .into()),
    }
}

/// Step 3: the body within its limit, decoded.
async fn read_request(
    limits: &ChatLimits,
    request: &Request,
    deadline: &RequestDeadline,
) -> Result<ClientRequest, Failure> {
    let text = deadline
        .interrupt()
        .guard(async {
            read_text_limited(request, limits.body_bytes_max)
                .await
                .map_err(|e| match e {
                    BodyError::TooLarge => Refusal::from(BoundaryError::TooLarge),
                    BodyError::Unreadable | BodyError::Failed => BoundaryError::InvalidJson.into(),
                })
        })
        .await?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|_| BoundaryError::InvalidJson)?;
    decode_client_request(&json).ok_or_else(|| BoundaryError::InvalidEvent.into())
}

/// Step 4: the host's definition, storage and log for session `ids.0` (a request of turn
/// `ids.1`, for `onError`), as ports.
pub(super) async fn resolve(
    options: &HandlerOptions,
    context: &JsValue,
    ids: (&str, Option<&str>),
    deadline: &RequestDeadline,
) -> Result<(Ports, ChatSetup), Failure> {
    let (session_name, turn_name) = ids;
    let session_id = JsValue::from_str(session_name);
    let signal = deadline.signal();
    let interrupt = deadline.interrupt();
    let definition = interrupt
        .guard(async {
            let value = call(
                &options.resolve_definition,
                &[context, &session_id, &signal],
            )
            .await
            .map_err(|e| host_fault(Stage::ResolveDefinition, "resolveDefinition", &e))?;
            options
                .definitions
                .resolve(&value)
                .map_err(|m| Refusal::internal(Stage::ResolveDefinition, PortError::new(m)))
        })
        .await?;
    let storage = interrupt
        .guard(async {
            let value = call(&options.session_storage, &[context, &signal])
                .await
                .map_err(|e| host_fault(Stage::SessionStorage, "sessionStorage", &e))?;
            JsSessionStorage::from_js(&value)
                .map_err(|m| Refusal::internal(Stage::SessionStorage, PortError::new(m)))
        })
        .await?;
    let log = match &options.session_log {
        None => None,
        Some(session_log) => {
            interrupt
                .guard(async {
                    let value = call(session_log, &[context, &session_id, &signal])
                        .await
                        .map_err(|e| host_fault(Stage::SessionLog, "sessionLog", &e))?;
                    if value.is_undefined() || value.is_null() {
                        return Ok(None);
                    }
                    JsSessionLog::from_js(&value)
                        .map(|log| Some(Rc::new(log) as Rc<dyn SessionLog>))
                        .map_err(|m| Refusal::internal(Stage::SessionLog, PortError::new(m)))
                })
                .await?
        }
    };
    let clock = Rc::new(HostClock::new(options));
    let faults = Rc::new(
        OnError::new(options.on_error.clone(), Some(session_name), turn_name)
            .with_observers(options.observers()),
    );
    let chat = definition.chat_setup(session_name);
    let ports = Ports {
        storage: Rc::new(storage),
        memory: definition.memory.clone(),
        log,
        model: definition.model.clone(),
        tools: definition.tools.clone(),
        clock: clock.clone(),
        ids: clock,
        sleep: Rc::new(HostSleep),
        faults,
    };
    Ok((ports, chat))
}

/// Step 5 for a submission: claim, open, answer with the stream, run in the background.
async fn submit(
    limits: &ChatLimits,
    ports: Ports,
    chat: ChatSetup,
    submission: Submission,
    deadline: RequestDeadline,
    keep_alive: &dyn Fn(&Promise),
) -> Result<Response, Failure> {
    let pacing = limits.pacing();
    let limits = limits.turn_limits();
    let interrupt = deadline.interrupt().clone();
    let claim = turn::admit(&ports, &chat, &submission, &limits, &interrupt).await?;
    let opened = turn::open(&ports, &chat, &submission, &claim, &limits, &interrupt).await?;
    let turn = Turn::new(ports, limits, submission, claim, opened);
    stream(turn, pacing, deadline, keep_alive).await
}

/// Step 5 for a confirmation's decision: the winner's continuation is streamed and run like a
/// submitted turn; any other request gets the record's state.
async fn decide(
    limits: &ChatLimits,
    ports: Ports,
    chat: ChatSetup,
    request: ResolveRequest,
    deadline: RequestDeadline,
    keep_alive: &dyn Fn(&Promise),
) -> Result<Response, Failure> {
    let pacing = limits.pacing();
    let limits = limits.turn_limits();
    let interrupt = deadline.interrupt().clone();
    match turn::resolve(&ports, &chat, &request, &limits, &interrupt).await? {
        Resolution::Continue(turn) => stream(turn, pacing, deadline, keep_alive).await,
        Resolution::Answered(record) => {
            let (status, body) = resolve_answer(&record);
            json_response(status, &body).map_err(|_| BoundaryError::Internal.into())
        }
    }
}

/// Answers with the turn's NDJSON stream and runs the turn in a task the host keeps alive. A
/// stream that cannot be built gives the claim up.
async fn stream(
    turn: Rc<Turn>,
    pacing: Pacing,
    deadline: RequestDeadline,
    keep_alive: &dyn Fn(&Promise),
) -> Result<Response, Failure> {
    let answer = ResponseSink::open(&turn, pacing)
        .and_then(|(sink, body)| Ok((sink, ndjson_response(&body)?)));
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

/// The answer to `client.turn.stop`: 202 while the turn stops, 200 when it had ended already.
pub(super) fn stop_response(turn_id: &str, answer: &StopAnswer) -> Result<Response, Failure> {
    let stop = Object::new();
    set(&stop, "version", 1);
    set(&stop, "turnId", turn_id);
    let status = match answer {
        StopAnswer::Stopping { .. } => {
            set(&stop, "state", "stopping");
            202
        }
        StopAnswer::Ended(outcome) => {
            set(&stop, "state", "ended");
            set(&stop, "outcome", outcome.as_str());
            200
        }
        StopAnswer::Idle => {
            set(&stop, "state", "idle");
            200
        }
    };
    let body = Object::new();
    set(&body, "stop", stop);
    let text = js_sys::JSON::stringify(&body)
        .ok()
        .and_then(|t| t.as_string())
        .ok_or(BoundaryError::Internal)?;
    json_response(status, &text).map_err(|_| BoundaryError::Internal.into())
}

/// A host callback that threw: an internal failure whose cause is what it threw.
pub fn host_fault(stage: Stage, what: &str, thrown: &JsValue) -> Refusal {
    Refusal {
        error: BoundaryError::Internal,
        replayed: None,
        fault: Some(Fault::new(
            stage,
            crate::web::adapters::host::port_error(what, thrown),
        )),
    }
}
