//! `createAskServiceHandler(options)` → `(Request) => Promise<Response>`, AgentsKit's trusted
//! Ask backend step by step, top to bottom:
//!
//! 1. method (405) and media type (415), cheap and before anything else;
//! 2. under the bootstrap deadline: `authenticate(request, signal)` (the host's own response
//!    when it says no), `resolveSite(context, signal)` (the trusted policy),
//!    `resolveSubjectId(context)`, then the `?corpus=` / `?persona=` hints (403 on mismatch):
//!    all before a byte of body is read;
//! 3. under the site's request deadline: the rate limiter (429 + `retry-after`), the body
//!    (413 / 400), the request, the stored session, the question, retrieval under the site's
//!    retrieval deadline and grounding (422 when no allowed source is left);
//! 4. the NDJSON stream (`stream.rs`).
//!
//! Every failure before the stream is mapped to a response in [`respond`] only: an abort at any
//! step becomes `ASK_TIMEOUT` (a deadline fired) or `ASK_CANCELLED` (the client left).

use std::rc::Rc;

use js_sys::{Function, Object};
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{AbortController, AbortSignal, Request, Response, Url};

use super::options::AskOptions;
use super::scope::Scope;
use super::stream::{start_stream, Turn};
use crate::core::ask::metric::{MetricName, Outcome};
use crate::core::ask::request::{decode_request, latest_question, messages_value, AskMessage};
use crate::core::ask::session::{conversation, decode_record, SessionRecord};
use crate::core::ask::site::{decode_site, hints_agree, is_subject_id, Site};
use crate::core::ask::sources::{ground, Source};
use crate::core::ask::{aborted_failure, retry_after_seconds, AskFailure};
use crate::web::adapters::host::describe;
use crate::web::convert::{from_json, to_json};
use crate::web::http::{
    bare_response, handler_function, is_json_media_type, json_response_with, read_text_limited,
    BodyError,
};
use crate::web::js::{any_signal, call, call_method, get, set, timeout_signal, unless_aborted};

/// Creates the handler. Throws an Error with `code: "ASK_INTERNAL"` for bad options.
#[wasm_bindgen(js_name = createAskServiceHandler)]
pub fn create_ask_service_handler(options: JsValue) -> Result<Function, JsValue> {
    Ok(handler_function(
        Rc::new(AskOptions::from_js(&options)?),
        respond,
    ))
}

/// Why a request ended before its stream started.
pub(crate) enum Failure {
    Ask {
        failure: AskFailure,
        retry_after: Option<u64>,
        /// For the operator's `onError`; never sent.
        cause: Option<String>,
    },
    /// `authenticate` said no: its response, verbatim.
    Host(Response),
}

impl From<AskFailure> for Failure {
    fn from(failure: AskFailure) -> Self {
        Failure::Ask {
            failure,
            retry_after: None,
            cause: None,
        }
    }
}

fn because(failure: AskFailure, cause: impl Into<String>) -> Failure {
    Failure::Ask {
        failure,
        retry_after: None,
        cause: Some(cause.into()),
    }
}

/// The deadlines of one request: the bootstrap one (authentication and site), then the site's
/// request deadline for everything after.
struct Signals {
    request: AbortSignal,
    bootstrap_timeout: AbortSignal,
    bootstrap: AbortSignal,
    request_deadline: Option<AbortSignal>,
}

impl Signals {
    fn new(request: &Request, bootstrap_ms: u32) -> Result<Self, Failure> {
        let signal = request.signal();
        let bootstrap_timeout = timeout_signal(bootstrap_ms).map_err(|_| AskFailure::Internal)?;
        let bootstrap =
            any_signal(&[&signal, &bootstrap_timeout]).map_err(|_| AskFailure::Internal)?;
        Ok(Self {
            request: signal,
            bootstrap_timeout,
            bootstrap,
            request_deadline: None,
        })
    }

    /// Starts the site's request deadline; the work signal also follows the response's own
    /// controller (aborted when the body is cancelled).
    fn start_work(
        &mut self,
        site: &Site,
    ) -> Result<(AbortSignal, AbortSignal, AbortController), Failure> {
        let deadline =
            timeout_signal(site.request_timeout_ms as u32).map_err(|_| AskFailure::Internal)?;
        let response = AbortController::new().map_err(|_| AskFailure::Internal)?;
        let work = any_signal(&[&self.request, &deadline, &response.signal()])
            .map_err(|_| AskFailure::Internal)?;
        self.request_deadline = Some(deadline.clone());
        Ok((work, deadline, response))
    }

    fn deadline_expired(&self) -> bool {
        self.bootstrap_timeout.aborted()
            || self
                .request_deadline
                .as_ref()
                .is_some_and(AbortSignal::aborted)
    }

    fn cancelled(&self) -> bool {
        self.bootstrap.aborted() || self.request.aborted() || self.deadline_expired()
    }
}

/// Every request ends here with a Response; nothing is thrown to the runtime.
async fn respond(options: Rc<AskOptions>, request: JsValue) -> Response {
    let scope = Scope::new(options);
    let Ok(request) = crate::web::http::as_request(request) else {
        return failure_response(&scope, AskFailure::Internal, None);
    };
    let mut signals = match Signals::new(&request, scope.options.bootstrap_timeout_ms) {
        Ok(signals) => signals,
        Err(_) => return failure_response(&scope, AskFailure::Internal, None),
    };
    match handle(&scope, &request, &mut signals).await {
        Ok(response) | Err(Failure::Host(response)) => response,
        Err(Failure::Ask {
            failure,
            retry_after,
            cause,
        }) => {
            let cancelled = signals.cancelled();
            let (failure, retry_after) = if cancelled {
                (aborted_failure(signals.deadline_expired()), None)
            } else {
                (failure, retry_after)
            };
            scope.record_error(match () {
                _ if cancelled => Outcome::Cancelled,
                _ if failure.status() < 500 => Outcome::Rejected,
                _ => Outcome::Error,
            });
            scope.report(failure, cause.as_deref());
            failure_response(&scope, failure, retry_after)
        }
    }
}

/// The one mapping of a failure to a response: the versioned diagnostic, `x-request-id`, and
/// `retry-after` for a rate limit that said when.
fn failure_response(scope: &Scope, failure: AskFailure, retry_after: Option<u64>) -> Response {
    let retry = retry_after.map(|s| s.to_string());
    let mut headers = vec![("x-request-id", scope.request_id.as_str())];
    if let Some(retry) = &retry {
        headers.push(("retry-after", retry.as_str()));
    }
    json_response_with(failure.status(), &failure.error_body_json(), &headers)
        .unwrap_or_else(|_| bare_response(failure.status()))
}

/// Runs a step unless `signal` aborts first (the caller's mapping turns that into 408/499).
async fn step<T>(
    signal: &AbortSignal,
    fut: impl std::future::Future<Output = Result<T, Failure>>,
) -> Result<T, Failure> {
    unless_aborted(signal, fut)
        .await
        .unwrap_or(Err(AskFailure::Cancelled.into()))
}

async fn handle(
    scope: &Rc<Scope>,
    request: &Request,
    signals: &mut Signals,
) -> Result<Response, Failure> {
    let options = &scope.options;
    if request.method() != "POST" {
        return Err(AskFailure::MethodNotAllowed.into());
    }
    if !is_json_media_type(request) {
        return Err(AskFailure::UnsupportedMediaType.into());
    }
    let bootstrap = signals.bootstrap.clone();
    let context = step(&bootstrap, authenticate(options, request, &bootstrap)).await?;
    let site = step(&bootstrap, resolve_site(options, &context, &bootstrap)).await?;
    scope.set_site(&site);
    let subject_id = step(&bootstrap, resolve_subject_id(options, &context)).await?;
    let url = Url::new(&request.url()).map_err(|_| AskFailure::Internal)?;
    let params = url.search_params();
    if !hints_agree(
        &site,
        params.get("corpus").as_deref(),
        params.get("persona").as_deref(),
    ) {
        return Err(AskFailure::Forbidden.into());
    }

    let (signal, request_deadline, response_abort) = signals.start_work(&site)?;
    step(
        &signal,
        rate_limit(options, &context, &site, &subject_id, &signal),
    )
    .await?;
    let text = step(&signal, read_body(request, options.body_bytes_max)).await?;
    let body: Value = serde_json::from_str(&text).map_err(|_| AskFailure::InvalidJson)?;
    let ask =
        decode_request(&body).map_err(|e| because(AskFailure::InvalidPayload, e.message()))?;
    scope.metric(
        MetricName::DeterministicFallback,
        f64::from(u8::from(ask.deterministic)),
        Outcome::Ok,
    );
    if site.persistence_required && (ask.session_id.is_none() || options.session_store.is_none()) {
        return Err(AskFailure::PersistenceNotConfigured.into());
    }
    let key = match (&ask.session_id, &options.session_store) {
        (Some(session_id), Some(_)) => Some(
            json!({ "siteId": site.site_id, "subjectId": subject_id, "sessionId": session_id }),
        ),
        _ => None,
    };
    let stored = match (&key, &options.session_store) {
        (Some(key), Some(store)) => step(&signal, load_record(scope, store, key, &signal)).await?,
        _ => None,
    };
    let conversation = conversation(stored.as_ref(), &ask.messages);
    let query = latest_question(&conversation).ok_or(AskFailure::QuestionMissing)?;
    let retriever = options
        .retriever(site.corpus_mode)
        .ok_or(AskFailure::RetrieverUnavailable)?;
    let sources = retrieve(scope, retriever, &site, &query, &conversation, &signal).await?;
    if sources.is_empty() {
        return Err(AskFailure::NoGroundedSources.into());
    }
    start_stream(
        scope.clone(),
        Turn {
            site,
            query,
            conversation,
            sources,
            key,
            stored,
            signal,
            request_signal: signals.request.clone(),
            request_deadline,
            response_abort,
        },
    )
}

/// `authenticate(request, signal)`: `{ ok: true, context }` or `{ ok: false, response }`.
async fn authenticate(
    options: &AskOptions,
    request: &Request,
    signal: &AbortSignal,
) -> Result<JsValue, Failure> {
    let result = call(&options.authenticate, &[request.as_ref(), signal.as_ref()])
        .await
        .map_err(|e| {
            because(
                AskFailure::Internal,
                format!("authenticate failed: {}", describe(&e)),
            )
        })?;
    if get(&result, "ok") == JsValue::TRUE {
        return Ok(get(&result, "context"));
    }
    match get(&result, "response").dyn_into::<Response>() {
        Ok(response) => Err(Failure::Host(response)),
        Err(_) => Err(because(
            AskFailure::Internal,
            "authenticate returned neither { ok: true, context } nor { ok: false, response }",
        )),
    }
}

/// `resolveSite(context, signal)`, decoded as the trusted policy.
async fn resolve_site(
    options: &AskOptions,
    context: &JsValue,
    signal: &AbortSignal,
) -> Result<Site, Failure> {
    let value = call(&options.resolve_site, &[context, signal.as_ref()])
        .await
        .map_err(|e| {
            because(
                AskFailure::Internal,
                format!("resolveSite failed: {}", describe(&e)),
            )
        })?;
    let json =
        to_json(&value).map_err(|e| because(AskFailure::Internal, format!("resolveSite: {e}")))?;
    decode_site(&json).map_err(|e| {
        because(
            AskFailure::Internal,
            format!("resolveSite returned an invalid site: {}", e.message()),
        )
    })
}

async fn resolve_subject_id(options: &AskOptions, context: &JsValue) -> Result<String, Failure> {
    let value = call(&options.resolve_subject_id, &[context])
        .await
        .map_err(|e| {
            because(
                AskFailure::Internal,
                format!("resolveSubjectId failed: {}", describe(&e)),
            )
        })?;
    value
        .as_string()
        .filter(|s| is_subject_id(s))
        .ok_or_else(|| AskFailure::HostIdentityInvalid.into())
}

/// `rateLimit({ context, site, subjectId, signal })` → `{ allowed, retryAfterSeconds? }`.
async fn rate_limit(
    options: &AskOptions,
    context: &JsValue,
    site: &Site,
    subject_id: &str,
    signal: &AbortSignal,
) -> Result<(), Failure> {
    let Some(rate_limit) = &options.rate_limit else {
        return Ok(());
    };
    let input = Object::new();
    set(&input, "context", context.clone());
    set(&input, "site", from_json(&site.value));
    set(&input, "subjectId", subject_id);
    set(&input, "signal", signal.clone());
    let decision = call(rate_limit, &[&input]).await.map_err(|e| {
        because(
            AskFailure::Internal,
            format!("rateLimit failed: {}", describe(&e)),
        )
    })?;
    match get(&decision, "allowed").as_bool() {
        Some(true) => Ok(()),
        Some(false) => Err(Failure::Ask {
            failure: AskFailure::RateLimited,
            retry_after: retry_after_seconds(get(&decision, "retryAfterSeconds").as_f64()),
            cause: None,
        }),
        None => Err(because(
            AskFailure::Internal,
            "rateLimit must return { allowed: boolean }",
        )),
    }
}

async fn read_body(request: &Request, max_bytes: u64) -> Result<String, Failure> {
    read_text_limited(request, max_bytes)
        .await
        .map_err(|e| match e {
            BodyError::TooLarge => AskFailure::TooLarge.into(),
            BodyError::Unreadable | BodyError::Failed => AskFailure::InvalidJson.into(),
        })
}

/// `sessionStore.load(key, signal)` → the stored record, or `None` for a new session.
async fn load_record(
    scope: &Scope,
    store: &JsValue,
    key: &Value,
    signal: &AbortSignal,
) -> Result<Option<SessionRecord>, Failure> {
    let started = scope.clock_ms();
    let loaded = call_method(store, "load", &[&from_json(key), signal.as_ref()])
        .await
        .map_err(|e| {
            because(
                AskFailure::Internal,
                format!("sessionStore.load failed: {}", describe(&e)),
            )
        })?;
    let record = if loaded.is_undefined() || loaded.is_null() {
        None
    } else {
        let json = to_json(&loaded)
            .map_err(|e| because(AskFailure::Internal, format!("sessionStore.load: {e}")))?;
        let record = decode_record(&json).map_err(|e| {
            because(
                AskFailure::Internal,
                format!(
                    "sessionStore.load returned an invalid record: {}",
                    e.message()
                ),
            )
        })?;
        Some(record)
    };
    scope.metric(
        MetricName::PersistenceTotalMs,
        scope.clock_ms() - started,
        Outcome::Ok,
    );
    Ok(record)
}

/// The site's retriever under its own deadline, then grounding. A retriever failure is
/// `ASK_RETRIEVAL_FAILED` and its own deadline `ASK_TIMEOUT`; the request's abort wins over both.
async fn retrieve(
    scope: &Scope,
    retriever: &JsValue,
    site: &Site,
    query: &str,
    conversation: &[AskMessage],
    signal: &AbortSignal,
) -> Result<Vec<Source>, Failure> {
    let started = scope.clock_ms();
    let deadline =
        timeout_signal(site.retrieval_timeout_ms as u32).map_err(|_| AskFailure::Internal)?;
    let retrieval = any_signal(&[signal, &deadline]).map_err(|_| AskFailure::Internal)?;
    let input = Object::new();
    set(&input, "query", query);
    set(&input, "messages", from_json(&messages_value(conversation)));
    set(&input, "site", from_json(&site.value));
    set(&input, "signal", retrieval.clone());
    let outcome = unless_aborted(&retrieval, call_method(retriever, "retrieve", &[&input])).await;
    let candidates = match outcome {
        Some(Ok(candidates)) => candidates,
        _ if signal.aborted() => return Err(AskFailure::Cancelled.into()),
        _ if retrieval.aborted() => return Err(AskFailure::RetrievalTimeout.into()),
        Some(Err(e)) => {
            return Err(because(
                AskFailure::RetrievalFailed,
                format!("retrieve failed: {}", describe(&e)),
            ))
        }
        None => return Err(AskFailure::RetrievalFailed.into()),
    };
    let json = to_json(&candidates)
        .map_err(|e| because(AskFailure::RetrievalFailed, format!("retrieve: {e}")))?;
    let (sources, _dropped) = ground(site, &json).map_err(|_| {
        because(
            AskFailure::RetrievalFailed,
            "retrieve must return an array of sources",
        )
    })?;
    scope.metric(
        MetricName::RetrievalTotalMs,
        scope.clock_ms() - started,
        Outcome::Ok,
    );
    scope.metric(
        MetricName::RetrievalDocuments,
        sources.len() as f64,
        Outcome::Ok,
    );
    Ok(sources)
}
