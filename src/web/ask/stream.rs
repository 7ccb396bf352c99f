//! The 200 response: Ask NDJSON events pushed into a `ReadableStream` as the generator yields
//! (the answer is bounded, so the queue is too). Text deltas, then the `cite` event with every
//! grounded source, the CAS save of the session, then `done`. A failure after the 200 is one
//! in-stream `error` event (none when the client is gone), then the stream closes.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Function, Object, Reflect, Uint8Array};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{AbortController, AbortSignal, ReadableStream, Response};

use super::generator::GenerationInput;
use super::handler::Failure;
use super::scope::Scope;
use crate::core::ask::answer::{Answer, AskUsage, GenerationChunk};
use crate::core::ask::events::{cite_line, done_line, text_line};
use crate::core::ask::metric::{MetricName, Outcome};
use crate::core::ask::request::{messages_value, AskMessage};
use crate::core::ask::session::{next_record, SessionRecord};
use crate::core::ask::site::Site;
use crate::core::ask::sources::Source;
use crate::core::ask::AskFailure;
use crate::web::adapters::host::describe;
use crate::web::convert::from_json;
use crate::web::http::ndjson_response_with;
use crate::web::js::{any_signal, call_method, get, get_fn, set, timeout_signal, unless_aborted};

/// Everything the stream needs from the steps before it.
pub(crate) struct Turn {
    pub site: Site,
    pub query: String,
    pub conversation: Vec<AskMessage>,
    pub sources: Vec<Source>,
    pub key: Option<Value>,
    pub stored: Option<SessionRecord>,
    /// The work signal: client abort, the site's request deadline, or the body cancelled.
    pub signal: AbortSignal,
    pub request_signal: AbortSignal,
    pub request_deadline: AbortSignal,
    pub response_abort: AbortController,
}

pub(crate) fn start_stream(scope: Rc<Scope>, turn: Turn) -> Result<Response, Failure> {
    let abort = turn.response_abort.clone();
    let cancelled_scope = scope.clone();
    let on_cancel = Box::new(move || {
        abort.abort();
        cancelled_scope.record_error(Outcome::Cancelled);
    });
    let (out, body) = Out::new(scope.clone(), on_cancel).map_err(|_| AskFailure::Internal)?;
    let response = ndjson_response_with(&body, &[("x-request-id", &scope.request_id)])
        .map_err(|_| AskFailure::Internal)?;
    wasm_bindgen_futures::spawn_local(run(scope, turn, out));
    Ok(response)
}

async fn run(scope: Rc<Scope>, turn: Turn, out: Out) {
    let deadline = timeout_signal(turn.site.generation_timeout_ms as u32).ok();
    let generation = deadline
        .as_ref()
        .and_then(|d| any_signal(&[&turn.signal, d]).ok())
        .unwrap_or_else(|| turn.signal.clone());
    if let Err((failure, cause)) = answer(&scope, &turn, &generation, &out).await {
        let deadline_fired = turn.request_deadline.aborted()
            || deadline.as_ref().is_some_and(AbortSignal::aborted)
            || generation.aborted();
        let timeout = !turn.request_signal.aborted() && deadline_fired;
        let interrupted = turn.signal.aborted() || generation.aborted();
        let failure = match () {
            _ if timeout => AskFailure::Timeout,
            _ if interrupted => AskFailure::Cancelled,
            _ => failure,
        };
        if !interrupted || timeout {
            out.emit(&failure.error_event_line(), false);
        }
        scope.record_error(if interrupted && !timeout {
            Outcome::Cancelled
        } else {
            Outcome::Error
        });
        scope.report(failure, cause.as_deref());
    }
    out.close();
}

type Stop = (AskFailure, Option<String>);

/// Generates, cites, saves and finishes; any `Err` is reported by [`run`].
async fn answer(scope: &Scope, turn: &Turn, signal: &AbortSignal, out: &Out) -> Result<(), Stop> {
    let input = Object::new();
    set(&input, "query", turn.query.as_str());
    set(
        &input,
        "messages",
        from_json(&messages_value(&turn.conversation)),
    );
    set(&input, "site", from_json(&turn.site.value));
    let sources: Vec<Value> = turn.sources.iter().map(Source::to_value).collect();
    set(&input, "sources", from_json(&Value::Array(sources)));
    set(&input, "signal", signal.clone());
    let start = scope.options.generator.start(GenerationInput {
        input: input.into(),
        conversation: &turn.conversation,
        sources: &turn.sources,
        created_at: scope.now_iso(),
    });
    let mut generation = unless_aborted(signal, start)
        .await
        .ok_or((AskFailure::Cancelled, None))?
        .map_err(|cause| (AskFailure::Internal, Some(cause)))?;

    let mut text = Answer::default();
    let mut usage: Option<AskUsage> = None;
    loop {
        let next = unless_aborted(signal, generation.next())
            .await
            .ok_or((AskFailure::Cancelled, None))?;
        match next {
            None => break,
            Some(Err(cause)) => return Err((AskFailure::Internal, Some(cause))),
            Some(Ok(GenerationChunk::Usage(u))) => usage = Some(u),
            Some(Ok(GenerationChunk::Text(delta))) => {
                if text.push(&delta).map_err(|f| (f, None))? {
                    out.emit(&text_line(&delta), true);
                }
            }
        }
    }
    drop(generation);
    let answer = text.finish().map_err(|f| (f, None))?.to_owned();
    out.emit(&cite_line(&scope.request_id, &turn.sources), false);
    save(scope, turn, &answer).await?;
    if let Some(usage) = &usage {
        let tokens = [
            (MetricName::InputTokens, usage.input_tokens),
            (MetricName::OutputTokens, usage.output_tokens),
            (MetricName::TotalTokens, usage.total_tokens),
        ];
        for (name, value) in tokens {
            if let Some(value) = value {
                scope.metric(name, value as f64, Outcome::Ok);
            }
        }
        if let Some(cost) = usage.cost_usd {
            scope.metric(MetricName::CostUsd, cost, Outcome::Ok);
        }
    }
    out.emit(
        &done_line(usage.as_ref().and_then(|u| u.model.as_deref())),
        false,
    );
    scope.metric(MetricName::StreamBytes, out.bytes.get() as f64, Outcome::Ok);
    scope.metric(
        MetricName::StreamEvents,
        out.events.get() as f64,
        Outcome::Ok,
    );
    scope.metric(MetricName::StreamSnapshots, 0.0, Outcome::Ok);
    scope.metric(MetricName::RequestTotalMs, scope.elapsed_ms(), Outcome::Ok);
    Ok(())
}

/// The session's CAS save: the stored history plus the question and the answer, expecting the
/// revision that was loaded. `false` from the store is `ASK_PERSISTENCE_CONFLICT`.
async fn save(scope: &Scope, turn: &Turn, answer: &str) -> Result<(), Stop> {
    let (Some(key), Some(store)) = (&turn.key, &scope.options.session_store) else {
        return Ok(());
    };
    let started = scope.clock_ms();
    let (record, expected) = next_record(turn.stored.as_ref(), &turn.conversation, answer);
    let args = [
        &from_json(key),
        &from_json(&record.to_value()),
        &JsValue::from(expected as f64),
        turn.signal.as_ref(),
    ];
    let saved = unless_aborted(&turn.signal, call_method(store, "save", &args))
        .await
        .ok_or((AskFailure::Cancelled, None))?
        .map_err(|e| {
            (
                AskFailure::Internal,
                Some(format!("sessionStore.save failed: {}", describe(&e))),
            )
        })?
        .is_truthy();
    let outcome = if saved { Outcome::Ok } else { Outcome::Error };
    scope.metric(
        MetricName::PersistenceTotalMs,
        scope.clock_ms() - started,
        outcome,
    );
    if !saved {
        scope.metric(MetricName::ConflictCount, 1.0, Outcome::Error);
        return Err((AskFailure::PersistenceConflict, None));
    }
    Ok(())
}

/// The writer's side of the response body, counting what it sent.
struct Out {
    scope: Rc<Scope>,
    controller: Rc<RefCell<Option<JsValue>>>,
    bytes: Cell<u64>,
    events: Cell<u64>,
    first_token: Cell<bool>,
}

impl Out {
    fn new(
        scope: Rc<Scope>,
        on_cancel: Box<dyn FnOnce()>,
    ) -> Result<(Self, ReadableStream), JsValue> {
        let controller: Rc<RefCell<Option<JsValue>>> = Rc::new(RefCell::new(None));
        let source = Object::new();
        let started = controller.clone();
        let start = Closure::<dyn FnMut(JsValue)>::new(move |c: JsValue| {
            *started.borrow_mut() = Some(c);
        });
        let cancelled = controller.clone();
        let mut on_cancel = Some(on_cancel);
        let cancel = Closure::<dyn FnMut(JsValue)>::new(move |_reason: JsValue| {
            cancelled.borrow_mut().take();
            if let Some(callback) = on_cancel.take() {
                callback();
            }
        });
        set(&source, "start", start.into_js_value());
        set(&source, "cancel", cancel.into_js_value());
        let ctor = get(&js_sys::global(), "ReadableStream");
        let stream = Reflect::construct(
            ctor.unchecked_ref::<Function>(),
            &js_sys::Array::of1(&source),
        )?;
        let out = Self {
            scope,
            controller,
            bytes: Cell::new(0),
            events: Cell::new(0),
            first_token: Cell::new(false),
        };
        Ok((out, stream.unchecked_into()))
    }

    /// Enqueues one line (dropped once the consumer cancelled) and records the first-event and
    /// first-token times.
    fn emit(&self, line: &str, is_text: bool) {
        let Some(controller) = self.controller.borrow().clone() else {
            return;
        };
        if self.events.get() == 0 {
            self.scope.metric(
                MetricName::FirstEventMs,
                self.scope.elapsed_ms(),
                Outcome::Ok,
            );
        }
        if is_text && !self.first_token.replace(true) {
            self.scope.metric(
                MetricName::FirstTokenMs,
                self.scope.elapsed_ms(),
                Outcome::Ok,
            );
        }
        self.bytes.set(self.bytes.get() + line.len() as u64);
        self.events.set(self.events.get() + 1);
        if let Some(enqueue) = get_fn(&controller, "enqueue") {
            let _ = enqueue.call1(&controller, &Uint8Array::from(line.as_bytes()));
        }
    }

    fn close(&self) {
        if let Some(controller) = self.controller.borrow_mut().take() {
            if let Some(close) = get_fn(&controller, "close") {
                let _ = close.call0(&controller);
            }
        }
    }
}
