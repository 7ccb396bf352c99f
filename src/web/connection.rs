//! `ChatConnectionCore`: the live connection's decisions (`core::connection`) for the JS shell
//! `js/client/connection.mjs` (`createChatConnection`), which owns the fetches, timers and reader
//! queues and performs the actions returned here. This layer reads the options once, builds
//! the read URLs and the posted bodies, and turns actions and failures into plain JS values.
//!
//! Actions, as JS objects:
//! `{ type: 'connect', generation, url, socketUrl? }` (`socketUrl`: read over a WebSocket
//! carrying the same SSE events; on a socket that fails to open the shell calls `socketFailed`),
//! `{ type: 'abort', generation }`,
//! `{ type: 'wait', generation, delayMs }`, `{ type: 'deliver', readers, chunks }`,
//! `{ type: 'end', readers, error? }` (`error`: a versioned diagnostic, plus `status` when the
//! server refused the read).

use js_sys::{Array, Object};
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::Url;

use crate::core::checks::is_safe_id;
use crate::core::connection::target::{
    as_directory, session_paths, socket_url, transport, Transport,
};
use crate::core::connection::turn::{post_failure, send_input_of, stop_body, submit_body, PostIds};
use crate::core::connection::{Action, Connection, ReadOffset};
use crate::core::diagnostics::chat;
use crate::core::projection::Projection;
use crate::core::protocol::TurnDiagnostic;
use crate::web::convert::{from_json, js_error, to_json};
use crate::web::js::{get, set};
use crate::web::projection::{identity_of, mismatch_error, projection_from, snapshot_of};

/// Where a connection starts: the `initial*` options, or a whole seed's fields.
struct Initial {
    messages: JsValue,
    offset: JsValue,
    run: JsValue,
    confirmations: JsValue,
    in_flight: JsValue,
}

impl Initial {
    fn options(options: &JsValue) -> Self {
        Initial {
            messages: get(options, "initialMessages"),
            offset: get(options, "initialOffset"),
            run: get(options, "initialRunId"),
            confirmations: JsValue::UNDEFINED,
            in_flight: JsValue::UNDEFINED,
        }
    }

    /// A seed: `messages`, `offset`, `activeRunId`, `confirmations`, `inFlight`.
    fn seed(seed: &JsValue) -> Self {
        Initial {
            messages: get(seed, "messages"),
            offset: get(seed, "offset"),
            run: get(seed, "activeRunId"),
            confirmations: get(seed, "confirmations"),
            in_flight: get(seed, "inFlight"),
        }
    }
}

impl Initial {
    /// Where the read starts and the replay state it starts with.
    fn start(&self) -> Result<(ReadOffset, Projection), JsValue> {
        let offset = if self.offset.is_undefined() || self.offset.is_null() {
            ReadOffset::Start
        } else {
            let text = self
                .offset
                .as_string()
                .ok_or_else(|| invalid("initialOffset must be a string"))?;
            ReadOffset::parse(Some(&text)).map_err(|m| invalid(&format!("initialOffset: {m}")))?
        };
        let run = &self.run;
        if !(run.is_undefined() || run.is_null() || run.as_string().is_some_and(|r| is_safe_id(&r)))
        {
            return Err(invalid(
                "initialRunId must be a SafeId (a seed's activeRunId)",
            ));
        }
        let mut replay =
            projection_from(&self.messages, run.as_string().as_deref()).map_err(|m| invalid(&m))?;
        for (value, apply) in [
            (
                &self.confirmations,
                Projection::with_confirmations as fn(Projection, &Value) -> Projection,
            ),
            (&self.in_flight, Projection::with_in_flight),
        ] {
            if !(value.is_undefined() || value.is_null()) {
                let known = to_json(value).map_err(|m| invalid(&format!("seed: {m}")))?;
                replay = apply(replay, &known);
            }
        }
        Ok((offset, replay))
    }
}

/// `(read URL, chat URL, session id)` of `options.target`.
fn urls_of(
    options: &JsValue,
    base: Option<&str>,
) -> Result<(String, Option<String>, Option<String>), JsValue> {
    let target = get(options, "target");
    if target.is_string() {
        return Ok((http_url(&target, base, "target")?, None, None));
    }
    if !target.is_object() {
        return Err(invalid(
            "target is required: the session stream's URL, { url, chatUrl?, sessionId? }, or { sessionId, baseUrl? }",
        ));
    }
    let session_id = optional_session_id(&target)?;
    let url = get(&target, "url");
    let chat = get(&target, "chatUrl");
    let chat_url = if chat.is_undefined() {
        None
    } else {
        Some(http_url(&chat, base, "target.chatUrl")?)
    };
    if !url.is_undefined() {
        return Ok((http_url(&url, base, "target.url")?, chat_url, session_id));
    }
    // The seed's { sessionId, baseUrl? }: the session's routes, for someone `authorize` vouches for.
    let Some(id) = session_id.as_deref() else {
        return Err(invalid(
            "target needs url, or sessionId (the seed's { sessionId, baseUrl?, headers? })",
        ));
    };
    let authorize = get(options, "authorize");
    if !(authorize.is_function() || authorize == JsValue::FALSE) {
        return Err(invalid("authorize is required with target { sessionId }: (request, sessionId) => boolean, or false where the server authorizes every request"));
    }
    let root = session_base(&get(&target, "baseUrl"), base)?;
    let (stream_path, chat_path) = session_paths(id);
    let resolve = |path: &str, what| http_url(&JsValue::from_str(path), Some(&root), what);
    let chat_url = match chat_url {
        Some(url) => url,
        None => resolve(chat_path, "target.chatUrl")?,
    };
    Ok((
        resolve(&stream_path, "target.sessionId")?,
        Some(chat_url),
        session_id,
    ))
}

fn optional_session_id(target: &JsValue) -> Result<Option<String>, JsValue> {
    let id = get(target, "sessionId");
    if id.is_undefined() {
        return Ok(None);
    }
    id.as_string()
        .filter(|s| is_safe_id(s))
        .map(Some)
        .ok_or_else(|| invalid("target.sessionId must be a SafeId"))
}

/// The base a `{ sessionId }` target's routes live under: `target.baseUrl` (relative to the
/// page), else the page's origin; always with a trailing `/`.
fn session_base(base_url: &JsValue, page: Option<&str>) -> Result<String, JsValue> {
    let root = if base_url.is_undefined() {
        let page =
            page.ok_or_else(|| invalid("target { sessionId } needs baseUrl outside a page"))?;
        Url::new(page)
            .map_err(|_| invalid("the page's location is not a URL"))?
            .origin()
    } else {
        http_url(base_url, page, "target.baseUrl")?
    };
    Ok(as_directory(&root))
}

/// The connection of one `createChatConnection`.
#[wasm_bindgen(js_name = ChatConnectionCore)]
pub struct ChatConnectionCore {
    machine: Connection,
    read_url: String,
    chat_url: Option<String>,
    session_id: Option<String>,
    definition_revision: Option<u64>,
    /// The host offered WebSockets (`webSocket`); a socket of this connection failed to open.
    sockets_offered: bool,
    socket_refused: bool,
    /// The last read asked for: `(generation, offset, cursor)` (a refused socket reads it by SSE).
    last_connect: Option<(u64, ReadOffset, Option<String>)>,
}

fn invalid(detail: &str) -> JsValue {
    js_error(&format!("createChatConnection: {detail}"))
}

/// An absolute http(s) URL: `value` as it is, or resolved against `base` (a page's location).
fn http_url(value: &JsValue, base: Option<&str>, what: &str) -> Result<String, JsValue> {
    let text = value
        .as_string()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid(&format!("{what} must be a URL string")))?;
    let url = match base {
        Some(base) => Url::new_with_base(&text, base),
        None => Url::new(&text),
    }
    .map_err(|_| {
        invalid(&format!(
            "{what} must be an absolute http(s) URL (or relative, in a page)"
        ))
    })?;
    if url.protocol() != "http:" && url.protocol() != "https:" {
        return Err(invalid(&format!("{what} must be an http(s) URL")));
    }
    Ok(url.href())
}

#[wasm_bindgen(js_class = ChatConnectionCore)]
impl ChatConnectionCore {
    /// `options`: `{ target, seed?, initialMessages?, initialOffset?, initialRunId?,
    /// definitionRevision?, authorize? }`, `target` a URL string, `{ url, chatUrl?, sessionId? }`,
    /// or the seed's `{ sessionId, baseUrl?, chatUrl? }` (the session's routes under `baseUrl`,
    /// `core::connection::target`; `authorize` required with it: a function, or `false`).
    /// `seed`: a whole seed (`resolveChatSnapshot`'s answer), in place of the `initial*` options.
    /// `baseUrl`: what relative URLs resolve against (the page's location), or undefined.
    /// `seed`: the jitter generator's seed.
    #[wasm_bindgen(constructor)]
    pub fn new(
        options: JsValue,
        base_url: Option<String>,
        seed: f64,
    ) -> Result<ChatConnectionCore, JsValue> {
        if !options.is_object() {
            return Err(invalid("options must be an object"));
        }
        let (read_url, chat_url, session_id) = urls_of(&options, base_url.as_deref())?;
        let auth = get(&options, "authorize");
        if !(auth.is_undefined() || auth.is_function() || auth == JsValue::FALSE) {
            return Err(invalid(
                "authorize must be (request, sessionId) => boolean, or false",
            ));
        }
        let mut prepared = identity_of(&options, "createChatConnection")?;
        prepared.session_id.clone_from(&session_id);
        let given = get(&options, "seed");
        let from = if given.is_undefined() || given.is_null() {
            Initial::options(&options)
        } else {
            let value = to_json(&given).map_err(|m| invalid(&format!("seed: {m}")))?;
            prepared.check(&value).map_err(mismatch_error)?;
            Initial::seed(&given)
        };
        let (offset, replay) = from.start()?;
        let seed = if seed.is_finite() {
            seed.abs() as u64
        } else {
            0
        };
        let definition_revision = prepared.definition_revision;
        let socket = get(&options, "webSocket");
        if !(socket.is_undefined() || socket.is_function() || socket.as_bool().is_some()) {
            return Err(invalid(
                "webSocket must be true (the global WebSocket), false, or (url, headers) => WebSocket",
            ));
        }
        Ok(ChatConnectionCore {
            machine: Connection::new(offset, replay, seed).with_identity(prepared),
            read_url,
            chat_url,
            session_id,
            definition_revision,
            sockets_offered: socket.is_function() || socket == JsValue::TRUE,
            socket_refused: false,
            last_connect: None,
        })
    }

    /// The socket of `generation` closed before it opened: this read, and every later one, goes
    /// by SSE (`core::connection::target::transport`). Returns the actions (the SSE read).
    #[wasm_bindgen(js_name = socketFailed)]
    pub fn socket_failed(&mut self, generation: f64) -> Array {
        self.socket_refused = true;
        let generation = generation as u64;
        let actions = match &self.last_connect {
            Some((last, offset, cursor)) if *last == generation => vec![Action::Connect {
                generation,
                offset: offset.clone(),
                cursor: cursor.clone(),
            }],
            _ => Vec::new(), // an older read: the machine has moved on
        };
        self.actions(actions)
    }

    /// The diagnostic of a request `authorize` refused (`SESSION_FORBIDDEN`, status 403): the
    /// request was not sent.
    #[wasm_bindgen(js_name = forbidden)]
    pub fn forbidden(&self) -> JsValue {
        from_json(&diagnostic_json(
            &chat::FORBIDDEN.diagnostic(),
            Some(chat::FORBIDDEN.status),
        ))
    }

    /// A new reader: `{ reader, actions }`.
    pub fn subscribe(&mut self) -> JsValue {
        let (reader, actions) = self.machine.subscribe();
        let out = Object::new();
        set(&out, "reader", reader as f64);
        set(&out, "actions", self.actions(actions));
        out.into()
    }

    pub fn cancel(&mut self, reader: f64) -> Array {
        let actions = self.machine.cancel(reader as u64);
        self.actions(actions)
    }

    pub fn dispose(&mut self) -> Array {
        let actions = self.machine.dispose();
        self.actions(actions)
    }

    /// A reader took `count` delivered chunks.
    pub fn took(&mut self, reader: f64, count: u32) {
        self.machine.took(reader as u64, count as usize);
    }

    /// The read of `generation` answered.
    pub fn response(
        &mut self,
        generation: f64,
        status: u16,
        content_type: Option<String>,
        now_ms: f64,
    ) -> Array {
        let stream = crate::core::connection::wire::is_event_stream(content_type.as_deref());
        let actions = self
            .machine
            .response(generation as u64, status, stream, ms(now_ms));
        self.actions(actions)
    }

    /// Bytes of the read of `generation` arrived.
    pub fn body(&mut self, generation: f64, bytes: &[u8]) -> Array {
        let actions = self.machine.body(generation as u64, bytes);
        self.actions(actions)
    }

    /// The read of `generation` ended (its body finished, or the fetch or the body failed).
    pub fn ended(&mut self, generation: f64, now_ms: f64) -> Array {
        let actions = self.machine.ended(generation as u64, ms(now_ms));
        self.actions(actions)
    }

    /// The timer of `generation` fired.
    pub fn timer(&mut self, generation: f64) -> Array {
        let actions = self.machine.timer_fired(generation as u64);
        self.actions(actions)
    }

    /// A turn was accepted: the stream exists now.
    pub fn nudge(&mut self) -> Array {
        let actions = self.machine.nudge();
        self.actions(actions)
    }

    /// `{ messages, renderParts, nativeMessages, confirmations, activeRunId, inFlight, offset }`
    /// (plus the `sessionId` and `definitionRevision` it was prepared for): the replay state (the
    /// initial messages and every chunk delivered, projected) and the transport cursor — a seed
    /// `new ChatProjection(snapshot)` continues from.
    pub fn snapshot(&self) -> JsValue {
        let out = snapshot_of(self.machine.replay());
        if let Some(id) = &self.session_id {
            set(&out, "sessionId", id.as_str());
        }
        if let Some(revision) = self.definition_revision {
            set(&out, "definitionRevision", revision as f64);
        }
        set(
            &out,
            "offset",
            self.offset().map_or(JsValue::NULL, JsValue::from),
        );
        out.into()
    }

    /// The transport cursor: the offset the next read starts after (`null` at the start).
    #[wasm_bindgen(getter)]
    pub fn offset(&self) -> Option<String> {
        match self.machine.offset() {
            ReadOffset::After(offset) => Some(offset.clone()),
            ReadOffset::Start | ReadOffset::Now => None,
        }
    }

    #[wasm_bindgen(getter)]
    pub fn readers(&self) -> u32 {
        self.machine.reader_count() as u32
    }

    #[wasm_bindgen(getter)]
    pub fn disposed(&self) -> bool {
        self.machine.is_disposed()
    }

    #[wasm_bindgen(getter, js_name = chatUrl)]
    pub fn chat_url(&self) -> Option<String> {
        self.chat_url.clone()
    }

    #[wasm_bindgen(getter, js_name = sessionId)]
    pub fn session_id(&self) -> Option<String> {
        self.session_id.clone()
    }

    /// The diagnostic a refused post (`send`, `stopTurn`) rejects with: the endpoint's own
    /// versioned diagnostic, or `CHAT_POST_FAILED`; plus `status`.
    #[wasm_bindgen(js_name = postFailure)]
    pub fn post_failure(&self, status: u16, body: &str) -> JsValue {
        let (diagnostic, status) = post_failure(status, body);
        from_json(&diagnostic_json(&diagnostic, Some(status)))
    }

    /// The `client.turn.submit` body for `messages` (a string, or messages whose last user
    /// message has text, posted whole). Throws when there is nothing to send or no `chatUrl`/`sessionId`.
    #[wasm_bindgen(js_name = submitBody)]
    pub fn submit_body(
        &self,
        messages: JsValue,
        turn_id: &str,
        event_id: &str,
        now_ms: f64,
    ) -> Result<String, JsValue> {
        let session_id = self.sender()?;
        let value = if let Some(text) = messages.as_string() {
            Value::String(text)
        } else {
            to_json(&messages).map_err(|m| invalid(&format!("send: {m}")))?
        };
        let send = send_input_of(&value).map_err(|m| invalid(&format!("send: {m}")))?;
        submit_body(&ids(session_id, turn_id, event_id, now_ms), &send)
            .map_err(|m| invalid(&format!("send: {m}")))
    }

    /// The `client.turn.stop` body for the running turn `turnId`.
    #[wasm_bindgen(js_name = stopBody)]
    pub fn stop_body(&self, turn_id: &str, event_id: &str, now_ms: f64) -> Result<String, JsValue> {
        let session_id = self.sender()?;
        stop_body(&ids(session_id, turn_id, event_id, now_ms))
            .map_err(|m| invalid(&format!("stopTurn: {m}")))
    }
}

impl ChatConnectionCore {
    fn sender(&self) -> Result<&str, JsValue> {
        if self.machine.is_disposed() {
            return Err(invalid("the connection is disposed"));
        }
        match (&self.chat_url, &self.session_id) {
            (Some(_), Some(id)) => Ok(id),
            _ => Err(invalid("sending needs target.chatUrl and target.sessionId")),
        }
    }

    fn read_url(&self, offset: &ReadOffset, cursor: Option<&str>) -> String {
        let Ok(url) = Url::new(&self.read_url) else {
            return self.read_url.clone(); // checked at construction
        };
        let params = url.search_params();
        params.set("offset", offset.query_value());
        params.set("live", "sse");
        match cursor {
            Some(cursor) => params.set("cursor", cursor),
            None => params.delete("cursor"),
        }
        url.href()
    }

    /// The actions as JS values, built as one JSON text and parsed once by the host (far fewer
    /// boundary crossings than setting each field: a body piece can carry dozens of chunks).
    fn actions(&mut self, actions: Vec<Action>) -> Array {
        for action in &actions {
            if let Action::Connect {
                generation,
                offset,
                cursor,
            } = action
            {
                self.last_connect = Some((*generation, offset.clone(), cursor.clone()));
            }
        }
        let list: Vec<Value> = actions.into_iter().map(|a| self.action(a)).collect();
        from_json(&Value::Array(list)).unchecked_into()
    }

    fn action(&self, action: Action) -> Value {
        match action {
            Action::Connect {
                generation,
                offset,
                cursor,
            } => {
                let url = self.read_url(&offset, cursor.as_deref());
                let mut connect = json!({ "type": "connect", "generation": generation });
                if transport(self.sockets_offered, self.socket_refused) == Transport::Socket {
                    connect["socketUrl"] = socket_url(&url).map_or(Value::Null, Value::String);
                }
                connect["url"] = Value::String(url);
                connect
            }
            Action::Abort { generation } => json!({ "type": "abort", "generation": generation }),
            Action::Wait {
                generation,
                delay_ms,
            } => json!({ "type": "wait", "generation": generation, "delayMs": delay_ms }),
            Action::Deliver { readers, chunks } => {
                json!({ "type": "deliver", "readers": readers, "chunks": chunks })
            }
            Action::End { readers, failure } => {
                let mut end = json!({ "type": "end", "readers": readers });
                if let Some(failure) = failure {
                    end["error"] = diagnostic_json(&failure.diagnostic(), failure.status());
                }
                end
            }
        }
    }
}

/// `{ version: 1, code, message, retryable, status? }`.
fn diagnostic_json(diagnostic: &TurnDiagnostic, status: Option<u16>) -> Value {
    let mut out = json!({
        "version": 1,
        "code": diagnostic.code,
        "message": diagnostic.message,
        "retryable": diagnostic.retryable,
    });
    if let Some(status) = status {
        out["status"] = json!(status);
    }
    out
}

fn ids<'a>(session_id: &'a str, turn_id: &'a str, event_id: &'a str, now_ms: f64) -> PostIds<'a> {
    PostIds {
        event_id,
        session_id,
        turn_id,
        now_ms: ms(now_ms),
    }
}

fn ms(value: f64) -> u64 {
    if value.is_finite() && value > 0.0 {
        value as u64
    } else {
        0
    }
}
