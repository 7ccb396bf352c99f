//! Reading a handler's options object once, at construction: functions, positive integers and
//! timer durations. Each handler supplies how a bad option is reported (its own error code).

use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::core::limits;
use crate::web::js::get;

/// The options object of one handler and its error constructor.
pub struct OptionReader<'a> {
    pub options: &'a JsValue,
    /// Builds the Error thrown for a bad option, from a detail like `"x must be a function"`.
    pub invalid: &'a dyn Fn(&str) -> JsValue,
}

impl OptionReader<'_> {
    pub fn error(&self, detail: &str) -> JsValue {
        (self.invalid)(detail)
    }

    pub fn value(&self, key: &str) -> JsValue {
        get(self.options, key)
    }

    pub fn optional_fn(&self, key: &str) -> Result<Option<Function>, JsValue> {
        let value = get(self.options, key);
        if value.is_undefined() {
            return Ok(None);
        }
        value
            .dyn_into::<Function>()
            .map(Some)
            .map_err(|_| self.error(&format!("{key} must be a function")))
    }

    pub fn required_fn(&self, key: &str) -> Result<Function, JsValue> {
        self.optional_fn(key)?
            .ok_or_else(|| self.error(&format!("{key} is required")))
    }

    /// A positive safe integer option, `default` when absent.
    pub fn positive_int(&self, key: &str, default: u64) -> Result<u64, JsValue> {
        let value = get(self.options, key);
        if value.is_undefined() {
            return Ok(default);
        }
        value
            .as_f64()
            .filter(|n| n.fract() == 0.0 && *n >= 1.0 && *n <= limits::INTEGER_SAFE_MAX as f64)
            .map(|n| n as u64)
            .ok_or_else(|| self.error(&format!("{key} must be a positive safe integer")))
    }

    /// Like [`Self::positive_int`], but a duration for a host timer (at most `TIMER_MS_MAX`).
    pub fn positive_ms(&self, key: &str, default: u64) -> Result<u32, JsValue> {
        let ms = self.positive_int(key, default)?;
        u32::try_from(ms)
            .ok()
            .filter(|ms| *ms <= limits::TIMER_MS_MAX)
            .ok_or_else(|| {
                self.error(&format!(
                    "{key} must be at most {} ms",
                    limits::TIMER_MS_MAX
                ))
            })
    }
}
