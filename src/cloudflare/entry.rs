//! The demo Worker's entry (workers-rs `#[event(fetch)]`): the route table of `routes.rs`,
//! each route performed here. `wrangler dev` serves it on
//! http://127.0.0.1:8787 through the thin module `js/cloudflare/worker.mjs`.
//!
//! Each (tenant, session) lives in its own `ChatSession` object (named `<tenant>/<sessionId>`),
//! which holds the session envelope (compare-and-set) and the canonical messages; every turn is
//! also published to the session's durable stream `chat/<tenant>/<sessionId>` (a `SessionStream`
//! object, reached through its stub), which every tab reads.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Request, Response};
use worker::{event, Context, Env};

use super::body::drain;
use super::chat::DemoChatHost;
use super::demo_mounts::{ask_handler, chat_stream_proxy, sandbox_handler, CHART_SCRIPT};
use super::env::{random_id, setting, stub};
use super::page::{page_request, render_page, PageRequest, PageTarget};
use super::routes::{
    chat_stream_route, session_view_target, socket_authorization, ChatStreamRoute, Diagnostic,
    Route, SessionStreamRead,
};
use super::session_ports::{read_session_view, session_stream_log};
use super::streams::route::{
    decide, Refusal, RouteRequest, StreamRoute, StreamsAccess, PREFLIGHT_HEADERS,
};
use super::streams::shell::{refusal_response, SESSION_STREAM_BINDING};
use super::streams::sockets::is_socket_read;
use crate::ports::log::SessionLog;
use crate::ports::CancelToken;
use crate::turn::external::read_projection;
use crate::turn::race::join;
use crate::web::convert::from_json;
use crate::web::http::{bare_response, respond as http_respond};
use crate::web::resolve::resolve_snapshot;

/// The demo chat page's template: one self-contained HTML file (no framework, no build step),
/// filled by `page::render_page`; its script is the static asset `/demo/page.mjs`.
const DEMO_PAGE_HTML: &str = include_str!("../../js/cloudflare/demo-page.html");

#[event(fetch)]
pub async fn main(req: worker::Request, env: Env, ctx: Context) -> worker::Result<Response> {
    let request: Request = req.inner().to_owned();
    let answer = route(&request, &env, &ctx).await;
    if !request.body_used() && request.body().is_some() {
        drain(&request).await;
    }
    match answer {
        Ok(response) => Ok(response),
        Err(error) => {
            web_sys::console::error_2(&"the Worker failed:".into(), &error);
            Ok(bare_response(500))
        }
    }
}

async fn route(request: &Request, env: &Env, ctx: &Context) -> Result<Response, JsValue> {
    let url = web_sys::Url::new(&request.url())?;
    let path = url.pathname();
    let method = request.method();
    #[cfg(feature = "test-hooks")]
    if path.starts_with("/__test/") && setting(env, "TEST_HOOKS").as_deref() == Some("1") {
        if let Some(report) = test_hook(env, &path).await? {
            return http_respond(200, &report, "application/json; charset=utf-8", &[]);
        }
    }
    let route = Route::of(&path);
    if !route.allows(&method) {
        let allow = route.allowed_methods().unwrap_or_default();
        return diagnostic_result(&Diagnostic::method_not_allowed(allow));
    }
    match route {
        Route::Page => Ok(page(request, env, &url.search()).await),
        Route::ChartScript => http_respond(
            200,
            &CHART_SCRIPT.into(),
            "text/javascript; charset=utf-8",
            &[],
        ),
        Route::Chat => Ok(chat(request, env, ctx, Wire::Turns).await),
        Route::UiChat => Ok(chat(request, env, ctx, Wire::UiMessages).await),
        Route::Ask => call_handler(&mounts(env)?.ask, request).await,
        Route::Sandbox => call_handler(&mounts(env)?.sandbox, request).await,
        Route::Session(raw) => Ok(session_view(request, env, &raw).await),
        Route::ChatStream(raw) => chat_stream(request, env, &raw).await,
        Route::Other => streams(request, env, &path).await,
    }
}

/// The test hooks' reports (test builds, `TEST_HOOKS=1`): `/__test/memory` (the isolate's wasm
/// memory), `/__test/stream-io/<name>` (the SQL counts of one stream's object) and
/// `/__test/stream-instance/<name>` (its in-memory marker and sockets).
#[cfg(feature = "test-hooks")]
async fn test_hook(env: &Env, path: &str) -> Result<Option<JsValue>, JsValue> {
    if path == "/__test/memory" {
        return Ok(Some(super::test_holds::memory_report().into()));
    }
    if let Some(name) = path.strip_prefix("/__test/stream-instance/") {
        return Ok(Some(super::streams::shell::instance_of(env, name).await?));
    }
    match path.strip_prefix("/__test/stream-io/") {
        Some(name) => Ok(Some(super::streams::shell::sql_io_of(env, name).await?)),
        None => Ok(None),
    }
}

/// GET /: the chat page of `?session=<id>`, server-rendered from the session's stream (or a
/// redirect to the session to show, `page::page_request`).
async fn page(request: &Request, env: &Env, search: &str) -> Response {
    let cookie = request.headers().get("cookie").ok().flatten();
    let fresh = || format!("session-{}", &random_id()[..8]);
    let target = match page_request(search, cookie.as_deref(), fresh) {
        PageRequest::Redirect { location } => {
            return redirect(&location).unwrap_or_else(|_| bare_response(500))
        }
        PageRequest::Render(target) => target,
    };
    match render(env, &target).await {
        Ok(response) => response,
        Err(error) => {
            web_sys::console::error_2(&"GET / failed:".into(), &error);
            diagnostic_response(&Diagnostic::session_unreadable())
        }
    }
}

async fn render(env: &Env, target: &PageTarget) -> Result<Response, JsValue> {
    let port_error = |e: String| JsValue::from_str(&e);
    let log = session_stream_log(env, &target.tenant, &target.session_id)
        .map_err(|e| port_error(e.to_string()))?;
    let (projection, offset) = read_projection(&log, &CancelToken::new())
        .await
        .map_err(|e| port_error(e.to_string()))?;
    let html = render_page(DEMO_PAGE_HTML, target, &projection, offset.as_deref());
    http_respond(
        200,
        &html.into(),
        "text/html; charset=utf-8",
        &[("set-cookie", &target.set_cookie())],
    )
}

fn redirect(location: &str) -> Result<Response, JsValue> {
    let headers = web_sys::Headers::new()?;
    headers.set("location", location)?;
    headers.set("cache-control", "no-store")?;
    let init = web_sys::ResponseInit::new();
    init.set_status(302);
    init.set_headers(&headers);
    Response::new_with_opt_str_and_init(None, &init)
}

/// `/api/chat/stream/:sessionId`: as `routes::chat_stream_route` decides; a read goes through
/// `createChatStreamProxy`, whose upstream is the session's own `SessionStream` object (a live
/// read that asks for a WebSocket too: the proxy forwards the upgrade and hands back the 101).
async fn chat_stream(request: &Request, env: &Env, raw: &str) -> Result<Response, JsValue> {
    let headers = request.headers();
    let mut authorization = headers.get("authorization")?;
    let socket = is_socket_read(&request.method(), headers.get("upgrade")?.as_deref());
    if socket {
        let own_origin = web_sys::Url::new(&request.url())?.origin();
        authorization = socket_authorization(
            authorization.as_deref(),
            headers.get("cookie")?.as_deref(),
            headers.get("origin")?.as_deref(),
            &own_origin,
        );
    }
    match chat_stream_route(&request.method(), authorization.as_deref(), raw) {
        ChatStreamRoute::Preflight => preflight(),
        ChatStreamRoute::Refuse(refusal) => diagnostic_result(&refusal),
        ChatStreamRoute::Proxy(read) => {
            let read = Rc::new(read);
            let upstream = (env.clone(), read.clone());
            let fetch = move |inner: Request| {
                let (env, read) = upstream.clone();
                wasm_bindgen_futures::future_to_promise(async move {
                    own_stream_read(&inner, &env, &read)
                        .await
                        .map(JsValue::from)
                })
            };
            let proxy = chat_stream_proxy(&read.stream, None, fetch)?;
            call_handler(&proxy, request).await
        }
    }
}

/// The proxy's upstream: the session's object, directly. A `GET` of a stream no turn has
/// created yet creates it (empty, as a turn's first append would) and reads again, so the
/// reader waits live on it instead of polling a 404.
async fn own_stream_read(
    request: &Request,
    env: &Env,
    read: &SessionStreamRead,
) -> Result<Response, JsValue> {
    let retry = if read.create_missing {
        Some(request.clone()?)
    } else {
        None
    };
    let response = forward(request, env, &read.stream).await;
    let Some(retry) = retry.filter(|_| response.status() == 404) else {
        return Ok(response);
    };
    drop_body(&response).await;
    session_stream_log(env, &read.tenant, &read.session_id)
        .map_err(|e| JsValue::from_str(&e.to_string()))?
        .create(&CancelToken::new())
        .await
        .map_err(|e| JsValue::from_str(&e.to_string()))?;
    Ok(forward(&retry, env, &read.stream).await)
}

async fn drop_body(response: &Response) {
    if let Some(body) = response.body() {
        let _ = JsFuture::from(body.cancel()).await;
    }
}

fn streams_access(env: &Env) -> StreamsAccess {
    StreamsAccess::from_env(
        setting(env, "STREAMS_PUBLIC").as_deref(),
        setting(env, "STREAMS_TOKEN").as_deref(),
    )
}

/// What the Worker builds once per isolate (per `env`): the chat host and the two handlers.
struct Mounts {
    env: Env,
    chat: Rc<DemoChatHost>,
    ask: Function,
    sandbox: Function,
}

thread_local! {
    static MOUNTS: RefCell<Option<Rc<Mounts>>> = const { RefCell::new(None) };
}

fn mounts(env: &Env) -> Result<Rc<Mounts>, JsValue> {
    let cached = MOUNTS.with(|m| m.borrow().clone());
    if let Some(mounts) = cached.filter(|m| js_sys::Object::is(m.env.as_ref(), env.as_ref())) {
        return Ok(mounts);
    }
    let mounts = Rc::new(Mounts {
        env: env.clone(),
        chat: Rc::new(DemoChatHost::new(env.clone())?),
        ask: ask_handler(env)?,
        sandbox: sandbox_handler()?,
    });
    MOUNTS.with(|m| *m.borrow_mut() = Some(mounts.clone()));
    Ok(mounts)
}

/// Which wire a chat route speaks.
enum Wire {
    /// AgentsKit's turn protocol (`POST /api/chat`).
    Turns,
    /// The AI SDK's UI message stream (`/api/ui/chat/*`).
    UiMessages,
}

/// POST /api/chat (a turn, a stop, a decision) and the UI message stream routes: the one chat
/// pipeline with the demo host. The running turn is kept alive past the response.
async fn chat(request: &Request, env: &Env, ctx: &Context, wire: Wire) -> Response {
    let host = match mounts(env) {
        Ok(mounts) => mounts.chat.clone(),
        Err(error) => {
            web_sys::console::error_2(&"the chat host could not be built:".into(), &error);
            return bare_response(500);
        }
    };
    let keep_alive = |running: &Promise| {
        let running = running.clone();
        ctx.wait_until(async move {
            let _ = JsFuture::from(running).await;
        });
    };
    match wire {
        Wire::Turns => crate::web::chat::respond(&*host, request, &keep_alive).await,
        Wire::UiMessages => crate::web::chat::respond_ui(&*host, request, &keep_alive).await,
    }
}

async fn call_handler(handler: &Function, request: &Request) -> Result<Response, JsValue> {
    let promise: Promise = handler.call1(&JsValue::UNDEFINED, request)?.dyn_into()?;
    JsFuture::from(promise).await?.dyn_into()
}

/// GET /api/sessions/:sessionId: `{ messages, session: { cursor, activeTurn, terminalTurns,
/// confirmations }, offset, renderParts, streamMessages, activeRunId }` (storage plus the
/// projection of the session's stream: a client's seed is `streamMessages`, `offset` and
/// `activeRunId`).
async fn session_view(request: &Request, env: &Env, raw: &str) -> Response {
    let authorization = request.headers().get("authorization").ok().flatten();
    let (tenant, session_id) = match session_view_target(authorization.as_deref(), raw) {
        Ok(target) => target,
        Err(refusal) => return diagnostic_response(&refusal),
    };
    match read_view(env, &tenant, &session_id).await {
        Ok(response) => response,
        Err(error) => {
            web_sys::console::error_2(&"GET /api/sessions failed:".into(), &error);
            diagnostic_response(&Diagnostic::session_unreadable())
        }
    }
}

async fn read_view(env: &Env, tenant: &str, session_id: &str) -> Result<Response, JsValue> {
    let port_error = |e: crate::ports::PortError| JsValue::from_str(&e.to_string());
    let log: Rc<dyn SessionLog> =
        Rc::new(session_stream_log(env, tenant, session_id).map_err(port_error)?);
    let (stored, stream) = join(
        read_session_view(env, tenant, session_id),
        resolve_snapshot(log, CancelToken::new()),
    )
    .await;
    let (session, messages) = stored.map_err(port_error)?;
    let stream = stream?;
    let field = |value: &Option<serde_json::Value>, key: &str, empty: serde_json::Value| {
        value
            .as_ref()
            .and_then(|s| s.get(key).cloned())
            .unwrap_or(empty)
    };
    let summary = serde_json::json!({
        "cursor": field(&session, "cursor", 0.into()),
        "activeTurn": field(&session, "activeTurn", serde_json::Value::Null),
        "terminalTurns": field(&session, "terminalTurns", serde_json::json!([])),
        "confirmations": field(&session, "confirmations", serde_json::json!([])),
    });
    let body = js_sys::Object::new();
    let get = |key: &str| js_sys::Reflect::get(&stream, &key.into()).unwrap_or(JsValue::NULL);
    js_sys::Reflect::set(&body, &"messages".into(), &from_json(&messages))?;
    js_sys::Reflect::set(&body, &"session".into(), &from_json(&summary))?;
    js_sys::Reflect::set(&body, &"offset".into(), &get("offset"))?;
    js_sys::Reflect::set(&body, &"renderParts".into(), &get("renderParts"))?;
    js_sys::Reflect::set(&body, &"streamMessages".into(), &get("messages"))?;
    js_sys::Reflect::set(&body, &"activeRunId".into(), &get("activeRunId"))?;
    let text = js_sys::JSON::stringify(&body)?;
    http_respond(200, &text.into(), "application/json; charset=utf-8", &[])
}

/// The streams routes (`/v1/stream/*`), as `streams::route::decide` says; anything else is 404.
async fn streams(request: &Request, env: &Env, path: &str) -> Result<Response, JsValue> {
    let headers = request.headers();
    let (authorization, content_length) = (
        headers.get("authorization")?,
        headers.get("content-length")?,
    );
    let access = streams_access(env);
    let method = request.method();
    let decision = decide(
        &RouteRequest {
            method: &method,
            path,
            authorization: authorization.as_deref(),
            content_length: content_length.as_deref(),
        },
        &access,
    );
    match decision {
        StreamRoute::NotMine => diagnostic_result(&Diagnostic::not_found()),
        StreamRoute::Preflight => preflight(),
        StreamRoute::Refuse(refusal) => {
            if refusal.drain_body {
                drain(request).await;
            }
            Ok(refusal_response(&refusal))
        }
        StreamRoute::Forward { stream } => Ok(forward(request, env, &stream).await),
    }
}

/// Hands the request to the stream's object (which answers with the security headers set), and
/// its response back as it is.
async fn forward(request: &Request, env: &Env, stream: &str) -> Response {
    let answer = async {
        let stub = stub(env, SESSION_STREAM_BINDING, stream)
            .map_err(|e| JsValue::from_str(&e.to_string()))?
            .into_rpc::<StubFetch>();
        JsFuture::from(stub.fetch(request))
            .await?
            .dyn_into::<Response>()
    };
    match answer.await {
        Ok(response) => response,
        Err(error) => {
            web_sys::console::error_2(&"session stream request failed:".into(), &error);
            refusal_response(&Refusal::internal())
        }
    }
}

#[wasm_bindgen]
extern "C" {
    /// A Durable Object stub, seen through its `fetch`.
    type StubFetch;
    #[wasm_bindgen(method)]
    fn fetch(this: &StubFetch, request: &Request) -> Promise;
}

fn preflight() -> Result<Response, JsValue> {
    let reply = super::streams::reply::Reply::new(204).headers(
        PREFLIGHT_HEADERS
            .iter()
            .map(|(name, value)| (*name, (*value).to_owned())),
    );
    reply.into_response(None).map(Response::from)
}

/// A demo diagnostic as a response.
pub fn diagnostic_response(diagnostic: &Diagnostic) -> Response {
    diagnostic_result(diagnostic).unwrap_or_else(|_| bare_response(diagnostic.status))
}

fn diagnostic_result(diagnostic: &Diagnostic) -> Result<Response, JsValue> {
    let extra: Vec<(&str, &str)> = diagnostic
        .headers
        .iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect();
    http_respond(
        diagnostic.status,
        &diagnostic.body().into(),
        "application/json; charset=utf-8",
        &extra,
    )
}
