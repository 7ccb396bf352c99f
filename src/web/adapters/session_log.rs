//! Session logs seen from JavaScript, both ways:
//! - [`JsSessionLog`]: the `SessionLog` port over a host object (Redis, Postgres, a test double,
//!   or one of turnkeep's own log classes) with the shape
//!   `append(chunks: string[], { producer?: { id, epoch, seq }, signal }) → { offset, duplicate? }`
//!   and `read({ offset?: string | 'now', waitMs?, signal }) → { chunks, offset, upToDate }`.
//!   A failed append throws an error whose `kind` is `stale-epoch` (with `currentEpoch`),
//!   `sequence-gap` (`expectedSeq`, `receivedSeq`), `stream-closed` or `retryable`; any other
//!   throw counts as retryable.
//! - [`log_methods`]: the same interface on top of any Rust `SessionLog`, for the wasm classes
//!   `MemorySessionLog` (`createMemorySessionLog()`, **not durable**), `StoreSessionLog` (over a
//!   host item store, `createStoreSessionLog({ store })`) and `DurableStreamsLog` (HTTP).

use std::rc::Rc;

use js_sys::{Array, Object, Promise};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::future_to_promise;

use super::host::{port_error, required_method, signal_of, token_of};
use super::log_store::JsLogStore;
use crate::ports::log::{AppendAck, LogError, LogRead, ProducerStamp, ReadFrom, SessionLog};
use crate::ports::{CancelToken, LocalFuture, PortError};
use crate::storage::{LogStore, MemoryLogStore, StoreLog};
use crate::web::convert::{from_json, js_error, to_json};
use crate::web::js::{get, resolve, set};

/// A host object implementing the session-log interface.
pub struct JsSessionLog {
    host: JsValue,
    append: js_sys::Function,
    read: js_sys::Function,
}

impl JsSessionLog {
    pub fn from_js(host: &JsValue) -> Result<Self, String> {
        Ok(Self {
            append: required_method(host, "sessionLog", "append")?,
            read: required_method(host, "sessionLog", "read")?,
            host: host.clone(),
        })
    }
}

impl SessionLog for JsSessionLog {
    fn append<'a>(
        &'a self,
        chunks: &'a [String],
        producer: Option<&'a ProducerStamp>,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<AppendAck, LogError>> {
        Box::pin(async move {
            let list: Array = chunks.iter().map(|c| JsValue::from_str(c)).collect();
            let options = Object::new();
            if let Some(p) = producer {
                let stamp = Object::new();
                set(&stamp, "id", p.id.as_str());
                set(&stamp, "epoch", p.epoch as f64);
                set(&stamp, "seq", p.seq as f64);
                set(&options, "producer", stamp);
            }
            set(&options, "signal", signal_of(cancel));
            let answer = resolve(self.append.call2(&self.host, &list, &options))
                .await
                .map_err(|e| log_error_from_js(&e))?;
            let offset = get(&answer, "offset").as_string().ok_or_else(|| {
                LogError::Failed(PortError::new(
                    "sessionLog.append must resolve to { offset }",
                ))
            })?;
            Ok(AppendAck {
                offset,
                duplicate: get(&answer, "duplicate").is_truthy(),
                // A host's log speaks the protocol as written: one seq per append.
                item_seqs: false,
            })
        })
    }

    fn read<'a>(
        &'a self,
        from: ReadFrom<'a>,
        wait_ms: u64,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<LogRead, LogError>> {
        Box::pin(async move {
            let options = Object::new();
            match from {
                ReadFrom::Start => {}
                ReadFrom::Now => set(&options, "offset", "now"),
                ReadFrom::After(offset) => set(&options, "offset", offset),
            }
            set(&options, "waitMs", wait_ms as f64);
            set(&options, "signal", signal_of(cancel));
            let answer = resolve(self.read.call1(&self.host, &options))
                .await
                .map_err(|e| log_error_from_js(&e))?;
            read_from_js(&answer).map_err(|m| LogError::Failed(PortError::new(m)))
        })
    }
}

/// `{ chunks, offset, upToDate }` as a `LogRead`; chunks may be JSON text or values.
fn read_from_js(answer: &JsValue) -> Result<LogRead, String> {
    let list = get(answer, "chunks")
        .dyn_into::<Array>()
        .map_err(|_| "sessionLog.read must resolve to { chunks: [], offset }".to_string())?;
    let mut chunks = Vec::with_capacity(list.length() as usize);
    for item in list.iter() {
        let chunk = match item.as_string() {
            Some(text) => serde_json::from_str::<Value>(&text)
                .map_err(|_| "sessionLog.read returned a chunk that is not JSON".to_string())?,
            None => to_json(&item)?,
        };
        chunks.push(chunk);
    }
    Ok(LogRead {
        chunks,
        offset: get(answer, "offset").as_string(),
        up_to_date: get(answer, "upToDate").is_truthy(),
    })
}

/// A thrown value as a `LogError`, by its `kind`.
fn log_error_from_js(thrown: &JsValue) -> LogError {
    let number = |key: &str| {
        get(thrown, key)
            .as_f64()
            .filter(|n| *n >= 0.0)
            .map(|n| n as u64)
    };
    match get(thrown, "kind").as_string().as_deref() {
        Some("stale-epoch") => LogError::StaleEpoch {
            current_epoch: number("currentEpoch").unwrap_or(0),
        },
        Some("sequence-gap") => LogError::SequenceGap {
            expected: number("expectedSeq").unwrap_or(0),
            received: number("receivedSeq").unwrap_or(0),
        },
        Some("stream-closed") => LogError::StreamClosed,
        Some("failed") => LogError::Failed(port_error("sessionLog", thrown)),
        _ => LogError::Retryable(port_error("sessionLog", thrown)),
    }
}

/// A `LogError` as the error a JS caller catches: `ChatProducerError` with `kind` and the
/// numbers that go with it.
pub fn log_error_to_js(error: &LogError) -> JsValue {
    let e = js_sys::Error::new(&format!("session log: {error}"));
    e.set_name("ChatProducerError");
    set(&e, "kind", error.kind());
    match error {
        LogError::StaleEpoch { current_epoch } => set(&e, "currentEpoch", *current_epoch as f64),
        LogError::SequenceGap { expected, received } => {
            set(&e, "expectedSeq", *expected as f64);
            set(&e, "receivedSeq", *received as f64);
        }
        LogError::Retryable(p) | LogError::Failed(p) => {
            if let Some(cause) = p.cause.as_ref().and_then(|c| c.downcast_ref::<JsValue>()) {
                set(&e, "cause", cause.clone());
            }
        }
        LogError::StreamClosed => {}
    }
    e.into()
}

/// The host-log interface (`append`, `read`) over a Rust log: what the wasm log classes expose.
pub fn log_methods_append(log: Rc<dyn SessionLog>, chunks: JsValue, options: JsValue) -> Promise {
    future_to_promise(async move {
        let chunks = chunk_texts(&chunks).map_err(|m| js_error(&format!("append: {m}")))?;
        let producer = producer_from_js(&get(&options, "producer"))
            .map_err(|m| js_error(&format!("append: {m}")))?;
        let cancel = token_of(&get(&options, "signal"));
        let ack = log
            .append(&chunks, producer.as_ref(), &cancel)
            .await
            .map_err(|e| log_error_to_js(&e))?;
        let out = Object::new();
        set(&out, "offset", ack.offset.as_str());
        set(&out, "duplicate", ack.duplicate);
        Ok(out.into())
    })
}

pub fn log_methods_read(log: Rc<dyn SessionLog>, options: JsValue) -> Promise {
    future_to_promise(async move {
        let offset = get(&options, "offset").as_string();
        let from = match offset.as_deref() {
            None | Some("-1") => ReadFrom::Start,
            Some("now") => ReadFrom::Now,
            Some(o) => ReadFrom::After(o),
        };
        let wait_ms = get(&options, "waitMs")
            .as_f64()
            .filter(|n| *n > 0.0)
            .map_or(0, |n| n as u64);
        let cancel = token_of(&get(&options, "signal"));
        let read = log
            .read(from, wait_ms, &cancel)
            .await
            .map_err(|e| log_error_to_js(&e))?;
        Ok(read_to_js(&read))
    })
}

pub fn read_to_js(read: &LogRead) -> JsValue {
    let out = Object::new();
    let chunks: Array = read.chunks.iter().map(from_json).collect();
    set(&out, "chunks", chunks);
    set(
        &out,
        "offset",
        read.offset
            .as_deref()
            .map_or(JsValue::NULL, JsValue::from_str),
    );
    set(&out, "upToDate", read.up_to_date);
    out.into()
}

/// Chunks given as JSON texts or as values, each as its JSON text.
fn chunk_texts(chunks: &JsValue) -> Result<Vec<String>, String> {
    let list = chunks.dyn_ref::<Array>().ok_or("chunks must be an array")?;
    list.iter()
        .map(|item| match item.as_string() {
            Some(text) => serde_json::from_str::<Value>(&text)
                .map(|_| text)
                .map_err(|_| "a chunk given as text must be JSON".to_string()),
            None => to_json(&item).map(|v| v.to_string()),
        })
        .collect()
}

fn producer_from_js(value: &JsValue) -> Result<Option<ProducerStamp>, String> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    let id = get(value, "id")
        .as_string()
        .filter(|s| !s.is_empty())
        .ok_or("producer.id must be a non-empty string")?;
    let number = |key: &str| {
        get(value, key)
            .as_f64()
            .filter(|n| {
                n.fract() == 0.0 && *n >= 0.0 && *n <= crate::core::limits::INTEGER_SAFE_MAX as f64
            })
            .map(|n| n as u64)
            .ok_or(format!(
                "producer.{key} must be a non-negative safe integer"
            ))
    };
    Ok(Some(ProducerStamp {
        id,
        epoch: number("epoch")?,
        seq: number("seq")?,
        // The JS interface keeps the protocol's reading: one seq per append.
        item_seqs: false,
    }))
}

/// `createMemorySessionLog()`: an in-memory session log (**not durable**; tests and demos).
#[wasm_bindgen(js_name = MemorySessionLog)]
pub struct MemorySessionLogHandle {
    log: Rc<StoreLog<Box<dyn LogStore>>>,
}

#[wasm_bindgen(js_name = createMemorySessionLog)]
pub fn create_memory_session_log() -> MemorySessionLogHandle {
    MemorySessionLogHandle {
        log: Rc::new(StoreLog::new(
            Box::new(MemoryLogStore::new()),
            Rc::new(super::host::HostSleep),
        )),
    }
}

#[wasm_bindgen(js_class = MemorySessionLog)]
impl MemorySessionLogHandle {
    pub fn append(&self, chunks: JsValue, options: JsValue) -> Promise {
        log_methods_append(self.log.clone(), chunks, options)
    }

    pub fn read(&self, options: JsValue) -> Promise {
        log_methods_read(self.log.clone(), options)
    }
}

/// `createStoreSessionLog({ store })`: a session log over a host item store (Redis, Postgres...)
/// with `head()`, `commit(expectedVersion, items, head)` and `items(from, limit)`; every append is
/// decided in Rust with the same producer fencing as the other logs.
#[wasm_bindgen(js_name = StoreSessionLog)]
pub struct StoreSessionLogHandle {
    log: Rc<StoreLog<Box<dyn LogStore>>>,
}

#[wasm_bindgen(js_name = createStoreSessionLog)]
pub fn create_store_session_log(options: JsValue) -> Result<StoreSessionLogHandle, JsValue> {
    let store = JsLogStore::from_js(&get(&options, "store"))
        .map_err(|m| js_error(&format!("createStoreSessionLog: {m}")))?;
    Ok(StoreSessionLogHandle {
        log: Rc::new(StoreLog::new(
            Box::new(store),
            Rc::new(super::host::HostSleep),
        )),
    })
}

#[wasm_bindgen(js_class = StoreSessionLog)]
impl StoreSessionLogHandle {
    pub fn append(&self, chunks: JsValue, options: JsValue) -> Promise {
        log_methods_append(self.log.clone(), chunks, options)
    }

    pub fn read(&self, options: JsValue) -> Promise {
        log_methods_read(self.log.clone(), options)
    }
}
