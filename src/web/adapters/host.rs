//! Shared helpers for calling host objects: reading a required method, and turning a thrown JS
//! value into a short, bounded description for a `PortError` (logs only, never a client).

use js_sys::{Function, Object};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortSignal;

use crate::core::limits::PORT_ERROR_DETAIL_CHARS_MAX;
use crate::ports::chat::Sleep;
use crate::ports::{CancelToken, LocalFuture, PortError};
use crate::web::js::{get_fn, set};

/// `obj[key]` when it is a function, else a readable reason naming `what.key`.
pub fn required_method(obj: &JsValue, what: &str, key: &str) -> Result<Function, String> {
    if !obj.is_object() && !obj.is_function() {
        return Err(format!("{what} must be an object"));
    }
    get_fn(obj, key).ok_or_else(|| format!("{what}.{key} must be a function"))
}

/// A host object with `load` and `save` methods (session storage, chat memory).
#[derive(Clone)]
pub struct LoadSave {
    pub host: JsValue,
    pub load: Function,
    pub save: Function,
}

impl LoadSave {
    /// Wraps `host` after checking that `load` and `save` are functions (`what` names it in
    /// the error).
    pub fn from_js(host: &JsValue, what: &str) -> Result<Self, String> {
        Ok(Self {
            load: required_method(host, what, "load")?,
            save: required_method(host, what, "save")?,
            host: host.clone(),
        })
    }

    /// `host.load` as it is now (what `memory.load(...)` in JS would call): a definition is
    /// kept across requests, and a host may replace a method on its object in place. The
    /// function checked at construction when the property no longer holds one.
    pub fn load_now(&self) -> Function {
        get_fn(&self.host, "load").unwrap_or_else(|| self.load.clone())
    }

    /// `host.save` as it is now (see [`Self::load_now`]).
    pub fn save_now(&self) -> Function {
        get_fn(&self.host, "save").unwrap_or_else(|| self.save.clone())
    }
}

/// An `AbortSignal` that aborts when `token` fires: how a Rust cancel token reaches a host
/// callback (every host method gets one, as Web APIs do).
/// One per token (`CancelToken::memo`): a turn hands its token to hundreds of calls.
pub fn signal_of(token: &CancelToken) -> AbortSignal {
    token.memo(|| match web_sys::AbortController::new() {
        Ok(controller) => {
            let signal = controller.signal();
            token.on_cancel(move || controller.abort());
            signal
        }
        // No AbortController in this runtime: a signal that never aborts.
        Err(_) => JsValue::UNDEFINED.unchecked_into(),
    })
}

/// The `{ signal }` options object host methods take (`{}` when there is no signal).
pub fn signal_options(signal: Option<&AbortSignal>) -> Object {
    let options = Object::new();
    if let Some(signal) = signal {
        set(&options, "signal", signal);
    }
    options
}

/// A `PortError` for a host call that threw or rejected: `"<what> failed: <reason>"`, keeping
/// the thrown value itself as the cause (the operator's `onError` gets it untouched).
pub fn port_error(what: &str, thrown: &JsValue) -> PortError {
    PortError::with_cause(
        format!("{what} failed: {}", describe(thrown)),
        std::rc::Rc::new(thrown.clone()),
    )
}

/// The message of a thrown `Error`, or the text of a thrown string, cut to a bounded length.
pub fn describe(thrown: &JsValue) -> String {
    let text = match thrown.dyn_ref::<js_sys::Error>() {
        Some(e) => String::from(e.message()),
        None => thrown
            .as_string()
            .unwrap_or_else(|| "a non-Error value was thrown".to_string()),
    };
    truncate_chars(&text, PORT_ERROR_DETAIL_CHARS_MAX)
}

/// The first `max` characters of `text` (whole characters, never a split code point).
pub fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// A `CancelToken` that fires when `signal` (an `AbortSignal`, or anything else: never) aborts.
/// Dropping it unhooks its listener: hosts hand one signal to many calls (a turn's signal goes to
/// every append of its session log), and each call's listener would otherwise stay on it.
pub fn token_of(signal: &JsValue) -> SignalToken {
    let token = CancelToken::new();
    let mut hook = None;
    if let Some(signal) = signal.dyn_ref::<AbortSignal>() {
        if signal.aborted() {
            token.cancel();
        } else {
            let fire = token.clone();
            let callback = Closure::<dyn FnMut()>::new(move || fire.cancel());
            crate::web::js::on_abort(signal, callback.as_ref().unchecked_ref());
            hook = Some((signal.clone(), callback));
        }
    }
    SignalToken { token, hook }
}

/// The token [`token_of`] returns; it derefs to the `CancelToken`.
pub struct SignalToken {
    token: CancelToken,
    hook: Option<(AbortSignal, Closure<dyn FnMut()>)>,
}

impl std::ops::Deref for SignalToken {
    type Target = CancelToken;

    fn deref(&self) -> &CancelToken {
        &self.token
    }
}

impl Drop for SignalToken {
    fn drop(&mut self) {
        let Some((signal, callback)) = self.hook.take() else {
            return;
        };
        if let Some(remove) = get_fn(&signal, "removeEventListener") {
            let _ = remove.call2(&signal, &crate::web::js::key("abort"), callback.as_ref());
        }
    }
}

/// Pauses through the host's own `setTimeout`.
pub struct HostSleep;

impl Sleep for HostSleep {
    fn sleep(&self, ms: u64) -> LocalFuture<'_, ()> {
        let ms = u32::try_from(ms).unwrap_or(crate::core::limits::TIMER_MS_MAX);
        Box::pin(async move {
            crate::web::js::sleep_ms(ms).await;
        })
    }
}
