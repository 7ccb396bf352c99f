//! `createChatStreamProxy({ target, auth?, writes?, fetch?, onError? })` → a handler that proxies
//! the browser's chat-stream request to the session's durable stream (its decisions:
//! `core::streams::proxy`). The steps, top to bottom: the request (a bare `Request`, or anything
//! with `.req`); the method (reads; an append only with `writes`, and only once
//! `writes.authorize` allows it, after the target); the target (static, or resolved per request: a resolver that
//! returns null says no, 403, and one that returns a `Response` answers with it); the upstream
//! request (query kept, protocol headers only, identity encoding asked, the server's streams
//! credentials from `auth`, the client's abort signal; a live read that asks for a WebSocket
//! keeps its upgrade); the answer, passed through unbuffered (body as it streams, headers that
//! would misdescribe it dropped; a 101 with its socket exactly as it came) or replaced by a
//! versioned diagnostic. Every rule is `core::streams::proxy`'s; [`failure_response`] is the one place a
//! failure becomes a response.

use std::rc::Rc;

use js_sys::{Function, Object};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Headers, Request, Response, ResponseInit, Url};

use crate::core::streams::proxy::{
    decide_method, forwards_request_header, is_socket_read, keeps_on_failure,
    passes_response_header, passes_untouched, upstream_failure, MethodDecision, ProxyFailure,
    Writes,
};
use crate::web::http::{bare_response, handler_function, json_response_with};
use crate::web::js::{call, coded_error, get, get_fn, resolve, set};
use crate::web::options::OptionReader;

/// A target as the options give it: fixed, or resolved per request.
enum TargetOption {
    Fixed(JsValue),
    PerRequest(Function),
}

struct ProxyOptions {
    target: TargetOption,
    /// The server-side streams credentials: headers, or `(request) => headers`.
    auth: JsValue,
    /// `writes.authorize(request, target)`: without it the proxy serves reads only, so the
    /// server's streams credentials never carry a client's append.
    authorize_write: Option<Function>,
    fetch: Option<Function>,
    on_error: Option<Function>,
}

impl ProxyOptions {
    fn writes(&self) -> Writes {
        match self.authorize_write {
            Some(_) => Writes::Authorized,
            None => Writes::Refused,
        }
    }
}

/// One upstream, resolved for one request.
struct Target {
    url: Url,
    headers: JsValue,
    fetch: Option<Function>,
}

const INVALID_CONFIG: &str = crate::core::diagnostics::proxy::INVALID_CONFIG.code;

fn invalid(detail: &str) -> JsValue {
    coded_error(
        INVALID_CONFIG,
        &format!("The chat-stream proxy configuration is invalid. {detail}"),
    )
}

impl ProxyOptions {
    fn from_js(options: &JsValue) -> Result<Self, JsValue> {
        if !options.is_object() {
            return Err(invalid("options must be an object"));
        }
        let read = OptionReader {
            options,
            invalid: &invalid,
        };
        let target = match read.value("target") {
            t if t.is_function() => TargetOption::PerRequest(t.unchecked_into()),
            t if t.is_undefined() || t.is_null() => {
                return Err(invalid("target is required: a stream URL, { url, headers?, fetch? }, or (request) => target"))
            }
            t => {
                target_of(&t).map_err(|m| invalid(&format!("target: {m}")))?;
                TargetOption::Fixed(t)
            }
        };
        let auth = read.value("auth");
        if !(auth.is_undefined() || auth.is_function() || auth.is_object()) {
            return Err(invalid("auth must be headers or a function returning them"));
        }
        Ok(Self {
            target,
            auth,
            authorize_write: writes_of(&read.value("writes"))?,
            fetch: read.optional_fn("fetch")?,
            on_error: read.optional_fn("onError")?,
        })
    }
}

/// `writes`: absent (reads only), or `{ authorize(request, target) }`.
fn writes_of(writes: &JsValue) -> Result<Option<Function>, JsValue> {
    if writes.is_undefined() || writes.is_null() {
        return Ok(None);
    }
    let authorize = if writes.is_object() {
        get(writes, "authorize")
    } else {
        JsValue::UNDEFINED
    };
    authorize
        .dyn_into::<Function>()
        .map(Some)
        .map_err(|_| invalid("writes must be { authorize(request, target) }"))
}

/// A target value: a URL string, or `{ url, headers?, fetch? }`.
fn target_of(value: &JsValue) -> Result<Target, String> {
    let (url, headers, fetch) = match value.as_string() {
        Some(url) => (url, JsValue::UNDEFINED, None),
        None if value.is_object() => {
            let url = get(value, "url")
                .as_string()
                .ok_or("a target object needs a url string")?;
            let fetch = get(value, "fetch");
            if !fetch.is_undefined() && !fetch.is_function() {
                return Err("target.fetch must be a function".into());
            }
            (
                url,
                get(value, "headers"),
                fetch.dyn_into::<Function>().ok(),
            )
        }
        None => return Err("a target is a URL string or { url, headers?, fetch? }".into()),
    };
    let url = Url::new(&url).map_err(|_| "the target url must be an absolute URL")?;
    if url.protocol() != "http:" && url.protocol() != "https:" {
        return Err("the target url must be http(s)".into());
    }
    Ok(Target {
        url,
        headers,
        fetch,
    })
}

/// Creates the handler. Throws an Error with `code: "STREAM_PROXY_INVALID_CONFIG"` for bad options.
#[wasm_bindgen(js_name = createChatStreamProxy)]
pub fn create_chat_stream_proxy(options: JsValue) -> Result<Function, JsValue> {
    Ok(handler_function(
        Rc::new(ProxyOptions::from_js(&options)?),
        respond_to,
    ))
}

/// Why a request failed, and for the operator, what was thrown (never sent).
struct Failure {
    failure: ProxyFailure,
    cause: Option<JsValue>,
    /// Protocol headers of the upstream answer this failure replaces.
    headers: Vec<(String, String)>,
}

impl From<ProxyFailure> for Failure {
    fn from(failure: ProxyFailure) -> Self {
        Self {
            failure,
            cause: None,
            headers: Vec::new(),
        }
    }
}

fn with_cause(failure: ProxyFailure, cause: JsValue) -> Failure {
    Failure {
        failure,
        cause: Some(cause),
        headers: Vec::new(),
    }
}

async fn respond_to(options: Rc<ProxyOptions>, input: JsValue) -> Response {
    let options = &*options;
    match handle(options, &input).await {
        Ok(response) => response,
        Err(failure) => failure_response(options, failure),
    }
}

/// A bare `Request`, or the `.req` of a framework's context object.
fn request_of(input: &JsValue) -> Option<Request> {
    crate::web::http::as_request(input.clone())
        .ok()
        .or_else(|| crate::web::http::as_request(get(input, "req")).ok())
}

async fn handle(options: &ProxyOptions, input: &JsValue) -> Result<Response, Failure> {
    let request = request_of(input).ok_or(ProxyFailure::NotARequest)?;
    let method = request.method();
    let append = match decide_method(&method, options.writes()) {
        MethodDecision::Read => false,
        MethodDecision::Append => true,
        MethodDecision::Refuse(failure) => return Err(failure.into()),
    };
    let target = match resolve_target(options, &request).await? {
        Resolved::Target(target) => target,
        Resolved::Answer(response) => return Ok(response),
    };
    if append {
        if let Some(refusal) = authorize_write(options, &request, &target).await? {
            return Ok(refusal);
        }
    }
    let upstream = upstream_request(options, &request, &target).await?;
    let fetch = target.fetch.as_ref().or(options.fetch.as_ref());
    let answer = match fetch {
        Some(f) => call(f, &[&upstream]).await,
        None => {
            let global: JsValue = js_sys::global().into();
            let f = get_fn(&global, "fetch").ok_or(ProxyFailure::Unreachable)?;
            resolve(f.call1(&global, &upstream)).await
        }
    };
    let answer = answer.map_err(|e| {
        let failure = if request.signal().aborted() {
            ProxyFailure::Cancelled
        } else {
            ProxyFailure::Unreachable
        };
        with_cause(failure, e)
    })?;
    let answer: Response = answer
        .dyn_into()
        .map_err(|v| with_cause(ProxyFailure::Unreachable, v))?;
    if passes_untouched(answer.status()) {
        return Ok(answer); // a socket read accepted: the socket rides on this very response
    }
    pass_through(&method, answer)
}

enum Resolved {
    Target(Target),
    /// The resolver answered the request itself (its own denial).
    Answer(Response),
}

async fn resolve_target(options: &ProxyOptions, request: &Request) -> Result<Resolved, Failure> {
    let value = match &options.target {
        TargetOption::Fixed(value) => value.clone(),
        TargetOption::PerRequest(resolver) => call(resolver, &[request.as_ref()])
            .await
            .map_err(|e| with_cause(ProxyFailure::TargetInvalid, e))?,
    };
    if value.is_undefined() || value.is_null() {
        return Err(ProxyFailure::Forbidden.into());
    }
    if value.is_instance_of::<Response>() {
        return Ok(Resolved::Answer(value.unchecked_into()));
    }
    target_of(&value)
        .map(Resolved::Target)
        .map_err(|m| with_cause(ProxyFailure::TargetInvalid, JsValue::from_str(&m)))
}

/// Asks `writes.authorize(request, target URL)` about an append: `true` lets it through (`None`);
/// a `Response` is the host's own refusal, answered as is; anything else is 403.
async fn authorize_write(
    options: &ProxyOptions,
    request: &Request,
    target: &Target,
) -> Result<Option<Response>, Failure> {
    let Some(authorize) = &options.authorize_write else {
        return Err(ProxyFailure::ReadOnly.into());
    };
    let url = JsValue::from_str(&target.url.href());
    let verdict = call(authorize, &[request.as_ref(), &url])
        .await
        .map_err(|e| with_cause(ProxyFailure::WriteAuthorizeFailed, e))?;
    if verdict.is_instance_of::<Response>() {
        return Ok(Some(verdict.unchecked_into()));
    }
    match verdict.as_bool() {
        Some(true) => Ok(None),
        _ => Err(ProxyFailure::WriteForbidden.into()),
    }
}

/// The upstream request: the target's URL with the client's query parameters, the protocol
/// headers the client sent, identity encoding, the target's headers, then the credentials; the
/// client's body (POST) and its abort signal.
async fn upstream_request(
    options: &ProxyOptions,
    request: &Request,
    target: &Target,
) -> Result<Request, Failure> {
    let internal = |e: JsValue| with_cause(ProxyFailure::TargetInvalid, e);
    let url = Url::new(&target.url.href()).map_err(internal)?;
    if let Ok(client) = Url::new(&request.url()) {
        for pair in js_sys::try_iter(&client.search_params())
            .ok()
            .flatten()
            .into_iter()
            .flatten()
        {
            let pair: js_sys::Array = pair.map_err(internal)?.unchecked_into();
            let (name, value) = (pair.get(0).as_string(), pair.get(1).as_string());
            if let (Some(name), Some(value)) = (name, value) {
                url.search_params().append(&name, &value);
            }
        }
    }
    let headers = Headers::new().map_err(internal)?;
    for (name, value) in header_pairs(&request.headers()) {
        if forwards_request_header(&name) {
            headers.append(&name, &value).map_err(internal)?;
        }
    }
    headers
        .set("accept-encoding", "identity")
        .map_err(internal)?;
    let upgrade = request.headers().get("upgrade").ok().flatten();
    if is_socket_read(&request.method(), upgrade.as_deref()) {
        headers.set("upgrade", "websocket").map_err(internal)?;
    }
    merge_headers(&headers, &target.headers).map_err(internal)?;
    let auth = if options.auth.is_function() {
        call(options.auth.unchecked_ref(), &[request.as_ref()])
            .await
            .map_err(internal)?
    } else {
        options.auth.clone()
    };
    merge_headers(&headers, &auth).map_err(internal)?;
    let init = Object::new();
    set(&init, "method", request.method());
    set(&init, "headers", headers);
    set(&init, "signal", request.signal());
    if request.method() == "POST" {
        if let Some(body) = request.body() {
            set(&init, "body", body);
            set(&init, "duplex", "half"); // a streamed request body (Node's fetch requires it)
        }
    }
    Request::new_with_str_and_init(&url.href(), init.unchecked_ref()).map_err(internal)
}

/// Sets every header of `extra` (a `Headers`, an object or pairs; absent: nothing) on `headers`.
fn merge_headers(headers: &Headers, extra: &JsValue) -> Result<(), JsValue> {
    if extra.is_undefined() || extra.is_null() {
        return Ok(());
    }
    let extra = Headers::new_with_headers(extra.unchecked_ref())
        .or_else(|_| Headers::new_with_str_sequence_sequence(extra))?;
    for (name, value) in header_pairs(&extra) {
        headers.set(&name, &value)?;
    }
    Ok(())
}

/// `(name, value)` of each header (names lower-case, as `Headers` iterates them).
fn header_pairs(headers: &Headers) -> Vec<(String, String)> {
    let Ok(Some(iter)) = js_sys::try_iter(headers) else {
        return Vec::new();
    };
    iter.filter_map(Result::ok)
        .filter_map(|pair| {
            let pair: js_sys::Array = pair.unchecked_into();
            Some((pair.get(0).as_string()?, pair.get(1).as_string()?))
        })
        .collect()
}

/// The client's answer: the upstream's status and body as they stream (nothing read here), with
/// the headers that still describe them; or a diagnostic in place of an upstream error.
fn pass_through(method: &str, answer: Response) -> Result<Response, Failure> {
    let upstream_headers = header_pairs(&answer.headers());
    let producer_epoch = upstream_headers.iter().any(|(n, _)| n == "producer-epoch");
    if let Some(failure) = upstream_failure(answer.status(), producer_epoch) {
        if let Some(body) = answer.body() {
            let _ = body.cancel(); // the upstream's error body is never read, never passed on
        }
        return Err(Failure {
            failure,
            cause: None,
            headers: upstream_headers
                .into_iter()
                .filter(|(n, _)| keeps_on_failure(n))
                .collect(),
        });
    }
    let internal = |e: JsValue| with_cause(ProxyFailure::UpstreamFailed, e);
    let headers = Headers::new().map_err(internal)?;
    for (name, value) in upstream_headers {
        if passes_response_header(&name) {
            headers.append(&name, &value).map_err(internal)?;
        }
    }
    headers
        .set("x-content-type-options", "nosniff")
        .map_err(internal)?;
    let init = ResponseInit::new();
    init.set_status(answer.status());
    init.set_headers(&headers);
    let body = if method == "HEAD" || matches!(answer.status(), 204 | 304) {
        None
    } else {
        answer.body()
    };
    Response::new_with_opt_readable_stream_and_init(body.as_ref(), &init).map_err(internal)
}

/// The one place a failure becomes a response: the versioned diagnostic (with `allow` on a 405,
/// and the protocol headers of an upstream answer it replaces); the cause goes to `onError`.
fn failure_response(options: &ProxyOptions, failure: Failure) -> Response {
    let Failure {
        failure,
        cause,
        headers,
    } = failure;
    if let (Some(on_error), Some(cause)) = (&options.on_error, cause) {
        let report = Object::new();
        set(&report, "code", failure.row().code);
        set(&report, "cause", cause);
        let _ = on_error.call1(&JsValue::UNDEFINED, &report);
    }
    let status = failure.status();
    let mut extra: Vec<(&str, &str)> = headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    extra.push(("x-content-type-options", "nosniff"));
    if let Some(allow) = failure.allow() {
        extra.push(("allow", allow));
    }
    json_response_with(status, &failure.error_body_json(), &extra)
        .unwrap_or_else(|_| bare_response(status))
}
