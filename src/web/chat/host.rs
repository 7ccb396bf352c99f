//! The host's time, ids and error hook as ports: `now()` and `createId()` from the options (else
//! `Date.now()` and `crypto.randomUUID()`), and `onError(error, { stage, sessionId, turnId })`,
//! which receives every fault with the value the host code actually threw.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Function, Object};
use wasm_bindgen::prelude::*;

use super::js::{get, get_fn, set};
use super::options::HandlerOptions;
use crate::ports::chat::{Clock, Ids};
use crate::turn::{Fault, FaultReport, Stage};
use crate::web::adapters::host::port_error;

/// The host's `now()` and `createId()`, or `Date.now()` and `crypto.randomUUID()`.
#[derive(Clone)]
pub struct HostClock {
    now: Option<Function>,
    create_id: Option<Function>,
    counter: Rc<Cell<u64>>,
}

impl HostClock {
    pub fn new(options: &HandlerOptions) -> Self {
        Self {
            now: options.now.clone(),
            create_id: options.create_id.clone(),
            counter: Rc::default(),
        }
    }

    /// A fresh SafeId from the host, or a counter-based one if the host's id is unusable.
    pub fn new_id(&self) -> String {
        let id = match &self.create_id {
            Some(create) => create
                .call0(&JsValue::UNDEFINED)
                .ok()
                .and_then(|v| v.as_string())
                .filter(|id| crate::core::checks::is_safe_id(id)),
            // A UUID is a SafeId by construction (hex digits and dashes).
            None => random_uuid(),
        };
        id.unwrap_or_else(|| {
            self.counter.set(self.counter.get() + 1);
            format!("id-{}-{}", self.now_ms(), self.counter.get())
        })
    }
}

impl Clock for HostClock {
    fn now_ms(&self) -> u64 {
        let value = match &self.now {
            Some(now) => now.call0(&JsValue::UNDEFINED).ok().and_then(|v| v.as_f64()),
            None => Some(js_sys::Date::now()),
        };
        value
            .filter(|n| n.is_finite() && *n >= 0.0)
            .map_or(0, |n| n as u64)
    }
}

impl Ids for HostClock {
    fn next_id(&self, prefix: &str) -> String {
        format!("{prefix}-{}", self.new_id())
    }

    fn event_id(&self) -> String {
        self.new_id()
    }
}

/// A version 4 UUID (the form `crypto.randomUUID()` gives) from random bytes that are drawn
/// from `crypto.getRandomValues` a pool at a time: an id per snapshot line costs no call into JS.
fn random_uuid() -> Option<String> {
    let bytes = RANDOM_POOL.with(|pool| pool.borrow_mut().take16())?;
    Some(format_uuid_v4(bytes))
}

/// `xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx` from 16 random bytes.
fn format_uuid_v4(mut b: [u8; 16]) -> String {
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(36);
    for (i, byte) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push(HEX[usize::from(byte >> 4)] as char);
        out.push(HEX[usize::from(byte & 0x0f)] as char);
    }
    out
}

thread_local! {
    static RANDOM_POOL: RefCell<RandomPool> = RefCell::new(RandomPool::default());
}

#[derive(Default)]
struct RandomPool {
    bytes: Vec<u8>,
    used: usize,
}

impl RandomPool {
    fn take16(&mut self) -> Option<[u8; 16]> {
        if self.used + 16 > self.bytes.len() {
            self.bytes = draw_random(crate::core::limits::ID_RANDOM_POOL_BYTES)?;
            self.used = 0;
        }
        let mut out = [0u8; 16];
        out.copy_from_slice(&self.bytes[self.used..self.used + 16]);
        self.used += 16;
        Some(out)
    }
}

/// `len` bytes from `crypto.getRandomValues` (`None` where there is no Web Crypto).
fn draw_random(len: usize) -> Option<Vec<u8>> {
    let crypto = get(&js_sys::global(), "crypto");
    let fill = get_fn(&crypto, "getRandomValues")?;
    let array = js_sys::Uint8Array::new_with_length(len as u32);
    fill.call1(&crypto, &array).ok()?;
    Some(array.to_vec())
}

/// Faults to the host's `onError`, each turn's end to its observers (`onTurnEnd`, `onMetric`,
/// `tracer`: [`super::observe`]). Every hook is called and never awaited; one that throws or
/// returns a promise that rejects changes nothing the client gets (an observer's fault goes to
/// `onError`, `onError`'s own is dropped): reporting must never change or delay a response.
pub struct OnError {
    hook: Option<Function>,
    session_id: Option<String>,
    turn_id: Option<String>,
    observers: Observers,
}

/// The hooks that hear of each ended turn.
#[derive(Clone, Default)]
pub struct Observers {
    pub on_turn_end: Option<Function>,
    pub on_metric: Option<Function>,
    /// An OpenTelemetry `Tracer` (has `startSpan`).
    pub tracer: Option<JsValue>,
}

impl OnError {
    pub fn new(hook: Option<Function>, session_id: Option<&str>, turn_id: Option<&str>) -> Self {
        Self {
            hook,
            session_id: session_id.map(str::to_owned),
            turn_id: turn_id.map(str::to_owned),
            observers: Observers::default(),
        }
    }

    /// The same reporter, telling `observers` of each turn's end too.
    pub fn with_observers(mut self, observers: Observers) -> Self {
        self.observers = observers;
        self
    }

    /// `{ stage, sessionId?, turnId? }`, `onError`'s second argument.
    fn info(&self, stage: &str) -> Object {
        let info = Object::new();
        set(&info, "stage", stage);
        if let Some(id) = &self.session_id {
            set(&info, "sessionId", id.as_str());
        }
        if let Some(id) = &self.turn_id {
            set(&info, "turnId", id.as_str());
        }
        info
    }

    /// What a hook returned, left to settle on its own: a rejection goes to `onError` with
    /// `stage` (a thenable is never awaited, so one that never settles holds nothing up).
    pub fn settle_quietly(&self, returned: &JsValue, stage: Stage) {
        let Some(then) = get_fn(returned, "then") else {
            return;
        };
        let on_rejected: JsValue = match &self.hook {
            Some(hook) => REPORT_REJECTION.with(|report| {
                let report: &Function = report.as_ref().unchecked_ref();
                report
                    .bind2(&JsValue::UNDEFINED, hook, &self.info(stage.as_str()))
                    .into()
            }),
            None => IGNORE_REJECTION.with(|ignore| ignore.as_ref().clone()),
        };
        if let Err(thrown) = then.call2(returned, &JsValue::UNDEFINED, &on_rejected) {
            self.report(&Fault::new(stage, port_error(stage.as_str(), &thrown)));
        }
    }
}

impl FaultReport for OnError {
    fn report(&self, fault: &Fault) {
        let Some(hook) = &self.hook else {
            return;
        };
        let error = match fault
            .error
            .cause
            .as_ref()
            .and_then(|c| c.downcast_ref::<JsValue>())
        {
            Some(thrown) => thrown.clone(),
            None => js_sys::Error::new(&fault.error.message).into(),
        };
        let info = self.info(fault.stage.as_str());
        if let Ok(returned) = hook.call2(&JsValue::UNDEFINED, &error, &info) {
            ignore_rejection(&returned);
        }
    }

    fn turn_ended(&self, summary: &crate::turn::summary::TurnSummary) {
        super::observe::turn_ended(self, &self.observers, summary);
    }
}

/// A thenable's rejection caught and dropped, so it is no unhandled one (Node ends the process
/// on those).
fn ignore_rejection(returned: &JsValue) {
    if let Some(then) = get_fn(returned, "then") {
        IGNORE_REJECTION.with(|ignore| {
            let _ = then.call2(returned, &JsValue::UNDEFINED, ignore.as_ref());
        });
    }
}

thread_local! {
    /// One handler for every ignored rejection (a closure per call would leak or need freeing).
    static IGNORE_REJECTION: Closure<dyn FnMut(JsValue)> = Closure::new(|_: JsValue| {});
    /// `(onError, info, reason)`: an observer's rejection to `onError`, bound per call to its
    /// hook and info (a bound function is plain JS: nothing to free).
    static REPORT_REJECTION: Closure<dyn FnMut(JsValue, JsValue, JsValue)> =
        Closure::new(|hook: JsValue, info: JsValue, reason: JsValue| {
            if let Some(hook) = hook.dyn_ref::<Function>() {
                if let Ok(returned) = hook.call2(&JsValue::UNDEFINED, &reason, &info) {
                    ignore_rejection(&returned);
                }
            }
        });
}
