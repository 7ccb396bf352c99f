//! TanStack AI's restore rules, exported to JS (every build with the protocol: the page's
//! `toTanStackConnection` performs them; a server can hydrate a first paint with the same):
//!
//! - `toTanStackHydration(snapshot)`: a projection snapshot (`createChatConnection`'s
//!   `snapshot()`, `resolveChatSnapshot`'s seed) as `hydrate`'s `{ messages, activeRun,
//!   interrupts }` (`core::agui::hydration`);
//! - `TanStackRunJoin`: `joinRun`'s chunks — the answer so far rebuilt, then the log's chunks
//!   fed to it until the run's end (`core::agui::RunJoin`).

use js_sys::Array;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::core::agui::{hydration, RunJoin};
use crate::core::projection::Projection;
use crate::web::convert::{from_json, js_error, to_json};
use crate::web::js::get;

/// The projection a snapshot describes: its messages, the run still going, its confirmations.
fn projection_of(snapshot: &JsValue) -> Result<Projection, JsValue> {
    let field = |name: &str| -> Result<Value, JsValue> {
        let value = get(snapshot, name);
        if value.is_undefined() || value.is_null() {
            return Ok(Value::Null);
        }
        to_json(&value).map_err(|m| js_error(&m))
    };
    let messages = field("messages")?;
    if !messages.is_array() {
        return Err(js_error("snapshot.messages must be an array of messages"));
    }
    let active = field("activeRunId")?;
    let projection = Projection::from_initial(&messages, active.as_str());
    Ok(match field("confirmations")? {
        Value::Null => projection,
        records => projection.with_confirmations(&records),
    })
}

/// `toTanStackHydration(snapshot)` → `{ messages, activeRun, interrupts }`.
#[wasm_bindgen(js_name = toTanStackHydration)]
pub fn to_tanstack_hydration(snapshot: JsValue) -> Result<JsValue, JsValue> {
    Ok(from_json(&hydration(&projection_of(&snapshot)?)))
}

/// `new TanStackRunJoin(snapshot, threadId, runId, nowMs)`: one `joinRun`.
#[wasm_bindgen(js_name = TanStackRunJoin)]
pub struct TanStackRunJoin {
    inner: RunJoin,
    start: Vec<Value>,
}

#[wasm_bindgen(js_class = TanStackRunJoin)]
impl TanStackRunJoin {
    #[wasm_bindgen(constructor)]
    pub fn new(
        snapshot: JsValue,
        thread_id: &str,
        run_id: &str,
        now_ms: f64,
    ) -> Result<TanStackRunJoin, JsValue> {
        let projection = projection_of(&snapshot)?;
        let (inner, start) = RunJoin::start(&projection, thread_id, run_id, now_ms as u64);
        Ok(TanStackRunJoin { inner, start })
    }

    /// The chunks that rebuild the answer so far (taken once).
    pub fn start(&mut self) -> Array {
        std::mem::take(&mut self.start)
            .iter()
            .map(from_json)
            .collect()
    }

    /// The log chunk to yield (`undefined` once the run ended).
    pub fn feed(&mut self, chunk: JsValue) -> Result<JsValue, JsValue> {
        let chunk = to_json(&chunk).map_err(|m| js_error(&m))?;
        Ok(self
            .inner
            .feed(&chunk)
            .map_or(JsValue::UNDEFINED, |c| from_json(&c)))
    }

    /// True once the run ended (or was not running when the join started).
    #[wasm_bindgen(getter)]
    pub fn ended(&self) -> bool {
        self.inner.is_ended()
    }
}
