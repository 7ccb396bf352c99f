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

use super::host::{port_error, signal_of, LoadSave};
use crate::ports::session::SessionStorage;
use crate::ports::{CancelToken, LocalFuture, PortError};
use crate::web::convert::from_json;
use crate::web::js::resolve;
use crate::web::session::stored_value;

/// A host object implementing session storage. Each call gets an `AbortSignal` (the last
/// argument) that aborts when the caller's cancel token fires, so the store can give up early.
pub struct JsSessionStorage {
    inner: LoadSave,
}

impl JsSessionStorage {
    /// Wraps `host` after checking that `load` and `save` are functions.
    pub fn from_js(host: &JsValue) -> Result<Self, String> {
        LoadSave::from_js(host, "sessionStorage").map(|inner| Self { inner })
    }
}

impl SessionStorage for JsSessionStorage {
    fn load<'a>(
        &'a self,
        session_id: &'a str,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Option<Value>, PortError>> {
        Box::pin(async move {
            let id = JsValue::from_str(session_id);
            let load = self.inner.load_now();
            let value = resolve(load.call2(&self.inner.host, &id, &signal_of(cancel)))
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
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<bool, PortError>> {
        Box::pin(async move {
            // Cursors are safe integers (checked by the envelope decoder), so f64 holds them exactly.
            let cursor =
                expected_cursor.map_or(JsValue::UNDEFINED, |c| JsValue::from_f64(c as f64));
            let save = self.inner.save_now();
            let signal = signal_of(cancel);
            let result =
                resolve(save.call3(&self.inner.host, &from_json(snapshot), &cursor, &signal))
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
