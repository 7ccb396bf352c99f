//! Shared helpers for calling host objects: reading a required method, and turning a thrown JS
//! value into a short, bounded description for a `PortError` (logs only, never a client).

use js_sys::{Function, Object};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortSignal;

use crate::core::limits::PORT_ERROR_DETAIL_CHARS_MAX;
use crate::ports::PortError;
use crate::web::js::{get_fn, set};

/// `obj[key]` when it is a function, else a readable reason naming `what.key`.
pub fn required_method(obj: &JsValue, what: &str, key: &str) -> Result<Function, String> {
    if !obj.is_object() && !obj.is_function() {
        return Err(format!("{what} must be an object"));
    }
    get_fn(obj, key).ok_or_else(|| format!("{what}.{key} must be a function"))
}

/// A host object with `load` and `save` methods (session storage, chat memory), and the
/// signal handed to each of its calls. One definition or handler serves many turns, so the
/// signal is swapped per turn with [`LoadSave::with_signal`].
#[derive(Clone)]
pub struct LoadSave {
    pub host: JsValue,
    pub load: Function,
    pub save: Function,
    pub signal: Option<AbortSignal>,
}

impl LoadSave {
    /// Wraps `host` after checking that `load` and `save` are functions (`what` names it in
    /// the error).
    pub fn from_js(
        host: &JsValue,
        what: &str,
        signal: Option<AbortSignal>,
    ) -> Result<Self, String> {
        Ok(Self {
            load: required_method(host, what, "load")?,
            save: required_method(host, what, "save")?,
            host: host.clone(),
            signal,
        })
    }

    pub fn with_signal(&self, signal: Option<AbortSignal>) -> Self {
        Self {
            signal,
            ..self.clone()
        }
    }
}

/// The `{ signal }` options object host methods take (`{}` when there is no signal).
pub fn signal_options(signal: Option<&AbortSignal>) -> Object {
    let options = Object::new();
    if let Some(signal) = signal {
        set(&options, "signal", signal);
    }
    options
}

/// A `PortError` for a host call that threw or rejected: `"<what> failed: <reason>"`.
pub fn port_error(what: &str, thrown: &JsValue) -> PortError {
    PortError::new(format!("{what} failed: {}", describe(thrown)))
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
