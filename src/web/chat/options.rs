//! `createChatHandler(options)`: reading and validating the host's options once, at
//! construction. A bad option throws an Error with `code: "SERVER_INVALID_CONFIG"`.

use js_sys::Function;
use wasm_bindgen::prelude::*;

use crate::core::limits;
use crate::core::protocol::BoundaryError;

use super::js::{coded_error, get};

/// The validated options of one handler.
pub struct HandlerOptions {
    pub authenticate: Option<Function>,
    pub resolve_definition: Function,
    pub session_storage: Function,
    pub timeout_ms: u32,
    pub cleanup_timeout_ms: u32,
    pub body_bytes_max: u64,
    pub now: Option<Function>,
    pub create_id: Option<Function>,
    /// `sessionLog(context, sessionId, signal)` → the session's durable log, or nothing.
    pub session_log: Option<Function>,
    /// `onError(error, { stage, sessionId?, turnId? })`: every fault, for the operator.
    pub on_error: Option<Function>,
}

impl HandlerOptions {
    /// The lease covers the whole turn plus three cleanup budgets (settle, save, release).
    pub fn lease_ms(&self) -> u64 {
        limits::lease_ms(
            u64::from(self.timeout_ms),
            u64::from(self.cleanup_timeout_ms),
        )
    }

    pub fn turn_limits(&self) -> crate::turn::TurnLimits {
        crate::turn::TurnLimits {
            lease_ms: self.lease_ms(),
            cleanup_budget_ms: u64::from(self.cleanup_timeout_ms),
        }
    }

    pub fn from_js(options: &JsValue) -> Result<Self, JsValue> {
        if !options.is_object() {
            return Err(invalid("options must be an object"));
        }
        Ok(Self {
            authenticate: optional_fn(options, "authenticate")?,
            resolve_definition: required_fn(options, "resolveDefinition")?,
            session_storage: required_fn(options, "sessionStorage")?,
            timeout_ms: positive_ms(options, "timeoutMs", limits::TURN_TIMEOUT_MS_DEFAULT)?,
            cleanup_timeout_ms: positive_ms(
                options,
                "cleanupTimeoutMs",
                limits::CLEANUP_TIMEOUT_MS_DEFAULT,
            )?,
            body_bytes_max: positive_int(options, "maxBodyBytes", limits::BODY_BYTES_MAX_DEFAULT)?,
            now: optional_fn(options, "now")?,
            create_id: optional_fn(options, "createId")?,
            session_log: optional_fn(options, "sessionLog")?,
            on_error: optional_fn(options, "onError")?,
        })
    }
}

fn invalid(detail: &str) -> JsValue {
    let row = BoundaryError::InvalidConfig.row();
    coded_error(row.code, &format!("{} {detail}", row.message))
}

fn optional_fn(options: &JsValue, key: &str) -> Result<Option<Function>, JsValue> {
    let value = get(options, key);
    if value.is_undefined() {
        return Ok(None);
    }
    value
        .dyn_into::<Function>()
        .map(Some)
        .map_err(|_| invalid(&format!("{key} must be a function")))
}

fn required_fn(options: &JsValue, key: &str) -> Result<Function, JsValue> {
    optional_fn(options, key)?.ok_or_else(|| invalid(&format!("{key} is required")))
}

/// A positive safe integer option, `default` when absent.
fn positive_int(options: &JsValue, key: &str, default: u64) -> Result<u64, JsValue> {
    let value = get(options, key);
    if value.is_undefined() {
        return Ok(default);
    }
    value
        .as_f64()
        .filter(|n| n.fract() == 0.0 && *n >= 1.0 && *n <= limits::INTEGER_SAFE_MAX as f64)
        .map(|n| n as u64)
        .ok_or_else(|| invalid(&format!("{key} must be a positive safe integer")))
}

/// Like [`positive_int`], but a duration for a host timer (at most `TIMER_MS_MAX`).
fn positive_ms(options: &JsValue, key: &str, default: u64) -> Result<u32, JsValue> {
    let ms = positive_int(options, key, default)?;
    u32::try_from(ms)
        .ok()
        .filter(|ms| *ms <= limits::TIMER_MS_MAX)
        .ok_or_else(|| {
            invalid(&format!(
                "{key} must be at most {} ms",
                limits::TIMER_MS_MAX
            ))
        })
}
