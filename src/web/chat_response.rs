//! `toChatResponse(options)` → `Promise<Response>`: the session response of a host that runs its
//! own model stream (README.md, "Your own model stream: `toChatResponse`": `authorize`, and
//! fencing a reclaimed executor with a producer). Every decision is Rust's: the options are read here, what is written is
//! `core::projection::native`, how it is sent is `turn::external` over the one log sender.
//!
//! 1. options (a bad one rejects with `code: 'SERVER_INVALID_CONFIG'`);
//! 2. `authorize(request, sessionId)`: no → 403 `SESSION_FORBIDDEN`, a throw → 500
//!    `SERVER_INTERNAL` (cause to `onError`); the log is not touched either way;
//! 3. `newMessages` read (bad → 400 `REQUEST_INVALID_MESSAGES`, the field path to `onError`);
//! 4. echoes and the native batch, acknowledged (a refusal rejects with `ChatProducerError`);
//! 5. the source's chunks: `mode: 'await'` waits and answers 200 (a refusal rejects as above, a
//!    source failure rejects with what the source threw); `'immediate'` (default) answers 202 at
//!    once, hands the rest to `waitUntil` and reports failures to `onError`.

use std::rc::Rc;

use js_sys::{Function, Object, Promise};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::future_to_promise;
use web_sys::{Headers, Response, ResponseInit};

use super::adapters::host::{port_error, HostSleep};
use super::adapters::http_log::HttpLog;
use super::adapters::session_log::log_error_to_js;
use super::adapters::JsSessionLog;
use super::convert::to_json;
use super::js::{call, coded_error, get, get_fn, resolve, set};
use crate::core::checks::is_safe_id;
use crate::core::limits::INTEGER_SAFE_MAX;
use crate::core::projection::native::{read_new_messages, NewMessage};
use crate::core::protocol::BoundaryError;
use crate::ports::log::SessionLog;
use crate::ports::{CancelToken, LocalFuture, PortError};
use crate::turn::external::{ChunkSource, ResponseError, ResponseWriter};
use crate::turn::send::Producer;

/// `toChatResponse(options)`.
#[wasm_bindgen(js_name = toChatResponse)]
pub fn to_chat_response(options: JsValue) -> Promise {
    future_to_promise(async move {
        let options = ResponseOptions::from_js(&options).map_err(|m| {
            coded_error(
                BoundaryError::InvalidConfig.code(),
                &format!("toChatResponse: {m}"),
            )
        })?;
        respond(options).await
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Immediate,
    Await,
}

struct ResponseOptions {
    log: Rc<dyn SessionLog>,
    /// `None`: the caller passed `authorize: false` (it authorized by other means).
    authorize: Option<Function>,
    request: JsValue,
    session_id: Option<String>,
    new_messages: Vec<Value>,
    source: JsValue,
    mode: Mode,
    producer: Option<Producer>,
    wait_until: Option<Function>,
    on_error: Option<Function>,
}

impl ResponseOptions {
    fn from_js(options: &JsValue) -> Result<Self, String> {
        if !options.is_object() {
            return Err("options must be an object".into());
        }
        let target = get(options, "target");
        let log: Rc<dyn SessionLog> = if get_fn(&target, "read").is_some() {
            Rc::new(JsSessionLog::from_js(&target)?)
        } else if target.is_object() {
            Rc::new(HttpLog::from_js(&target).map_err(|m| format!("target: {m}"))?)
        } else {
            return Err("target must be a session log or { url, headers?, fetch? }".into());
        };
        let authorize = match get(options, "authorize") {
            a if a == JsValue::FALSE => None,
            a => Some(a.dyn_into::<Function>().map_err(|_| {
                "authorize is required: (request, sessionId) => boolean, or false where the \
                 caller authorized by other means (a background executor)"
                    .to_string()
            })?),
        };
        let request = get(options, "request");
        if authorize.is_some() && request.is_undefined() {
            return Err("request is required with authorize (it is what authorize checks)".into());
        }
        let session_id = match get(options, "sessionId") {
            v if v.is_undefined() => None,
            v => Some(
                v.as_string()
                    .filter(|id| is_safe_id(id))
                    .ok_or("sessionId must be a SafeId")?,
            ),
        };
        // authorize(request, sessionId) answers for one session: without it, it would be asked
        // about none (`authorize(request, undefined)`), and a hook that only checks what it is
        // given would let the write through.
        if authorize.is_some() && session_id.is_none() {
            return Err(
                "sessionId is required with authorize (authorize(request, sessionId) checks it)"
                    .into(),
            );
        }
        let new_messages = match get(options, "newMessages") {
            v if v.is_undefined() => Vec::new(),
            v => match to_json(&v) {
                Ok(Value::Array(items)) => items,
                _ => return Err("newMessages must be an array of messages".into()),
            },
        };
        let source = get(options, "source");
        if !source.is_undefined() && iterator_of(&source).is_none() {
            return Err("source must be an async iterable of chunks".into());
        }
        let mode = match get(options, "mode").as_string().as_deref() {
            None if get(options, "mode").is_undefined() => Mode::Immediate,
            Some("immediate") => Mode::Immediate,
            Some("await") => Mode::Await,
            _ => return Err("mode must be 'immediate' or 'await'".into()),
        };
        Ok(Self {
            log,
            authorize,
            request,
            session_id,
            new_messages,
            source,
            mode,
            producer: producer_of(&get(options, "producer"))?,
            wait_until: optional_fn(options, "waitUntil")?,
            on_error: optional_fn(options, "onError")?,
        })
    }
}

fn optional_fn(options: &JsValue, key: &str) -> Result<Option<Function>, String> {
    match get(options, key) {
        v if v.is_undefined() => Ok(None),
        v => v
            .dyn_into::<Function>()
            .map(Some)
            .map_err(|_| format!("{key} must be a function")),
    }
}

/// `{ id, epoch }`: the caller owns the epoch (a claim counter); seqs are ours.
fn producer_of(value: &JsValue) -> Result<Option<Producer>, String> {
    if value.is_undefined() {
        return Ok(None);
    }
    let id = get(value, "id")
        .as_string()
        .filter(|s| !s.is_empty())
        .ok_or("producer.id must be a non-empty string")?;
    let epoch = get(value, "epoch")
        .as_f64()
        .filter(|n| n.fract() == 0.0 && *n >= 0.0 && *n <= INTEGER_SAFE_MAX as f64)
        .ok_or("producer.epoch must be a non-negative safe integer")?;
    Ok(Some(Producer {
        id,
        epoch: epoch as u64,
    }))
}

async fn respond(options: ResponseOptions) -> Result<JsValue, JsValue> {
    let report = Reporter {
        hook: options.on_error.clone(),
        session_id: options.session_id.clone(),
    };
    if let Some(authorize) = &options.authorize {
        let session_id = options
            .session_id
            .as_deref()
            .map_or(JsValue::UNDEFINED, JsValue::from_str);
        match call(authorize, &[&options.request, &session_id]).await {
            Ok(allowed) if allowed.is_truthy() => {}
            Ok(_) => return Ok(diagnostic(BoundaryError::Forbidden)?.into()),
            Err(thrown) => {
                report.report("authorize", &thrown);
                return Ok(diagnostic(BoundaryError::Internal)?.into());
            }
        }
    }
    let now_ms = js_sys::Date::now() as u64;
    let new = match read_new_messages(&options.new_messages, &mut fresh_id) {
        Ok(new) => new,
        Err(field) => {
            report.report("newMessages", &js_sys::Error::new(&field.message()).into());
            return Ok(diagnostic(BoundaryError::InvalidMessages)?.into());
        }
    };
    let writer = ResponseWriter::new(
        options.log.clone(),
        Rc::new(HostSleep),
        options.producer.clone(),
    );
    let first_seq = opened(&writer, &new, now_ms).await?;
    let source = JsChunkSource::from_js(&options.source);
    match options.mode {
        Mode::Await => {
            writer
                .pipe(&source, first_seq)
                .await
                .map_err(|e| error_to_js(&e))?;
            Ok(empty_response(200)?.into())
        }
        Mode::Immediate => {
            let running = future_to_promise(async move {
                if let Err(error) = writer.pipe(&source, first_seq).await {
                    let stage = match error {
                        ResponseError::Log(_) => "session-log",
                        _ => "source",
                    };
                    report.report(stage, &error_to_js(&error));
                }
                Ok(JsValue::UNDEFINED)
            });
            if let Some(wait_until) = &options.wait_until {
                let _ = wait_until.call1(&JsValue::UNDEFINED, &running);
            }
            Ok(empty_response(202)?.into())
        }
    }
}

async fn opened(writer: &ResponseWriter, new: &[NewMessage], now_ms: u64) -> Result<u64, JsValue> {
    writer
        .open(new, now_ms, &CancelToken::new())
        .await
        .map_err(|e| error_to_js(&e))
}

/// A failure as the value the caller catches: `ChatProducerError` for the log, what the source
/// threw for the source, a coded `Error` for a chunk that is not one.
fn error_to_js(error: &ResponseError) -> JsValue {
    match error {
        ResponseError::Log(e) => log_error_to_js(e),
        ResponseError::Source(e) => {
            match e.cause.as_ref().and_then(|c| c.downcast_ref::<JsValue>()) {
                Some(thrown) => thrown.clone(),
                None => js_sys::Error::new(&e.message).into(),
            }
        }
        ResponseError::InvalidChunk { index, rule } => coded_error(
            "CHAT_INVALID_CHUNK",
            &format!("toChatResponse: source chunk {index} {rule}"),
        ),
    }
}

/// Failures after the answer (or before it, where the client gets only a safe diagnostic) go to
/// `onError(error, { stage, sessionId })`, else to `console.error`.
struct Reporter {
    hook: Option<Function>,
    session_id: Option<String>,
}

impl Reporter {
    fn report(&self, stage: &str, error: &JsValue) {
        let info = Object::new();
        set(&info, "stage", stage);
        if let Some(id) = &self.session_id {
            set(&info, "sessionId", id.as_str());
        }
        match &self.hook {
            Some(hook) => {
                let _ = hook.call2(&JsValue::UNDEFINED, error, &info);
            }
            None => web_sys::console::error_3(&"toChatResponse failed:".into(), error, &info),
        }
    }
}

fn diagnostic(error: BoundaryError) -> Result<Response, JsValue> {
    let body = error.diagnostic().error_body_json(None);
    respond_with(
        error.status(),
        Some(&body),
        Some("application/json; charset=utf-8"),
    )
}

fn empty_response(status: u16) -> Result<Response, JsValue> {
    respond_with(status, None, None)
}

fn respond_with(
    status: u16,
    body: Option<&str>,
    content_type: Option<&str>,
) -> Result<Response, JsValue> {
    let headers = Headers::new()?;
    headers.set("cache-control", "no-store")?;
    if let Some(content_type) = content_type {
        headers.set("content-type", content_type)?;
    }
    let init = ResponseInit::new();
    init.set_status(status);
    init.set_headers(&headers);
    Response::new_with_opt_str_and_init(body, &init)
}

/// An id for a message that came without one.
fn fresh_id() -> String {
    let crypto = get(&js_sys::global(), "crypto");
    get_fn(&crypto, "randomUUID")
        .and_then(|f| f.call0(&crypto).ok())
        .and_then(|v| v.as_string())
        .unwrap_or_else(|| format!("msg-{}", js_sys::Date::now() as u64))
}

/// `source[Symbol.asyncIterator]()` (else `[Symbol.iterator]()`), the iterator.
fn iterator_of(source: &JsValue) -> Option<JsValue> {
    for symbol in [js_sys::Symbol::async_iterator(), js_sys::Symbol::iterator()] {
        let method = js_sys::Reflect::get(source, &symbol).ok()?;
        if let Some(method) = method.dyn_ref::<Function>() {
            return method.call0(source).ok().filter(JsValue::is_object);
        }
    }
    None
}

/// The host's model stream as a [`ChunkSource`].
struct JsChunkSource {
    iterator: Option<JsValue>,
}

impl JsChunkSource {
    fn from_js(source: &JsValue) -> Self {
        Self {
            iterator: if source.is_undefined() {
                None
            } else {
                iterator_of(source)
            },
        }
    }
}

impl ChunkSource for JsChunkSource {
    fn next(&self) -> LocalFuture<'_, Option<Result<Value, PortError>>> {
        Box::pin(async move {
            let iterator = self.iterator.as_ref()?;
            let next = get_fn(iterator, "next")?;
            let step = match resolve(next.call0(iterator)).await {
                Ok(step) => step,
                Err(thrown) => return Some(Err(port_error("source", &thrown))),
            };
            if get(&step, "done").is_truthy() {
                return None;
            }
            Some(to_json(&get(&step, "value")).map_err(PortError::new))
        })
    }

    fn stop(&self) {
        if let Some(iterator) = &self.iterator {
            if let Some(stop) = get_fn(iterator, "return") {
                // `return()` may answer with a promise that rejects: nothing waits for it.
                if let Ok(promise) = stop.call0(iterator).and_then(|p| p.dyn_into::<Promise>()) {
                    let ignore = Closure::new(|_: JsValue| {});
                    let _ = promise.catch(&ignore);
                    ignore.forget();
                }
            }
        }
    }
}
