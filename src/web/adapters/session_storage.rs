//! `JsSessionStorage`: the `SessionStorage` port over a host object
//! `{ load(sessionId, signal?), save(snapshot, expectedCursor, signal?) }` (Redis, Postgres,
//! KV, the in-memory store...). Both methods may return a value or a Promise.
//!
//! - `load` yields the stored snapshot as an object or as JSON text; `null`/`undefined` means
//!   absent. Text is passed on untouched so the core's session decoder reports bad JSON itself.
//! - `save` receives the snapshot as a plain object and `expectedCursor` as a number, or
//!   `undefined` for "create only if absent"; it must yield a boolean. Anything else is a
//!   `PortError`: a store that answers `undefined` would silently turn every CAS into a
//!   "conflict" or a "win", and neither is safe to guess.

use serde_json::Value;
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

use super::host::{port_error, LoadSave};
use crate::ports::session::SessionStorage;
use crate::ports::{LocalFuture, PortError};
use crate::web::convert::from_json;
use crate::web::js::resolve;
use crate::web::session::stored_value;

/// A host object implementing session storage, plus the signal handed to each of its calls.
pub struct JsSessionStorage {
    inner: LoadSave,
}

impl JsSessionStorage {
    /// Wraps `host` after checking that `load` and `save` are functions. `signal` (the turn's
    /// deadline) is passed as the last argument of every call so the store can give up early.
    pub fn from_js(host: &JsValue, signal: Option<AbortSignal>) -> Result<Self, String> {
        LoadSave::from_js(host, "sessionStorage", signal).map(|inner| Self { inner })
    }

    /// The same store with another signal (one handler serves many turns).
    pub fn with_signal(&self, signal: Option<AbortSignal>) -> Self {
        Self {
            inner: self.inner.with_signal(signal),
        }
    }

    fn signal_value(&self) -> JsValue {
        self.inner
            .signal
            .as_ref()
            .map_or(JsValue::UNDEFINED, JsValue::from)
    }
}

impl SessionStorage for JsSessionStorage {
    fn load<'a>(
        &'a self,
        session_id: &'a str,
    ) -> LocalFuture<'a, Result<Option<Value>, PortError>> {
        Box::pin(async move {
            let args = js_sys::Array::of2(&JsValue::from_str(session_id), &self.signal_value());
            let value = resolve(self.inner.load.apply(&self.inner.host, &args))
                .await
                .map_err(|e| port_error("sessionStorage.load", &e))?;
            if value.is_null() || value.is_undefined() {
                return Ok(None);
            }
            stored_value(&value).map(Some).map_err(|m| {
                PortError::new(format!(
                    "sessionStorage.load returned a value with no JSON form: {m}"
                ))
            })
        })
    }

    fn save<'a>(
        &'a self,
        snapshot: &'a Value,
        expected_cursor: Option<u64>,
    ) -> LocalFuture<'a, Result<bool, PortError>> {
        Box::pin(async move {
            // Cursors are safe integers (checked by the envelope decoder), so f64 holds them exactly.
            let cursor =
                expected_cursor.map_or(JsValue::UNDEFINED, |c| JsValue::from_f64(c as f64));
            let args = js_sys::Array::of3(&from_json(snapshot), &cursor, &self.signal_value());
            let result = resolve(self.inner.save.apply(&self.inner.host, &args))
                .await
                .map_err(|e| port_error("sessionStorage.save", &e))?;
            result.as_bool().ok_or_else(|| {
                PortError::new(
                    "sessionStorage.save must resolve to true (written) or false (conflict)",
                )
            })
        })
    }
}
