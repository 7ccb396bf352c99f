//! `createMemorySessionStorage()`: the Rust `MemorySessionStorage` behind the same shape a JS
//! host adapter has (`load` and `save` returning Promises), so demos and tests can pass it
//! wherever a `SessionStorage` object is expected. **Not durable.**

use std::rc::Rc;

use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::convert::{from_json, js_error};
use super::session::stored_value;
use crate::core::checks::safe_uint;
use crate::ports::session::SessionStorage;
use crate::ports::CancelToken;
use crate::storage::MemorySessionStorage;

/// An in-memory session store (compare-and-set on `cursor`). Lost with the wasm instance.
#[wasm_bindgen(js_name = MemorySessionStorage)]
pub struct MemorySessionStorageHandle {
    inner: Rc<MemorySessionStorage>,
}

/// `createMemorySessionStorage()`: a fresh, empty in-memory store.
#[wasm_bindgen(js_name = createMemorySessionStorage)]
pub fn create_memory_session_storage() -> MemorySessionStorageHandle {
    MemorySessionStorageHandle {
        inner: Rc::new(MemorySessionStorage::new()),
    }
}

#[wasm_bindgen(js_class = MemorySessionStorage)]
impl MemorySessionStorageHandle {
    /// `load(sessionId)` -> Promise of the stored snapshot, or `undefined` when absent.
    pub fn load(&self, session_id: JsValue) -> js_sys::Promise {
        let inner = Rc::clone(&self.inner);
        future_to_promise(async move {
            let id = session_id
                .as_string()
                .ok_or_else(|| js_error("MemorySessionStorage.load: sessionId must be a string"))?;
            match inner.load(&id, &CancelToken::new()).await {
                Ok(Some(value)) => Ok(from_json(&value)),
                Ok(None) => Ok(JsValue::UNDEFINED),
                Err(e) => Err(js_error(&format!("MemorySessionStorage.load: {e}"))),
            }
        })
    }

    /// `save(snapshot, expectedCursor)` -> Promise of `true` when written, `false` on a CAS
    /// conflict. `expectedCursor` `undefined`/`null` means "create only if absent". Rejects for
    /// a snapshot without a valid `sessionId` and `cursor`.
    pub fn save(&self, snapshot: JsValue, expected_cursor: JsValue) -> js_sys::Promise {
        let inner = Rc::clone(&self.inner);
        future_to_promise(async move {
            let fail = |m: String| js_error(&format!("MemorySessionStorage.save: {m}"));
            let snapshot: Value = stored_value(&snapshot).map_err(fail)?;
            let expected = read_cursor(&expected_cursor).map_err(fail)?;
            match inner.save(&snapshot, expected, &CancelToken::new()).await {
                Ok(written) => Ok(JsValue::from_bool(written)),
                Err(e) => Err(fail(e.to_string())),
            }
        })
    }

    /// `delete(sessionId)` -> Promise of `true` if a record existed.
    pub fn delete(&self, session_id: JsValue) -> js_sys::Promise {
        let inner = Rc::clone(&self.inner);
        future_to_promise(async move {
            let id = session_id.as_string().ok_or_else(|| {
                js_error("MemorySessionStorage.delete: sessionId must be a string")
            })?;
            Ok(JsValue::from_bool(inner.delete(&id)))
        })
    }
}

fn read_cursor(value: &JsValue) -> Result<Option<u64>, String> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    value
        .as_f64()
        .and_then(|n| safe_uint(&json!(n)))
        .map(Some)
        .ok_or_else(|| {
            "expectedCursor must be undefined or a non-negative safe integer".to_string()
        })
}
