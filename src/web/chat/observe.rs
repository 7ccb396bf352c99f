//! Telling the operator's observers of an ended turn what `turn::summary`, `turn::metrics` and
//! `turn::spans` decided: `onTurnEnd(event)`, `onMetric(record)` for each metric, and the host's
//! OpenTelemetry `tracer` one span each (`startSpan` with the decided start time, attributes
//! and parent, `setStatus` for a failed one, `end` with the decided end time).
//!
//! Isolated: each hook is called once per item and never awaited. A throw goes to `onError`
//! (stage `onTurnEnd`, `onMetric`, `tracer`) and ends that hook's part for this turn; a
//! rejection goes to `onError` when it happens; a promise that never settles holds nothing. This
//! runs once the turn's last line is queued and its lease released, so a slow hook delays no
//! turn (one that blocks synchronously blocks its isolate, as any JavaScript would: nothing can
//! bound that). Bounded: a turn has eight metrics at most and `TRACED_STEPS_PER_TURN_MAX` step
//! spans plus its own and its approvals'.

use js_sys::{Array, Date, Function, Map, Object};
use wasm_bindgen::prelude::*;

use super::host::{Observers, OnError};
use super::js::{get_fn, set};
use crate::turn::metrics::turn_metrics;
use crate::turn::spans::{turn_spans, AttrValue, SpanKind, SpanRecord};
use crate::turn::summary::TurnSummary;
use crate::turn::{Fault, FaultReport, Stage};
use crate::web::adapters::host::port_error;
use crate::web::convert::from_json;

pub(super) fn turn_ended(faults: &OnError, observers: &Observers, summary: &TurnSummary) {
    if let Some(hook) = &observers.on_turn_end {
        call_observer(faults, hook, Stage::OnTurnEnd, &turn_end_event(summary));
    }
    if let Some(hook) = &observers.on_metric {
        for record in turn_metrics(summary) {
            if !call_observer(faults, hook, Stage::OnMetric, &from_json(&record)) {
                break;
            }
        }
    }
    if let Some(tracer) = &observers.tracer {
        if let Err(thrown) = trace(tracer, &turn_spans(summary)) {
            faults.report(&Fault::new(Stage::Tracer, port_error("tracer", &thrown)));
        }
    }
}

/// Calls `hook(argument)`; false when it threw (reported).
fn call_observer(faults: &OnError, hook: &Function, stage: Stage, argument: &JsValue) -> bool {
    match hook.call1(&JsValue::UNDEFINED, argument) {
        Ok(returned) => {
            faults.settle_quietly(&returned, stage);
            true
        }
        Err(thrown) => {
            faults.report(&Fault::new(stage, port_error(stage.as_str(), &thrown)));
            false
        }
    }
}

/// `{ sessionId, turnId, outcome, finishReason, usage, durationMs, errorCode? }`.
fn turn_end_event(summary: &TurnSummary) -> JsValue {
    let event = Object::new();
    set(&event, "sessionId", summary.session_id.as_str());
    set(&event, "turnId", summary.turn_id.as_str());
    set(&event, "outcome", summary.outcome);
    set(&event, "finishReason", summary.finish_reason);
    let usage = Object::new();
    set(&usage, "promptTokens", summary.usage.prompt_tokens as f64);
    set(
        &usage,
        "completionTokens",
        summary.usage.completion_tokens as f64,
    );
    set(&usage, "totalTokens", summary.usage.total_tokens as f64);
    set(&event, "usage", usage);
    set(&event, "durationMs", summary.duration_ms as f64);
    if let Some(code) = summary.error_code {
        set(&event, "errorCode", code);
    }
    event.into()
}

/// The OpenTelemetry API's `SpanKind` and `SpanStatusCode.ERROR` (numbers on the wire of the
/// API, stable since 1.0).
const KIND_INTERNAL: f64 = 0.0;
const KIND_CLIENT: f64 = 2.0;
const STATUS_ERROR: f64 = 2.0;

/// Every span started (parents first), then every started one ended (children first), each at
/// its decided time. A throw stops starting more; the spans already started are still ended.
fn trace(tracer: &JsValue, spans: &[SpanRecord]) -> Result<(), JsValue> {
    let start_span = get_fn(tracer, "startSpan")
        .ok_or_else(|| JsValue::from(js_sys::Error::new("tracer.startSpan is not a function")))?;
    let mut started: Vec<JsValue> = Vec::with_capacity(spans.len());
    let mut result = Ok(());
    for span in spans {
        match start(tracer, &start_span, span, &started) {
            Ok(made) => started.push(made),
            Err(thrown) => {
                result = Err(thrown);
                break;
            }
        }
    }
    for (span, made) in spans.iter().zip(&started).rev() {
        let ended = get_fn(made, "end")
            .ok_or_else(|| JsValue::from(js_sys::Error::new("span.end is not a function")))
            .and_then(|end| end.call1(made, &date(span.end_ms)));
        if let (Err(thrown), Ok(())) = (ended, &result) {
            result = Err(thrown);
        }
    }
    result
}

fn start(
    tracer: &JsValue,
    start_span: &Function,
    span: &SpanRecord,
    started: &[JsValue],
) -> Result<JsValue, JsValue> {
    let options = Object::new();
    let kind = match span.kind {
        SpanKind::Internal => KIND_INTERNAL,
        SpanKind::Client => KIND_CLIENT,
    };
    set(&options, "kind", kind);
    set(&options, "startTime", date(span.start_ms));
    let attributes = Object::new();
    for (name, value) in &span.attributes {
        let value: JsValue = match value {
            AttrValue::Str(s) => s.as_str().into(),
            AttrValue::Int(n) => (*n as f64).into(),
            AttrValue::Strs(list) => list
                .iter()
                .map(|s| JsValue::from_str(s))
                .collect::<Array>()
                .into(),
        };
        set(&attributes, name, value);
    }
    set(&options, "attributes", attributes);
    let name = JsValue::from_str(&span.name);
    // The turn's span starts in the host's active context (under its request's span, when it
    // has a context manager); every other span under the turn's.
    let made = match span.parent.and_then(|i| started.get(i)) {
        None => start_span.call2(tracer, &name, &options)?,
        Some(parent) => start_span.call3(tracer, &name, &options, &context_with_span(parent))?,
    };
    if let Some(error) = &span.error {
        let status = Object::new();
        set(&status, "code", STATUS_ERROR);
        set(&status, "message", error.as_str());
        if let Some(set_status) = get_fn(&made, "setStatus") {
            set_status.call1(&made, &status)?;
        }
    }
    Ok(made)
}

fn date(ms: u64) -> Date {
    Date::new(&JsValue::from_f64(ms as f64))
}

/// The key the OpenTelemetry API keeps a context's span under: its `createContextKey` is
/// `Symbol.for(description)`, so every copy of the API (and ours, which imports none) agrees.
const SPAN_KEY: &str = "OpenTelemetry Context Key SPAN";

/// A `Context` (`getValue`, `setValue`, `deleteValue`; immutable) holding `span` as its span:
/// what the API's `trace.setSpan(ROOT_CONTEXT, span)` makes, without importing the API (the
/// package depends on no OpenTelemetry module; the host brings its own).
fn context_with_span(span: &JsValue) -> JsValue {
    let values = Map::new();
    values.set(&js_sys::Symbol::for_(SPAN_KEY), span);
    context(&values)
}

fn context(values: &Map) -> JsValue {
    let context = Object::new();
    let bind = |method: &Closure<dyn FnMut(JsValue, JsValue, JsValue) -> JsValue>| {
        let method: &Function = method.as_ref().unchecked_ref();
        method.bind1(&JsValue::UNDEFINED, values)
    };
    CONTEXT_GET.with(|get| set(&context, "getValue", bind(get)));
    CONTEXT_SET.with(|put| set(&context, "setValue", bind(put)));
    CONTEXT_DELETE.with(|delete| set(&context, "deleteValue", bind(delete)));
    context.into()
}

fn copy(values: &JsValue) -> Map {
    let copy = Map::new();
    if let Some(values) = values.dyn_ref::<Map>() {
        values.for_each(&mut |value, key| {
            copy.set(&key, &value);
        });
    }
    copy
}

thread_local! {
    /// A context's methods, one closure each for every context (bound to its values: a bound
    /// function is plain JS, nothing to free). `(values, key, value)`.
    static CONTEXT_GET: Closure<dyn FnMut(JsValue, JsValue, JsValue) -> JsValue> =
        Closure::new(|values: JsValue, key: JsValue, _: JsValue| {
            values
                .dyn_ref::<Map>()
                .map_or(JsValue::UNDEFINED, |values| values.get(&key))
        });
    static CONTEXT_SET: Closure<dyn FnMut(JsValue, JsValue, JsValue) -> JsValue> =
        Closure::new(|values: JsValue, key: JsValue, value: JsValue| {
            let values = copy(&values);
            values.set(&key, &value);
            context(&values)
        });
    static CONTEXT_DELETE: Closure<dyn FnMut(JsValue, JsValue, JsValue) -> JsValue> =
        Closure::new(|values: JsValue, key: JsValue, _: JsValue| {
            let values = copy(&values);
            values.delete(&key);
            context(&values)
        });
}
