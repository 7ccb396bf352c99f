//! `createSessionLogHandler({ log, onError?, sseMs? })` → `(request) => Promise<Response>`: a
//! session log that lives in the host's database (`turnkeep/redis`, `turnkeep/postgres`, any
//! `SessionLog`) served read-only over the Durable Streams read protocol, so a browser's
//! `createChatConnection` follows a session live without a streams server: catch-up reads
//! (`?offset=`), long-polls and SSE (`live=long-poll|sse`). `log(request)` says which log a
//! request may read (after the host's own authorization): a log, or a `Response` to answer with
//! (a refusal), or nothing (404). The query's rules are `core::streams::log_read`'s; the SSE
//! events `core::streams::sse`'s (an `event: data` with the chunks read, then an `event:
//! control` with the offset after them).

use std::rc::Rc;

use js_sys::Function;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Request, Response, Url};

use crate::core::diagnostics::{streams as rows, Row};
use crate::core::limits;
use crate::core::streams::log_read::{log_read_query, LogFrom};
use crate::core::streams::read_query::LiveMode;
use crate::core::streams::sse::{push_control, push_data, Control};
use crate::ports::log::{LogRead, ReadFrom, SessionLog};
use crate::ports::CancelToken;
use crate::web::adapters::JsSessionLog;
use crate::web::chat::{RequestDeadline, TextStream};
use crate::web::http::{handler_function, json_response_with, respond};
use crate::web::js::{call, coded_error};
use crate::web::options::OptionReader;

struct Options {
    log: Function,
    on_error: Option<Function>,
    sse_ms: u32,
}

fn invalid(detail: &str) -> JsValue {
    let row = crate::core::diagnostics::chat::INVALID_CONFIG;
    coded_error(
        row.code,
        &format!("The session log handler configuration is invalid. {detail}"),
    )
}

/// Creates the handler. Throws an Error with `code: "SERVER_INVALID_CONFIG"` for bad options.
#[wasm_bindgen(js_name = createSessionLogHandler)]
pub fn create_session_log_handler(options: JsValue) -> Result<Function, JsValue> {
    if !options.is_object() {
        return Err(invalid("options must be an object"));
    }
    let read = OptionReader {
        options: &options,
        invalid: &invalid,
    };
    let options = Rc::new(Options {
        log: read.required_fn("log")?,
        on_error: read.optional_fn("onError")?,
        sse_ms: read.positive_ms("sseMs", limits::LOG_SSE_MS_DEFAULT)?,
    });
    Ok(handler_function(
        options,
        |options, request: JsValue| async move {
            match crate::web::http::as_request(request) {
                Ok(request) => handle(&options, &request).await,
                Err(_) => diagnostic(rows::INTERNAL),
            }
        },
    ))
}

/// Every request ends with a Response.
async fn handle(options: &Options, request: &Request) -> Response {
    match serve(options, request).await {
        Ok(response) => response,
        Err(Failure::Refused(row)) => diagnostic(row),
        Err(Failure::Host(response)) => response,
        Err(Failure::Fault(row, cause)) => {
            if let Some(on_error) = &options.on_error {
                let _ = on_error.call1(&JsValue::UNDEFINED, &cause);
            }
            diagnostic(row)
        }
    }
}

enum Failure {
    Refused(Row),
    /// The host's own answer (its `log(request)` returned a Response).
    Host(Response),
    /// Something failed: the row for the client, the cause for `onError`.
    Fault(Row, JsValue),
}

async fn serve(options: &Options, request: &Request) -> Result<Response, Failure> {
    let method = request.method();
    if method != "GET" && method != "HEAD" {
        return Err(Failure::Refused(rows::METHOD_NOT_ALLOWED));
    }
    let url = Url::new(&request.url()).map_err(|e| Failure::Fault(rows::INTERNAL, e))?;
    let params = url.search_params();
    let offsets: Vec<String> = params
        .get_all("offset")
        .iter()
        .filter_map(|v| v.as_string())
        .collect();
    let offsets: Vec<&str> = offsets.iter().map(String::as_str).collect();
    let query =
        log_read_query(&offsets, params.get("live").as_deref()).map_err(Failure::Refused)?;
    let found = call(&options.log, &[request.as_ref()])
        .await
        .map_err(|e| Failure::Fault(rows::INTERNAL, e))?;
    if let Some(response) = found.dyn_ref::<Response>() {
        return Err(Failure::Host(Clone::clone(response)));
    }
    if found.is_undefined() || found.is_null() {
        return Err(Failure::Refused(rows::STREAM_NOT_FOUND));
    }
    let log: Rc<dyn SessionLog> = Rc::new(
        JsSessionLog::from_js(&found)
            .map_err(|m| Failure::Fault(rows::INTERNAL, JsValue::from_str(&m)))?,
    );
    match query.live {
        LiveMode::Sse => sse(options, request, log, query.from),
        LiveMode::CatchUp | LiveMode::LongPoll => {
            let wait_ms = if query.live == LiveMode::LongPoll {
                limits::LOG_LONG_POLL_MS
            } else {
                0
            };
            let token = CancelToken::new();
            let read = log
                .read(read_from(&query.from), wait_ms, &token)
                .await
                .map_err(|e| Failure::Fault(rows::INTERNAL, JsValue::from_str(&e.to_string())))?;
            answer(&method, query.live, &query.from, &read)
        }
    }
}

fn read_from(from: &LogFrom) -> ReadFrom<'_> {
    match from {
        LogFrom::Start => ReadFrom::Start,
        LogFrom::Now => ReadFrom::Now,
        LogFrom::After(offset) => ReadFrom::After(offset),
    }
}

/// A catch-up or long-poll read's answer: the chunks as a JSON array, the offset after them.
fn answer(
    method: &str,
    live: LiveMode,
    from: &LogFrom,
    read: &LogRead,
) -> Result<Response, Failure> {
    let next = read.offset.clone().or_else(|| match from {
        LogFrom::After(offset) => Some(offset.clone()),
        _ => None,
    });
    let mut headers: Vec<(&str, &str)> = vec![(
        "stream-up-to-date",
        if read.up_to_date { "true" } else { "false" },
    )];
    if let Some(next) = &next {
        headers.push(("stream-next-offset", next));
    }
    let fault = |e: JsValue| Failure::Fault(rows::INTERNAL, e);
    if live == LiveMode::LongPoll && read.chunks.is_empty() {
        return respond(204, &JsValue::NULL, "application/json", &headers).map_err(fault);
    }
    let body = if method == "HEAD" {
        JsValue::NULL
    } else {
        JsValue::from_str(&Value::Array(read.chunks.clone()).to_string())
    };
    respond(200, &body, "application/json", &headers).map_err(fault)
}

/// An SSE read: the events as the log grows, for `sse_ms` at most (then the client reads
/// again, from the last control event's offset), a comment every `LOG_SSE_HEARTBEAT_MS` while
/// nothing comes (a runtime notices a reader gone only when it writes).
fn sse(
    options: &Options,
    request: &Request,
    log: Rc<dyn SessionLog>,
    from: LogFrom,
) -> Result<Response, Failure> {
    let deadline = RequestDeadline::start(request, options.sse_ms);
    let token = deadline.interrupt().token().clone();
    let cancelled = token.clone();
    let fault = |e: JsValue| Failure::Fault(rows::INTERNAL, e);
    let (stream, body) = TextStream::new(Box::new(move || cancelled.cancel())).map_err(fault)?;
    let response = respond(
        200,
        &body,
        "text/event-stream",
        &[("x-accel-buffering", "no")],
    )
    .map_err(fault)?;
    let on_error = options.on_error.clone();
    wasm_bindgen_futures::spawn_local(async move {
        let mut from = from;
        while !token.is_cancelled() {
            let read = log
                .read(read_from(&from), limits::LOG_SSE_HEARTBEAT_MS, &token)
                .await;
            let read = match read {
                Ok(read) => read,
                Err(e) => {
                    if let Some(on_error) = &on_error {
                        let _ =
                            on_error.call1(&JsValue::UNDEFINED, &JsValue::from_str(&e.to_string()));
                    }
                    break;
                }
            };
            let Some(next) = read.offset.clone() else {
                stream.write(":\n\n");
                continue;
            };
            if read.chunks.is_empty() {
                stream.write(":\n\n");
            } else {
                let mut text = String::new();
                push_data(&mut text, &Value::Array(read.chunks).to_string());
                push_control(
                    &mut text,
                    &Control {
                        next_offset: &next,
                        cursor: None,
                        up_to_date: read.up_to_date,
                        closed: false,
                    },
                );
                stream.write(&text);
            }
            from = LogFrom::After(next);
        }
        stream.close("");
        deadline.clear();
    });
    Ok(response)
}

fn diagnostic(row: Row) -> Response {
    let mut headers: Vec<(&str, &str)> = Vec::new();
    if row == rows::METHOD_NOT_ALLOWED {
        headers.push(("allow", "GET, HEAD"));
    }
    json_response_with(row.status, &row.error_body_json(), &headers)
        .unwrap_or_else(|_| crate::web::http::bare_response(row.status))
}
