//! One request's identity and observations: its request id, the host's clock and `now`, and
//! the metric records sent to `onMetric` (only once the trusted site is known, as in AgentsKit).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Date, Object};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::options::AskOptions;
use crate::core::ask::metric::{metric_value, MetricName, MetricScope, Outcome};
use crate::core::ask::site::{is_request_id, Site};
use crate::core::ask::AskFailure;
use crate::web::adapters::models::swallow_rejection;
use crate::web::convert::from_json;
use crate::web::js::{get, set};

pub struct Scope {
    pub options: Rc<AskOptions>,
    pub request_id: String,
    started_ms: f64,
    /// `(siteId, corpusId)` once the site is resolved.
    site: RefCell<Option<(String, String)>>,
    error_recorded: Cell<bool>,
}

impl Scope {
    pub fn new(options: Rc<AskOptions>) -> Rc<Self> {
        let request_id = request_id(&options);
        let scope = Self {
            options,
            request_id,
            started_ms: 0.0,
            site: RefCell::new(None),
            error_recorded: Cell::new(false),
        };
        let started_ms = scope.clock_ms();
        Rc::new(Self {
            started_ms,
            ..scope
        })
    }

    pub fn set_site(&self, site: &Site) {
        *self.site.borrow_mut() = Some((site.site_id.clone(), site.corpus_id.clone()));
    }

    /// The host's `clock()` (epoch ms), else `Date.now()`.
    pub fn clock_ms(&self) -> f64 {
        self.options
            .clock
            .as_ref()
            .and_then(|f| f.call0(&JsValue::UNDEFINED).ok())
            .and_then(|v| v.as_f64())
            .filter(|n| n.is_finite())
            .unwrap_or_else(Date::now)
    }

    pub fn elapsed_ms(&self) -> f64 {
        self.clock_ms() - self.started_ms
    }

    /// The host's `now()` as `toISOString()`, else the current time.
    pub fn now_iso(&self) -> String {
        let date = self
            .options
            .now
            .as_ref()
            .and_then(|f| f.call0(&JsValue::UNDEFINED).ok())
            .and_then(|v| v.dyn_into::<Date>().ok())
            .filter(|d| d.get_time().is_finite())
            .unwrap_or_else(Date::new_0);
        String::from(date.to_iso_string())
    }

    /// Sends one metric to `onMetric` (isolated: its throw or rejection is ignored).
    pub fn metric(&self, name: MetricName, value: f64, outcome: Outcome) {
        let Some(on_metric) = &self.options.on_metric else {
            return;
        };
        let site = self.site.borrow();
        let Some((site_id, corpus_id)) = site.as_ref() else {
            return;
        };
        let scope = MetricScope {
            site_id,
            corpus_id,
            request_id: &self.request_id,
        };
        let record = metric_value(&scope, name, value, outcome, &self.now_iso());
        if let Ok(result) = on_metric.call1(&JsValue::UNDEFINED, &from_json(&record)) {
            swallow_rejection(&result);
        }
    }

    /// The failure metrics of a request, once: `cancellation.count` or `error.count`, then
    /// `request.total_ms`.
    pub fn record_error(&self, outcome: Outcome) {
        if self.error_recorded.replace(true) {
            return;
        }
        let name = if outcome == Outcome::Cancelled {
            MetricName::CancellationCount
        } else {
            MetricName::ErrorCount
        };
        self.metric(name, 1.0, outcome);
        self.metric(MetricName::RequestTotalMs, self.elapsed_ms(), outcome);
    }

    /// Hands a failure's cause to the host's `onError` (never to the client).
    pub fn report(&self, failure: AskFailure, cause: Option<&str>) {
        let (Some(on_error), Some(cause)) = (&self.options.on_error, cause) else {
            return;
        };
        let report = Object::new();
        set(&report, "code", failure.row().code);
        set(&report, "requestId", self.request_id.as_str());
        set(&report, "cause", cause);
        if let Ok(result) = on_error.call1(&JsValue::UNDEFINED, &report) {
            swallow_rejection(&result);
        }
    }
}

/// The host's `createId()` when it returns a SafeId, else `crypto.randomUUID()`.
fn request_id(options: &AskOptions) -> String {
    options
        .create_id
        .as_ref()
        .and_then(|f| f.call0(&JsValue::UNDEFINED).ok())
        .and_then(|v| v.as_string())
        .filter(|id| is_request_id(id))
        .unwrap_or_else(random_uuid)
}

fn random_uuid() -> String {
    let crypto = get(&js_sys::global(), "crypto");
    js_sys::Reflect::get(&crypto, &"randomUUID".into())
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        .and_then(|f| f.call0(&crypto).ok())
        .and_then(|v| v.as_string())
        .unwrap_or_else(|| format!("ask-{}", Date::now() as u64))
}
