//! Reading the request and building responses, for every handler: the cheap header checks, the
//! body read with a byte limit, and the two kinds of response (a JSON diagnostic, or an NDJSON
//! stream).

use js_sys::{Function, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Headers, ReadableStream, Request, Response, ResponseInit};

use super::js::{call_method, get, get_fn};

/// Why the body could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum BodyError {
    /// Over the limit, by `Content-Length` or by counted bytes.
    TooLarge,
    /// No body, or not UTF-8.
    Unreadable,
    /// The stream failed or was aborted while reading.
    Failed,
}

/// `Content-Length`, when it parses to a finite number.
pub fn declared_length(request: &Request) -> Option<f64> {
    let value = request.headers().get("content-length").ok().flatten()?;
    value.trim().parse::<f64>().ok().filter(|n| n.is_finite())
}

/// True when the lower-cased media type starts with `application/json`.
pub fn is_json_media_type(request: &Request) -> bool {
    request
        .headers()
        .get("content-type")
        .ok()
        .flatten()
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("application/json"))
}

/// Reads the body as UTF-8, counting bytes; the reader is cancelled as soon as the count
/// passes `max_bytes`, so an oversized body is never buffered whole.
pub async fn read_text_limited(request: &Request, max_bytes: u64) -> Result<String, BodyError> {
    if declared_length(request).is_some_and(|n| n > max_bytes as f64) {
        return Err(BodyError::TooLarge);
    }
    let Some(body) = request.body() else {
        return Err(BodyError::Unreadable);
    };
    let reader = call_method(&body, "getReader", &[])
        .await
        .map_err(|_| BodyError::Failed)?;
    let mut bytes: Vec<u8> = Vec::new();
    loop {
        let step = call_method(&reader, "read", &[])
            .await
            .map_err(|_| BodyError::Failed)?;
        if get(&step, "done").is_truthy() {
            break;
        }
        let chunk: Uint8Array = get(&step, "value")
            .dyn_into()
            .map_err(|_| BodyError::Failed)?;
        if bytes.len() as u64 + u64::from(chunk.length()) > max_bytes {
            let _ = call_method(&reader, "cancel", &[]).await;
            return Err(BodyError::TooLarge);
        }
        let start = bytes.len();
        bytes.resize(start + chunk.length() as usize, 0);
        chunk.copy_to(&mut bytes[start..]);
    }
    String::from_utf8(bytes).map_err(|_| BodyError::Unreadable)
}

/// A JSON response with the boundary's standard headers.
pub fn json_response(status: u16, body: &str) -> Result<Response, JsValue> {
    json_response_with(status, body, &[])
}

/// [`json_response`] with extra headers.
pub fn json_response_with(
    status: u16,
    body: &str,
    extra: &[(&str, &str)],
) -> Result<Response, JsValue> {
    respond(
        status,
        &JsValue::from_str(body),
        "application/json; charset=utf-8",
        extra,
    )
}

/// Last resort when even building a JSON response threw: a bodiless response with the status.
pub fn bare_response(status: u16) -> Response {
    let init = ResponseInit::new();
    init.set_status(status);
    Response::new_with_opt_str_and_init(None, &init)
        .or_else(|_| Response::new())
        .unwrap_or_else(|_| JsValue::UNDEFINED.unchecked_into())
}

/// The 200 NDJSON stream response.
pub fn ndjson_response(stream: &ReadableStream) -> Result<Response, JsValue> {
    ndjson_response_with(stream, &[])
}

/// [`ndjson_response`] with extra headers (besides `x-content-type-options: nosniff`).
pub fn ndjson_response_with(
    stream: &ReadableStream,
    extra: &[(&str, &str)],
) -> Result<Response, JsValue> {
    let mut headers = vec![("x-content-type-options", "nosniff")];
    headers.extend_from_slice(extra);
    respond(200, stream, "application/x-ndjson; charset=utf-8", &headers)
}

/// A response with the standard headers (`content-type`, `cache-control: no-store`) and `extra`.
/// Any status the host's `Response` accepts, 499 included.
pub fn respond(
    status: u16,
    body: &JsValue,
    content_type: &str,
    extra: &[(&str, &str)],
) -> Result<Response, JsValue> {
    let headers = Headers::new()?;
    headers.set("content-type", content_type)?;
    headers.set("cache-control", "no-store")?;
    for (name, value) in extra {
        headers.set(name, value)?;
    }
    let init = ResponseInit::new();
    init.set_status(status);
    init.set_headers(&headers);
    // Status 499 is outside what some runtimes' Response constructor allows in its checks;
    // construct generically so the host's own validation decides.
    let ctor = get(&js_sys::global(), "Response");
    let args = js_sys::Array::of2(&natively_pumped(body), &init);
    let response = Reflect::construct(ctor.unchecked_ref::<Function>(), &args)?;
    Ok(response.unchecked_into())
}

/// `body`, or where the host has workerd's `IdentityTransformStream`, that stream's readable side
/// with `body` copied into it.
///
/// workerd reports a client that goes away in the middle of a body as an uncaught
/// `Error: Network connection lost.` (an unhandled rejection of its own pump) whenever the body is
/// a JS-created `ReadableStream`, whoever wrote the Worker (`tests/workerd/disconnects.test.mjs`
/// shows it with a Worker of a dozen lines and none of turnkeep). A deployed Worker counts each
/// as an exception. A native stream is pumped without one. The copy is a loop of our own rather
/// than `pipeTo`, whose write in flight when the client goes away is rejected with nobody to
/// handle it: here every read and write is awaited, and a failed write (the client is gone)
/// cancels `body` — the turn's response sees the cancel it would have seen from any host — and
/// is no error.
fn natively_pumped(body: &JsValue) -> JsValue {
    let identity = get(&js_sys::global(), "IdentityTransformStream");
    let (Some(identity), true) = (identity.dyn_ref::<Function>(), body.is_instance_of::<ReadableStream>()) else {
        return body.clone(); // not workerd, or no stream: nothing to pump
    };
    let Ok(native) = Reflect::construct(identity, &js_sys::Array::new()) else {
        return body.clone();
    };
    let writable = get(&native, "writable");
    let (Some(get_reader), Some(get_writer)) = (get_fn(body, "getReader"), get_fn(&writable, "getWriter")) else {
        return body.clone();
    };
    let (Ok(reader), Ok(writer)) = (get_reader.call0(body), get_writer.call0(&writable)) else {
        return body.clone();
    };
    wasm_bindgen_futures::spawn_local(copy(reader, writer));
    get(&native, "readable")
}

/// Copies every chunk `reader` gives to `writer`, then closes it; when a write fails, cancels the
/// source and aborts the sink, each awaited (their rejections are no one else's).
async fn copy(reader: JsValue, writer: JsValue) {
    let failed = loop {
        let read = match call_method(&reader, "read", &[]).await {
            Ok(read) => read,
            Err(error) => break error,
        };
        if get(&read, "done").is_truthy() {
            let _ = call_method(&writer, "close", &[]).await;
            return;
        }
        if let Err(error) = call_method(&writer, "write", &[&get(&read, "value")]).await {
            break error;
        }
    };
    let _ = call_method(&reader, "cancel", &[&failed]).await;
    let _ = call_method(&writer, "abort", &[&failed]).await;
}

/// `value` as a Fetch `Request`. `instanceof Request` alone is not enough: a framework may
/// replace `globalThis.Request` with a subclass (OpenNext's Cloudflare runtime does, on its first
/// request), and the runtime's own requests are then no longer instances of the global. Anything
/// else with the members every handler reads (`url` and `method` strings, a `headers` object) is
/// taken as a request too; every member is then read by name, as on a real one.
pub fn as_request(value: JsValue) -> Result<Request, JsValue> {
    let shaped = || {
        get(&value, "url").is_string()
            && get(&value, "method").is_string()
            && get(&value, "headers").is_object()
    };
    if value.is_instance_of::<Request>() || (value.is_object() && shaped()) {
        Ok(value.unchecked_into())
    } else {
        Err(value)
    }
}

/// A handler as JS sees it, `(request) => Promise<Response>`, over `respond`, which shares the
/// handler's options and must always produce a Response (nothing is thrown to the runtime).
pub fn handler_function<O, F, Fut>(options: std::rc::Rc<O>, respond: F) -> Function
where
    O: 'static,
    F: Fn(std::rc::Rc<O>, JsValue) -> Fut + 'static,
    Fut: std::future::Future<Output = Response> + 'static,
{
    let handler = Closure::<dyn Fn(JsValue) -> js_sys::Promise>::new(move |request: JsValue| {
        let response = respond(options.clone(), request);
        wasm_bindgen_futures::future_to_promise(async move { Ok(response.await.into()) })
    });
    handler.into_js_value().unchecked_into()
}
