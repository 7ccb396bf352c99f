//! `DurableStreamsLog`: a session log on any Durable Streams server over HTTP — turnkeep's own
//! `SessionStream` Durable Object (through a stub's `fetch`, no hop through the Worker), the
//! reference server, or any other. `createDurableStreamsLog({ url, headers?, fetch? })`.
//!
//! An append is one POST of a JSON array (JSON mode stores each item as one message) with the
//! producer headers, and `Producer-Seq-Count` when the writer asks for item seqs (a server that
//! gives them echoes it; `core::streams::producer`); a missing stream is created (`PUT`,
//! `application/json`) and the append sent again once. A read is a GET from an offset, `live=long-poll` when the caller will wait. What
//! each answer means is decided by `core::streams::client`; nothing here re-derives it.

use std::rc::Rc;

use js_sys::{Function, Object, Promise};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Headers, Response};

use super::host::signal_of;
use super::session_log::{log_methods_append, log_methods_read};
use crate::core::streams::client::{
    append_reply, gave_item_seqs, read_reply, AppendReply, ReadReply,
};
use crate::core::streams::offset::Offset;
use crate::ports::log::{AppendAck, LogError, LogRead, ProducerStamp, ReadFrom, SessionLog};
use crate::ports::{CancelToken, LocalFuture, PortError};
use crate::web::convert::js_error;
use crate::web::js::{get, get_fn, resolve, set};

/// A Durable Streams stream at `url`.
pub struct HttpLog {
    url: String,
    /// Headers sent with every request (e.g. the server-side streams token).
    headers: JsValue,
    fetch: Function,
    this: JsValue,
    /// The server is known to give item seqs (turnkeep's own `SessionStream` object).
    item_seqs: bool,
    /// The last read found no stream: the next append creates it first instead of learning
    /// that from a 404 (one request fewer for a session's first turn).
    missing: std::cell::Cell<bool>,
}

impl HttpLog {
    /// From `{ url, headers?, fetch? }`; `fetch` defaults to the global one.
    pub fn from_js(options: &JsValue) -> Result<Self, String> {
        let url = get(options, "url")
            .as_string()
            .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
            .ok_or("url must be an http(s) URL of the stream")?;
        let (fetch, this) = match get_fn(options, "fetch") {
            Some(f) => (f, JsValue::UNDEFINED),
            None => {
                let global: JsValue = js_sys::global().into();
                let f = get_fn(&global, "fetch").ok_or("no fetch: pass options.fetch")?;
                (f, global)
            }
        };
        Ok(Self {
            url,
            headers: get(options, "headers"),
            fetch,
            this,
            item_seqs: false,
            missing: Default::default(),
        })
    }

    /// The stream at `url`, fetched by calling `fetch` on `this` (e.g. a Durable Object stub's
    /// own `fetch`), with no extra headers.
    pub fn over(url: String, fetch: Function, this: JsValue) -> Self {
        Self {
            url,
            headers: JsValue::UNDEFINED,
            fetch,
            this,
            item_seqs: false,
            missing: Default::default(),
        }
    }

    /// Says the server gives item seqs (`SessionLog::gives_item_seqs`): turnkeep's own object.
    pub fn with_item_seqs(mut self) -> Self {
        self.item_seqs = true;
        self
    }

    fn headers(&self) -> Result<Headers, PortError> {
        let headers = if self.headers.is_undefined() || self.headers.is_null() {
            Headers::new()
        } else {
            Headers::new_with_headers(self.headers.unchecked_ref())
                .or_else(|_| Headers::new_with_str_sequence_sequence(&self.headers))
        };
        headers.map_err(|_| PortError::new("the log's headers are not valid headers"))
    }

    async fn send(
        &self,
        method: &str,
        url: &str,
        headers: &Headers,
        body: Option<&str>,
        cancel: &CancelToken,
    ) -> Result<Response, LogError> {
        let init = Object::new();
        set(&init, "method", method);
        set(&init, "headers", headers);
        if let Some(body) = body {
            set(&init, "body", body);
        }
        set(&init, "signal", signal_of(cancel));
        let request = web_sys::Request::new_with_str_and_init(url, init.unchecked_ref())
            .map_err(|_| LogError::Failed(PortError::new("the log's URL is not valid")))?;
        let answer = resolve(self.fetch.call1(&self.this, &request))
            .await
            .map_err(|_| {
                LogError::Retryable(PortError::new("the stream server could not be reached"))
            })?;
        answer
            .dyn_into::<Response>()
            .map_err(|_| LogError::Failed(PortError::new("fetch did not resolve to a Response")))
    }

    /// POSTs `items` chunks as the JSON array `body`; the answer, and whether it gave item seqs.
    async fn post(
        &self,
        body: &str,
        items: usize,
        producer: Option<&ProducerStamp>,
        cancel: &CancelToken,
    ) -> Result<(AppendReply, bool), LogError> {
        let headers = self.headers().map_err(LogError::Failed)?;
        let _ = headers.set("content-type", "application/json");
        if let Some(p) = producer {
            let _ = headers.set("producer-id", &p.id);
            let _ = headers.set("producer-epoch", &p.epoch.to_string());
            let _ = headers.set("producer-seq", &p.seq.to_string());
            if p.item_seqs {
                let _ = headers.set("producer-seq-count", &items.to_string());
            }
        }
        let response = self
            .send("POST", &self.url, &headers, Some(body), cancel)
            .await?;
        let header = |name: &str| response.headers().get(name).ok().flatten();
        let reply = append_reply(response.status(), header);
        let item_seqs = gave_item_seqs(header);
        drain(&response).await;
        Ok((reply, item_seqs))
    }

    /// Creates the stream (`PUT`, `application/json`) unless it exists: what an append does
    /// first when the stream is missing, and what a reader of a new session's stream asks for.
    pub async fn create(&self, cancel: &CancelToken) -> Result<(), LogError> {
        let headers = self.headers().map_err(LogError::Failed)?;
        let _ = headers.set("content-type", "application/json");
        let response = self.send("PUT", &self.url, &headers, None, cancel).await?;
        drain(&response).await;
        match response.status() {
            // 409: created meanwhile by another writer (or exists with another configuration,
            // which the append then reports).
            200 | 201 | 204 | 409 => Ok(()),
            429 | 500..=599 => Err(LogError::Retryable(PortError::new(
                "the stream could not be created for now",
            ))),
            status => Err(LogError::Failed(PortError::new(format!(
                "creating the stream answered {status}"
            )))),
        }
    }

    async fn append_now(
        &self,
        chunks: &[String],
        producer: Option<&ProducerStamp>,
        cancel: &CancelToken,
    ) -> Result<AppendAck, LogError> {
        let body = format!("[{}]", chunks.join(","));
        if self.missing.get() {
            self.create(cancel).await?;
            self.missing.set(false);
        }
        let mut answer = self.post(&body, chunks.len(), producer, cancel).await?;
        if answer.0 == AppendReply::Missing {
            self.create(cancel).await?;
            answer = self.post(&body, chunks.len(), producer, cancel).await?;
        }
        let (reply, item_seqs) = answer;
        let missing_offset =
            || LogError::Failed(PortError::new("the server sent no Stream-Next-Offset"));
        match reply {
            AppendReply::Stored { offset } => Ok(AppendAck {
                offset: offset.ok_or_else(missing_offset)?,
                duplicate: false,
                item_seqs,
            }),
            AppendReply::Duplicate { offset } => Ok(AppendAck {
                // Some servers (the reference one) answer a duplicate without the offset.
                offset: match offset {
                    Some(offset) => offset,
                    None => self.tail(cancel).await?.ok_or_else(missing_offset)?,
                },
                duplicate: true,
                item_seqs,
            }),
            AppendReply::StaleEpoch { current_epoch } => {
                Err(LogError::StaleEpoch { current_epoch })
            }
            AppendReply::SequenceGap { expected, received } => {
                Err(LogError::SequenceGap { expected, received })
            }
            AppendReply::Closed => Err(LogError::StreamClosed),
            AppendReply::Retry => Err(LogError::Retryable(PortError::new(
                "the stream server is busy",
            ))),
            AppendReply::Missing => Err(LogError::Failed(PortError::new("the stream is missing"))),
            AppendReply::Refused { status } => Err(LogError::Failed(PortError::new(format!(
                "the append was refused ({status})"
            )))),
        }
    }

    /// The stream's tail offset (`HEAD`).
    async fn tail(&self, cancel: &CancelToken) -> Result<Option<String>, LogError> {
        let headers = self.headers().map_err(LogError::Failed)?;
        let response = self.send("HEAD", &self.url, &headers, None, cancel).await?;
        drain(&response).await;
        match read_reply(response.status(), |name| {
            response.headers().get(name).ok().flatten()
        }) {
            ReadReply::Data { offset, .. } | ReadReply::Nothing { offset } => Ok(offset),
            ReadReply::Retry => Err(LogError::Retryable(PortError::new(
                "the stream server is busy",
            ))),
            ReadReply::Missing | ReadReply::Refused { .. } => Ok(None),
        }
    }

    async fn read_now(
        &self,
        from: ReadFrom<'_>,
        wait_ms: u64,
        cancel: &CancelToken,
    ) -> Result<LogRead, LogError> {
        let mut url = self.url.clone();
        let offset = match from {
            ReadFrom::Start => "-1".to_owned(),
            ReadFrom::Now => "now".to_owned(),
            ReadFrom::After(o) => js_sys::encode_uri_component(o).into(),
        };
        url.push_str(if url.contains('?') { "&" } else { "?" });
        url.push_str("offset=");
        url.push_str(&offset);
        if wait_ms > 0 {
            url.push_str("&live=long-poll");
        }
        let headers = self.headers().map_err(LogError::Failed)?;
        let response = self.send("GET", &url, &headers, None, cancel).await?;
        let empty = |offset: Option<String>| LogRead {
            chunks: Vec::new(),
            offset: offset.filter(|o| !is_start_offset(o)),
            up_to_date: true,
        };
        match read_reply(response.status(), |name| {
            response.headers().get(name).ok().flatten()
        }) {
            ReadReply::Data { offset, up_to_date } => {
                let text = body_text(&response).await?;
                let chunks = match serde_json::from_str::<Value>(&text) {
                    Ok(Value::Array(items)) => items,
                    _ => {
                        return Err(LogError::Failed(PortError::new(
                            "the stream is not a JSON stream",
                        )))
                    }
                };
                let offset = offset.filter(|o| !(chunks.is_empty() && is_start_offset(o)));
                Ok(LogRead {
                    chunks,
                    offset,
                    up_to_date,
                })
            }
            ReadReply::Nothing { offset } => {
                drain(&response).await;
                Ok(empty(offset))
            }
            ReadReply::Missing => {
                drain(&response).await;
                self.missing.set(true);
                Ok(empty(None))
            }
            ReadReply::Retry => Err(LogError::Retryable(PortError::new(
                "the stream server is busy",
            ))),
            ReadReply::Refused { status } => Err(LogError::Failed(PortError::new(format!(
                "the read was refused ({status})"
            )))),
        }
    }
}

/// Whether `offset` is where every new stream starts: a read that answers nothing there is a
/// stream that holds nothing, which the port reports as no offset (`LogRead::offset`), as the
/// store logs do. (A page's read creates its session's stream before any turn writes to it.)
fn is_start_offset(offset: &str) -> bool {
    Offset::parse(offset) == Ok(Offset::ZERO)
}

async fn body_text(response: &Response) -> Result<String, LogError> {
    let promise = response
        .text()
        .map_err(|_| LogError::Retryable(PortError::new("the response body could not be read")))?;
    resolve(Ok(promise.into()))
        .await
        .ok()
        .and_then(|v| v.as_string())
        .ok_or_else(|| LogError::Retryable(PortError::new("the response body could not be read")))
}

/// Reads a body we do not need, so the connection is released.
async fn drain(response: &Response) {
    if let Some(body) = response.body() {
        let _ = body.cancel();
    }
}

impl SessionLog for HttpLog {
    fn append<'a>(
        &'a self,
        chunks: &'a [String],
        producer: Option<&'a ProducerStamp>,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<AppendAck, LogError>> {
        Box::pin(self.append_now(chunks, producer, cancel))
    }

    fn gives_item_seqs(&self) -> bool {
        self.item_seqs
    }

    fn read<'a>(
        &'a self,
        from: ReadFrom<'a>,
        wait_ms: u64,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<LogRead, LogError>> {
        Box::pin(self.read_now(from, wait_ms, cancel))
    }
}

/// The JS class: the host-log interface over [`HttpLog`].
#[wasm_bindgen(js_name = DurableStreamsLog)]
pub struct DurableStreamsLogHandle {
    log: Rc<HttpLog>,
}

/// `createDurableStreamsLog({ url, headers?, fetch? })`.
#[wasm_bindgen(js_name = createDurableStreamsLog)]
pub fn create_durable_streams_log(options: JsValue) -> Result<DurableStreamsLogHandle, JsValue> {
    let log = HttpLog::from_js(&options)
        .map_err(|m| js_error(&format!("createDurableStreamsLog: {m}")))?;
    Ok(DurableStreamsLogHandle { log: Rc::new(log) })
}

#[wasm_bindgen(js_class = DurableStreamsLog)]
impl DurableStreamsLogHandle {
    pub fn append(&self, chunks: JsValue, options: JsValue) -> Promise {
        log_methods_append(self.log.clone(), chunks, options)
    }

    pub fn read(&self, options: JsValue) -> Promise {
        log_methods_read(self.log.clone(), options)
    }

    /// The stream's URL.
    #[wasm_bindgen(getter)]
    pub fn url(&self) -> String {
        self.log.url.clone()
    }
}
