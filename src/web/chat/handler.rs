//! `createChatHandler(options)` → `(Request) => Promise<Response>`, the turn step by step
//! (design §3). The pre-stream steps run under one deadline; after the claim, every path
//! releases the lease by CAS; the turn itself runs in a spawned task that publishes into the
//! coalescing stream and ends with cleanup (settle, save messages, release, close).

use std::rc::Rc;

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::future_to_promise;
use web_sys::{AbortSignal, Request, Response};

use crate::core::protocol::{decode_turn_event, BoundaryError, EventBody};
use crate::core::session::{
    abandon_turn, claim_turn, resume_session, ClaimDecision, SessionEnvelope, SessionIdentity,
    TurnOutcome,
};
use crate::ports::session::SessionStorage;
use crate::ports::PortError;

use super::definition::Definition;
use super::http::{is_json_media_type, json_response, read_text_limited, BodyError};
use super::js::{
    aborted, any_signal, call, get, race, timeout_signal, unless_aborted, within_ms, Either,
};
use super::options::HandlerOptions;
use super::turn::{start_turn, Claimed, HostClock};
use crate::web::adapters::JsSessionStorage;

/// Creates the handler. Throws an Error with `code: "SERVER_INVALID_CONFIG"` for bad options.
#[wasm_bindgen(js_name = createChatHandler)]
pub fn create_chat_handler(options: JsValue) -> Result<Function, JsValue> {
    let options = Rc::new(HandlerOptions::from_js(&options)?);
    let handler = Closure::<dyn Fn(JsValue) -> Promise>::new(move |request: JsValue| {
        let options = options.clone();
        future_to_promise(async move { Ok(respond(options, request).await.into()) })
    });
    Ok(handler.into_js_value().unchecked_into())
}

/// Why a request ended before its stream started. Mapped to a response in exactly one place.
pub(crate) enum Failure {
    Boundary(BoundaryError),
    /// `TURN_REPLAYED`, carrying the recorded outcome.
    Replayed(TurnOutcome),
    /// The host's own response (authentication said no), returned verbatim.
    Host(Response),
}

impl From<BoundaryError> for Failure {
    fn from(e: BoundaryError) -> Self {
        Failure::Boundary(e)
    }
}

impl Failure {
    fn into_response(self) -> Response {
        let (status, body) = match self {
            Failure::Host(response) => return response,
            Failure::Boundary(e) => (e.status(), e.diagnostic().error_body_json(None)),
            Failure::Replayed(outcome) => {
                let e = BoundaryError::TurnReplayed;
                (
                    e.status(),
                    e.diagnostic().error_body_json(Some(outcome.as_str())),
                )
            }
        };
        json_response(status, &body).unwrap_or_else(|_| bare_response(status))
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

/// Every request ends here with a Response; nothing is thrown to the runtime.
async fn respond(options: Rc<HandlerOptions>, request: JsValue) -> Response {
    let Ok(request) = request.dyn_into::<Request>() else {
        return Failure::Boundary(BoundaryError::Internal).into_response();
    };
    match handle(options, request).await {
        Ok(response) => response,
        Err(failure) => failure.into_response(),
    }
}

/// The two signals of a request: the deadline (client abort or timeout) and which one fired.
pub(crate) struct Deadline {
    pub signal: AbortSignal,
    timeout: AbortSignal,
}

impl Deadline {
    fn new(request: &Request, timeout_ms: u32) -> Result<Self, Failure> {
        let timeout = timeout_signal(timeout_ms).map_err(|_| BoundaryError::Internal)?;
        let signal =
            any_signal(&[&request.signal(), &timeout]).map_err(|_| BoundaryError::Internal)?;
        Ok(Self { signal, timeout })
    }

    /// The timeout half alone, to tell a deadline from a client abort later.
    pub fn timeout_signal(&self) -> AbortSignal {
        self.timeout.clone()
    }

    /// 408 when the deadline fired, 499 when the client went away.
    pub fn reason(&self) -> BoundaryError {
        if self.timeout.aborted() {
            BoundaryError::Timeout
        } else {
            BoundaryError::Cancelled
        }
    }

    /// Runs a step under the deadline; an abort, or any failure once aborted, is 408/499.
    pub(crate) async fn run<T>(
        &self,
        step: impl std::future::Future<Output = Result<T, Failure>>,
    ) -> Result<T, Failure> {
        match unless_aborted(&self.signal, step).await {
            None => Err(self.reason().into()),
            Some(Err(Failure::Boundary(_))) if self.signal.aborted() => Err(self.reason().into()),
            Some(result) => result,
        }
    }
}

async fn handle(options: Rc<HandlerOptions>, request: Request) -> Result<Response, Failure> {
    if request.method() != "POST" {
        return Err(BoundaryError::MethodNotAllowed.into());
    }
    if !is_json_media_type(&request) {
        return Err(BoundaryError::UnsupportedMediaType.into());
    }
    let deadline = Deadline::new(&request, options.timeout_ms)?;
    let clock = HostClock::new(&options);
    let (claimed, expected_cursor) = deadline
        .run(claim(&options, &request, &deadline, &clock))
        .await?;
    write_claim(&options, &claimed, expected_cursor, &deadline, &clock).await?;
    start_turn(options, claimed, deadline, clock).await
}

/// Steps 2-5: authenticate, read and decode the body, resolve, resume and decide the claim
/// (written by [`write_claim`], with the cursor it expects).
async fn claim(
    options: &HandlerOptions,
    request: &Request,
    deadline: &Deadline,
    clock: &HostClock,
) -> Result<(Claimed, Option<u64>), Failure> {
    let context = authenticate(options, request, &deadline.signal).await?;
    let text = read_text_limited(request, options.body_bytes_max)
        .await
        .map_err(|e| match e {
            BodyError::TooLarge => BoundaryError::TooLarge,
            BodyError::Unreadable | BodyError::Failed => BoundaryError::InvalidJson,
        })?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|_| BoundaryError::InvalidJson)?;
    let event = decode_turn_event(&json).map_err(|_| BoundaryError::InvalidEvent)?;
    let EventBody::Submit { input } = event.body else {
        return Err(BoundaryError::InvalidEvent.into());
    };
    let session_id = event.envelope.session_id;
    let turn_id = event.envelope.turn_id;

    let signal: &JsValue = deadline.signal.as_ref();
    let definition_value = call(
        &options.resolve_definition,
        &[&context, &JsValue::from_str(&session_id), signal],
    )
    .await
    .map_err(|_| BoundaryError::Internal)?;
    let definition = Definition::from_js(&definition_value).map_err(|_| BoundaryError::Internal)?;
    let storage_value = call(&options.session_storage, &[&context, signal])
        .await
        .map_err(|_| BoundaryError::Internal)?;
    let storage = Rc::new(
        JsSessionStorage::from_js(&storage_value, Some(deadline.signal.clone()))
            .map_err(|_| BoundaryError::Internal)?,
    );

    let identity = SessionIdentity {
        session_id: session_id.clone(),
        definition_id: definition.id.clone(),
        definition_revision: definition.revision,
        initial_conversation_state: None,
    };
    let stored = storage
        .load(&session_id)
        .await
        .map_err(|_| BoundaryError::Internal)?;
    let resumed = resume_session(stored.as_ref(), &identity, clock.now_ms())
        .map_err(|_| BoundaryError::Internal)?;
    let envelope = match claim_turn(
        &resumed.envelope,
        &turn_id,
        clock.now_ms(),
        options.lease_ms(),
    ) {
        Ok(ClaimDecision::Claimed(envelope)) => envelope,
        Ok(ClaimDecision::Busy { .. }) => return Err(BoundaryError::SessionBusy.into()),
        Ok(ClaimDecision::Replayed { outcome }) => return Err(Failure::Replayed(outcome)),
        Err(_) => return Err(BoundaryError::Internal.into()),
    };
    Ok((
        Claimed {
            envelope,
            storage,
            definition,
            input,
            turn_id,
            session_id,
        },
        resumed.expected_cursor,
    ))
}

/// Step 5's one CAS write; a lost race is busy, never a retry loop. Not simply raced against
/// the deadline: a claim still in flight when the client leaves may land a moment later, and a
/// lease no turn runs under would keep the session busy until it lapses. So after an abort the
/// write's answer is still awaited (within the cleanup budget) and a claim that went through
/// is abandoned before the 408/499 goes out.
async fn write_claim(
    options: &HandlerOptions,
    claimed: &Claimed,
    expected_cursor: Option<u64>,
    deadline: &Deadline,
    clock: &HostClock,
) -> Result<(), Failure> {
    let value = claimed.envelope.to_value();
    let mut save = Box::pin(claimed.storage.save(&value, expected_cursor));
    let written = match race(save.as_mut(), aborted(&deadline.signal)).await {
        Either::Left(written) => written,
        Either::Right(_) => {
            let budget_ms = options.cleanup_timeout_ms;
            if let Some(Ok(true)) = within_ms(budget_ms, save).await {
                abandon(
                    &claimed.storage,
                    &claimed.envelope,
                    &claimed.turn_id,
                    clock.now_ms(),
                    budget_ms,
                )
                .await;
            }
            return Err(deadline.reason().into());
        }
    };
    match written {
        Ok(true) => Ok(()),
        Ok(false) => Err(BoundaryError::SessionBusy.into()),
        Err(_) if deadline.signal.aborted() => Err(deadline.reason().into()),
        Err(_) => Err(BoundaryError::Internal.into()),
    }
}

/// Step 2: the host's `authenticate(request, signal)`; absent means anonymous (`undefined`).
async fn authenticate(
    options: &HandlerOptions,
    request: &Request,
    signal: &AbortSignal,
) -> Result<JsValue, Failure> {
    let Some(authenticate) = &options.authenticate else {
        return Ok(JsValue::UNDEFINED);
    };
    let result = call(authenticate, &[request.as_ref(), signal.as_ref()])
        .await
        .map_err(|_| BoundaryError::Internal)?;
    if get(&result, "ok") == JsValue::TRUE {
        return Ok(get(&result, "context"));
    }
    match get(&result, "response").dyn_into::<Response>() {
        Ok(response) => Err(Failure::Host(response)),
        Err(_) => Err(BoundaryError::Internal.into()),
    }
}

/// Releases a claimed lease without running the turn (a failure before the stream started):
/// the lease is cleared by CAS at once, and the turn id stays free for a retry. Bounded by the
/// cleanup budget, under a signal of its own (see [`cleanup_signal`]).
pub(crate) async fn abandon(
    storage: &JsSessionStorage,
    claimed: &SessionEnvelope,
    turn_id: &str,
    now_ms: u64,
    budget_ms: u32,
) {
    if let Ok(next) = abandon_turn(claimed, turn_id, now_ms) {
        let _ = save_after_claim(storage, &next, claimed.cursor, budget_ms).await;
    }
}

/// The cleanup write of a claimed turn (abandoned or released): a CAS on the claim's cursor,
/// within the cleanup budget and under [`cleanup_signal`]. `None` when the budget ran out.
pub(crate) async fn save_after_claim(
    storage: &JsSessionStorage,
    next: &SessionEnvelope,
    claim_cursor: u64,
    budget_ms: u32,
) -> Option<Result<bool, PortError>> {
    let storage = storage.with_signal(cleanup_signal(budget_ms));
    within_ms(
        budget_ms,
        storage.save(&next.to_value(), Some(claim_cursor)),
    )
    .await
}

/// The signal handed to ports during cleanup: aborts when the cleanup budget is spent. Not the
/// turn's deadline, which has often fired already (that is why cleanup runs), and a store that
/// honours an aborted signal would refuse the very save that releases the lease.
pub(crate) fn cleanup_signal(budget_ms: u32) -> Option<AbortSignal> {
    timeout_signal(budget_ms).ok()
}
