//! `JsLogStore`: the item store of a store-backed session log (`crate::storage::log::LogStore`)
//! over a host object — the piece a Redis or Postgres adapter implements:
//! - `head({ signal })` → the head's JSON text, or `null` for a log never written;
//! - `commit(expectedVersion, items, head, { signal })` → `true` when it stored `items` (JSON
//!   texts) after the existing ones and `head` (JSON text) atomically, because the stored head's
//!   `version` was `expectedVersion` (`null`: no head yet); `false`, changing nothing, otherwise;
//! - `items(from, limit, { signal })` → up to `limit` item texts from position `from`.
//! The store never interprets heads or items: fencing is decided in Rust.

use js_sys::Array;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::host::{port_error, required_method, signal_of, signal_options};
use crate::core::streams::item_log::LogHead;
use crate::ports::{CancelToken, LocalFuture, PortError};
use crate::storage::LogStore;
use crate::web::js::resolve;

pub struct JsLogStore {
    host: JsValue,
    head: js_sys::Function,
    commit: js_sys::Function,
    items: js_sys::Function,
}

impl JsLogStore {
    pub fn from_js(host: &JsValue) -> Result<Self, String> {
        Ok(Self {
            head: required_method(host, "store", "head")?,
            commit: required_method(host, "store", "commit")?,
            items: required_method(host, "store", "items")?,
            host: host.clone(),
        })
    }
}

impl LogStore for JsLogStore {
    fn head<'a>(
        &'a self,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Option<LogHead>, PortError>> {
        Box::pin(async move {
            let options = signal_options(Some(&signal_of(cancel)));
            let value = resolve(self.head.call1(&self.host, &options))
                .await
                .map_err(|e| port_error("store.head", &e))?;
            if value.is_null() || value.is_undefined() {
                return Ok(None);
            }
            let text = value
                .as_string()
                .ok_or_else(|| PortError::new("store.head must resolve to JSON text or null"))?;
            serde_json::from_str::<Value>(&text)
                .ok()
                .as_ref()
                .and_then(LogHead::from_json)
                .map(Some)
                .ok_or_else(|| PortError::new("store.head returned a head this log did not write"))
        })
    }

    fn commit<'a>(
        &'a self,
        expected_version: Option<u64>,
        items: &'a [String],
        next: &'a LogHead,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<bool, PortError>> {
        Box::pin(async move {
            let expected = expected_version.map_or(JsValue::NULL, |v| JsValue::from_f64(v as f64));
            let list: Array = items.iter().map(|i| JsValue::from_str(i)).collect();
            let args = Array::of4(
                &expected,
                &list,
                &JsValue::from_str(&next.to_json()),
                &signal_options(Some(&signal_of(cancel))),
            );
            let value = resolve(self.commit.apply(&self.host, &args))
                .await
                .map_err(|e| port_error("store.commit", &e))?;
            value
                .as_bool()
                .ok_or_else(|| PortError::new("store.commit must resolve to true or false"))
        })
    }

    fn items<'a>(
        &'a self,
        from: u64,
        limit: usize,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Vec<String>, PortError>> {
        Box::pin(async move {
            let (from, limit) = (
                JsValue::from_f64(from as f64),
                JsValue::from_f64(limit as f64),
            );
            let options = signal_options(Some(&signal_of(cancel)));
            let value = resolve(self.items.call3(&self.host, &from, &limit, &options))
                .await
                .map_err(|e| port_error("store.items", &e))?;
            let list = value
                .dyn_into::<Array>()
                .map_err(|_| PortError::new("store.items must resolve to an array of strings"))?;
            list.iter()
                .map(|v| {
                    v.as_string()
                        .ok_or_else(|| PortError::new("store.items must resolve to strings"))
                })
                .collect()
        })
    }
}
