//! The `SessionStream` Durable Object (workers-rs `#[durable_object]`): one per stream, serving
//! the Durable Streams protocol from its SQLite storage. It performs decisions and makes none:
//! the protocol answers come from [`SessionStreamCore`] (inside one `transactionSync` each, so a
//! write is durable before it is acknowledged: the runtime's output gate holds the response until
//! it is confirmed), and every wait — long-poll, producer-gap retry, SSE keep-alive and
//! lifetime — from the step functions in [`super::timing`]. What is left here is effects: the
//! waiters, the timers, the SSE writer, the live sockets (hibernatable WebSockets, whose rules
//! are in [`super::sockets`]) and the RPC calls to other streams' objects (forks).
//!
//! Env: STREAMS_LONG_POLL_MS (default 20000; the tests use 3000), STREAMS_SSE_MS (how long an
//! SSE response stays open; default and maximum 60000).
//!
//! The Rust struct is `SessionStreamObject`; the Worker entry exports it as `SessionStream`.

use std::cell::RefCell;
use std::rc::Rc;

use futures_channel::mpsc;
use js_sys::{Array, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, Request};
use worker::{
    durable_object, DurableObject, Env, State, WebSocket, WebSocketIncomingMessage, WebSocketPair,
};

use super::object::SessionStreamCore;
use super::query::{query_all, with_offset};
use super::reply::Reply;
use super::route::Refusal;
use super::sockets::{is_socket_read, may_join, SocketEnd, SocketReader};
use super::timing::{
    configured_ms, next_release_hop, AppendStep, GapRetry, LongPoll, ReadStep, Reader,
    ReaderCounts, SseSession, SseStep, Waits, Written,
};
use crate::cloudflare::body::{read_limited, BodyError};
use crate::cloudflare::env::{random_in, setting, stub};
use crate::cloudflare::sql::Sql;
use crate::cloudflare::wait::{now_ms, sleep_until, Waiters};
use crate::core::diagnostics::streams::{BODY_TIMEOUT, READERS_BUSY, WRITERS_BUSY};
use crate::core::limits;
use crate::turn::race::{race, Either};
use crate::turn::serial::{QueueFull, Serial};
use crate::web::js::get;

/// The binding of the `SessionStream` namespace (wrangler.toml).
pub const SESSION_STREAM_BINDING: &str = "SESSION_STREAM";

// `websocket`: fetch plus the hibernation API's socket handlers (webSocketMessage/Close/Error).
#[durable_object(websocket)]
pub struct SessionStreamObject {
    shell: Rc<Shell>,
    #[cfg(feature = "test-hooks")]
    live: crate::cloudflare::test_holds::LiveObject,
}

impl DurableObject for SessionStreamObject {
    fn new(state: State, env: Env) -> Self {
        let storage = state.storage();
        let core = SessionStreamCore::open(&storage).unwrap_or_else(|e| wasm_bindgen::throw_val(e));
        let waits = Waits::from_env(
            setting(&env, "STREAMS_LONG_POLL_MS").as_deref(),
            setting(&env, "STREAMS_SSE_MS").as_deref(),
        );
        let body_ms = configured_ms(
            setting(&env, "STREAMS_BODY_MS").as_deref(),
            limits::STREAM_BODY_READ_MS_DEFAULT,
            limits::STREAM_BODY_READ_MS_MAX,
        );
        let sql = Sql::from_storage(&storage).unwrap_or_else(|m| wasm_bindgen::throw_str(&m));
        let shell = Shell {
            core: Rc::new(RefCell::new(core)),
            sql,
            storage,
            state,
            env,
            waits,
            waiters: Waiters::default(),
            readers: Rc::new(RefCell::new(ReaderCounts::default())),
            exclusive: Serial::new(limits::STREAM_EXCLUSIVE_WAITING_MAX),
            body_ms,
            #[cfg(feature = "test-hooks")]
            counts: Default::default(),
        };
        Self {
            shell: Rc::new(shell),
            #[cfg(feature = "test-hooks")]
            live: crate::cloudflare::test_holds::LiveObject::new(
                crate::cloudflare::test_holds::ObjectKind::SessionStream,
            ),
        }
    }

    async fn fetch(&self, req: worker::Request) -> worker::Result<worker::Response> {
        let request: Request = req.inner().to_owned();
        #[cfg(feature = "test-hooks")]
        if request.method() == "POST" {
            self.shell.count(|c| c.posts += 1);
        }
        let answer = match request.method().as_str() {
            // The body is read before the queue, so a slow one holds no other PUT or DELETE.
            "PUT" | "DELETE" => match self.shell.read_body(&request).await {
                Ok(body) => {
                    let run = self.shell.exclusive.run(self.shell.mutate(&request, body));
                    run.await.unwrap_or_else(|QueueFull| busy(&WRITERS_BUSY))
                }
                Err(answer) => answer,
            },
            "POST" => match self.shell.read_body(&request).await {
                Ok(body) => self.shell.mutate(&request, body).await,
                Err(answer) => answer,
            },
            _ => self.shell.clone().read(&request).await,
        };
        Ok(answer.unwrap_or_else(|error| {
            web_sys::console::error_2(&"SessionStream failed:".into(), &error);
            self.shell.reopen();
            refusal_reply(&Refusal::internal())
                .into_response(None)
                .unwrap_or_else(|_| {
                    worker::Response::empty()
                        .expect("an empty response")
                        .with_status(500)
                })
        }))
    }

    /// A reader sends nothing that matters: the socket only carries the stream's events out.
    async fn websocket_message(
        &self,
        _socket: WebSocket,
        _message: WebSocketIncomingMessage,
    ) -> worker::Result<()> {
        Ok(())
    }

    async fn websocket_close(
        &self,
        socket: WebSocket,
        _code: usize,
        _reason: String,
        _was_clean: bool,
    ) -> worker::Result<()> {
        close_socket(&socket, SocketEnd::ClientLeft);
        Ok(())
    }

    async fn websocket_error(
        &self,
        socket: WebSocket,
        _error: worker::Error,
    ) -> worker::Result<()> {
        close_socket(&socket, SocketEnd::ClientLeft);
        Ok(())
    }
}

/// What the object keeps between requests.
struct Shell {
    core: Rc<RefCell<SessionStreamCore>>,
    sql: Sql,
    storage: worker::Storage,
    /// The hibernation API: the live sockets outlive this instance (`get_websockets`).
    state: State,
    env: Env,
    waits: Waits,
    waiters: Waiters,
    /// Long-polls and SSE responses waiting now (bounded: `timing::Reader::max`).
    readers: Rc<RefCell<ReaderCounts>>,
    exclusive: Serial,
    /// How long a request's body may take to arrive (`STREAMS_BODY_MS`).
    body_ms: u64,
    /// Requests and transactions so far (test builds: `sqlIoForTest`).
    #[cfg(feature = "test-hooks")]
    counts: std::cell::Cell<ShellCounts>,
}

/// What `GET /__test/stream-io/<name>` reports besides the SQL counts: POSTs (appends and
/// closes), storage transactions (one per request step), and those that wrote a row (commits).
#[cfg(feature = "test-hooks")]
#[derive(Clone, Copy, Default)]
struct ShellCounts {
    posts: u64,
    transactions: u64,
    commits: u64,
}

/// A reader's place among the stream's waiting readers, given back when dropped.
struct ReaderPlace {
    counts: Rc<RefCell<ReaderCounts>>,
    kind: Reader,
}

impl ReaderPlace {
    /// A place, or `None` when `kind` is at its bound.
    fn take(counts: &Rc<RefCell<ReaderCounts>>, kind: Reader) -> Option<ReaderPlace> {
        counts.borrow_mut().admit(kind).then(|| ReaderPlace {
            counts: counts.clone(),
            kind,
        })
    }
}

impl Drop for ReaderPlace {
    fn drop(&mut self) {
        self.counts.borrow_mut().leave(self.kind);
    }
}

/// 429 `streams.v1.readers_busy` (the stream has as many waiting readers of this kind as it
/// serves) or `streams.v1.writers_busy` (as many waiting creates and deletes), with `Retry-After`.
fn busy(row: &crate::core::diagnostics::Row) -> Answer {
    Reply::diagnostic(row)
        .header(
            "retry-after",
            limits::STREAM_READERS_BUSY_RETRY_AFTER_SECONDS.to_string(),
        )
        .into_response(None)
}

type Answer = Result<worker::Response, JsValue>;

impl Shell {
    /// Runs `step` on the core inside one storage transaction (a failure rolls all of it back).
    fn transaction<T: 'static>(
        self: &Shell,
        step: impl FnOnce(&mut SessionStreamCore) -> Result<T, JsValue> + 'static,
    ) -> Result<T, JsValue> {
        // The body runs synchronously inside transactionSync: nothing else borrows the core then.
        let core = self.core.clone();
        #[cfg(feature = "test-hooks")]
        let written = self.core.borrow().store.io().rows_written;
        let result = self.sql.transaction(move || step(&mut core.borrow_mut()));
        #[cfg(feature = "test-hooks")]
        {
            let wrote = self.core.borrow().store.io().rows_written > written;
            self.count(|c| {
                c.transactions += 1;
                c.commits += u64::from(wrote);
            });
        }
        result
    }

    /// Updates the test counts.
    #[cfg(feature = "test-hooks")]
    fn count(&self, change: impl FnOnce(&mut ShellCounts)) {
        let mut counts = self.counts.get();
        change(&mut counts);
        self.counts.set(counts);
    }

    /// After a storage failure: drop cached state; storage is the truth.
    fn reopen(&self) {
        if let Ok(core) = SessionStreamCore::open(&self.storage) {
            *self.core.borrow_mut() = core;
        }
    }

    /// The body of a PUT, POST or DELETE, within its size and its time (`body_ms`); `Err` is
    /// the answer instead (413, 408 `streams.v1.body_timeout`, or a failure).
    async fn read_body(&self, request: &Request) -> Result<Vec<u8>, Answer> {
        let read = read_limited(request, limits::STREAM_APPEND_BYTES_MAX);
        match race(read, sleep_until(now_ms() + self.body_ms)).await {
            Either::Left(Ok(body)) => Ok(body),
            Either::Left(Err(BodyError::TooLarge)) => {
                Err(refusal_reply(&Refusal::append_too_large()).into_response(None))
            }
            Either::Left(Err(BodyError::Failed)) => {
                Err(Err(JsValue::from_str("the request body could not be read")))
            }
            Either::Right(()) => Err(Reply::diagnostic(&BODY_TIMEOUT).into_response(None)),
        }
    }

    /// PUT, POST, DELETE, with the request's body.
    async fn mutate(&self, request: &Request, body: Vec<u8>) -> Answer {
        let decide = || {
            let (method, url, headers) = (request.method(), request.url(), request.headers());
            let body = body.clone();
            // No jitter drawn: a write's answer never carries a cursor (only reads do).
            self.transaction(move |core| {
                core.handle(&method, &url, &headers, &body, now_ms(), 0, false)
            })
        };
        let mut reply = decide()?;
        let mut seen = self.waiters.version();
        if let Some(source) = reply.effects.need_source.take() {
            return self.create_fork(request, &body, &source).await;
        }
        let retry = GapRetry::start(now_ms());
        let mut changed = None;
        while let AppendStep::RetryAfterChange { until_ms } =
            retry.step(reply.effects.gap, changed, now_ms())
        {
            let woke = self
                .waiters
                .changed(seen, until_ms, Some(&request.signal()))
                .await;
            if woke {
                reply = decide()?;
                seen = self.waiters.version();
            }
            changed = Some(woke);
        }
        self.answer(reply, None).await
    }

    /// GET and HEAD: catch-up, long-poll, the start of SSE.
    async fn read(self: Rc<Self>, request: &Request) -> Answer {
        let poll = LongPoll::start(now_ms(), self.waits);
        let mut url = request.url();
        let mut place = None;
        loop {
            let waited = poll.expired(now_ms());
            let (method, headers, at) = (request.method(), request.headers(), url.clone());
            // A read writes too, at times: a sliding TTL renews, an expired stream is purged.
            let mut reply = self.transaction(move |core| {
                core.handle(&method, &at, &headers, &[], now_ms(), jitter(), waited)
            })?;
            let seen = self.waiters.version();
            if let Some((offset, _)) = reply.effects.sse.take() {
                let upgrade = request.headers().get("upgrade").ok().flatten();
                if is_socket_read(&request.method(), upgrade.as_deref()) {
                    return self.accept_socket(request, offset).await;
                }
                let Some(place) = ReaderPlace::take(&self.readers, Reader::Sse) else {
                    return busy(&READERS_BUSY);
                };
                return self.clone().sse(request, reply, offset, place);
            }
            match poll.step(reply.effects.wait.take(), request.signal().aborted()) {
                ReadStep::Answer => return self.answer(reply, None).await,
                ReadStep::Abandon => return Reply::new(204).into_response(None),
                ReadStep::Wait { until_ms, offset } => {
                    if place.is_none() {
                        place = ReaderPlace::take(&self.readers, Reader::LongPoll);
                        if place.is_none() {
                            return busy(&READERS_BUSY);
                        }
                    }
                    url = with_offset(&url, &offset);
                    self.waiters
                        .changed(seen, until_ms, Some(&request.signal()))
                        .await;
                }
            }
        }
    }

    /// Finishes a reply: wakes waiters, releases a freed source reference, builds the response.
    async fn answer(&self, reply: Reply, body: Option<web_sys::ReadableStream>) -> Answer {
        if reply.effects.wake {
            self.waiters.wake();
            self.push_sockets().await;
        }
        if let Some(source) = &reply.effects.release_source {
            release_chain(&self.env, source).await;
        }
        reply.into_response(body)
    }

    /// A live read on a hibernatable WebSocket (`super::sockets`): accepted through the
    /// hibernation API, where it reads from kept in its attachment, what is there already sent
    /// at once, and the 101 answer.
    async fn accept_socket(&self, request: &Request, offset: String) -> Answer {
        if !may_join(self.state.get_websockets().len()) {
            return busy(&READERS_BUSY);
        }
        let to_js = |e: worker::Error| JsValue::from_str(&e.to_string());
        let pair = WebSocketPair::new().map_err(to_js)?;
        self.state.accept_web_socket(&pair.server);
        let cursor = query_all(&request.url(), "cursor").into_iter().next();
        pair.server
            .serialize_attachment(SocketReader { offset, cursor })
            .map_err(to_js)?;
        if let Some(source) = self.push(&pair.server, true) {
            release_chain(&self.env, &source).await;
        }
        worker::Response::from_websocket(pair.client).map_err(to_js)
    }

    /// Sends every live socket what follows its offset (after an append, a close, a release).
    async fn push_sockets(&self) {
        for socket in self.state.get_websockets() {
            if let Some(source) = self.push(&socket, false) {
                release_chain(&self.env, &source).await;
            }
        }
    }

    /// Sends `socket` the events after its offset, as many chunks as one push allows, and keeps
    /// its new offset in its attachment. Returns a source reference freed while rendering.
    fn push(&self, socket: &WebSocket, first: bool) -> Option<String> {
        let Ok(Some(mut reader)) = socket.deserialize_attachment::<SocketReader>() else {
            close_socket(socket, SocketEnd::Failed);
            return None;
        };
        let mut released = None;
        let mut control_if_empty = first;
        for _ in 0..limits::STREAM_SOCKET_PUSH_CHUNKS_MAX {
            let (at, cursor) = (reader.offset.clone(), reader.cursor.clone());
            let chunk = self.transaction(move |core| {
                core.sse_chunk(&at, cursor.as_deref(), now_ms(), jitter(), control_if_empty)
            });
            control_if_empty = false;
            let Ok(chunk) = chunk else {
                self.reopen();
                close_socket(socket, SocketEnd::Failed);
                return released;
            };
            released = released.or(chunk.release_source);
            // A send to a socket that is closing fails: its close event tidies it up.
            if !chunk.text.is_empty() && socket.send_with_str(&chunk.text).is_err() {
                return released;
            }
            let advanced = chunk
                .offset
                .as_ref()
                .is_some_and(|next| *next != reader.offset);
            if let Some(next) = chunk.offset {
                reader.offset = next;
                if socket.serialize_attachment(&reader).is_err() {
                    close_socket(socket, SocketEnd::Failed);
                    return released;
                }
            }
            if chunk.done {
                close_socket(socket, SocketEnd::Done);
                return released;
            }
            if !advanced {
                return released;
            }
        }
        close_socket(socket, SocketEnd::Behind);
        released
    }

    /// An SSE response: its headers now, its events from a task that follows the stream (the
    /// steps of [`SseSession`]) until it is done, its time is up or the reader goes away.
    fn sse(
        self: Rc<Self>,
        request: &Request,
        reply: Reply,
        offset: String,
        place: ReaderPlace,
    ) -> Answer {
        // One chunk in flight: a reader that stops reading holds the writer (up to the end time).
        let (sender, receiver) = mpsc::channel::<Result<Vec<u8>, JsValue>>(0);
        let body = stream_body(receiver)?;
        let cursor = query_all(&request.url(), "cursor").into_iter().next();
        let signal = request.signal();
        wasm_bindgen_futures::spawn_local(async move {
            self.pump(sender, offset, cursor, signal).await;
            drop(place); // the SSE response ended
        });
        reply.into_response(Some(body))
    }

    async fn pump(
        &self,
        mut sender: mpsc::Sender<Result<Vec<u8>, JsValue>>,
        mut offset: String,
        cursor: Option<String>,
        signal: AbortSignal,
    ) {
        let (session, mut step) = SseSession::start(now_ms(), self.waits);
        // The version of the last render: a change while the chunk was written is not missed.
        let mut seen = self.waiters.version();
        loop {
            step = match step {
                SseStep::Render { control_if_empty } => {
                    let (at, cursor) = (offset.clone(), cursor.clone());
                    let chunk = self.transaction(move |core| {
                        core.sse_chunk(&at, cursor.as_deref(), now_ms(), jitter(), control_if_empty)
                    });
                    seen = self.waiters.version();
                    match chunk {
                        Err(_) => {
                            self.reopen();
                            SseStep::Abort
                        }
                        Ok(chunk) => {
                            if let Some(source) = &chunk.release_source {
                                release_chain(&self.env, source).await;
                            }
                            let written = if chunk.text.is_empty() {
                                Written::Ok
                            } else {
                                write_until(
                                    &mut sender,
                                    chunk.text.into_bytes(),
                                    session.write_deadline_ms(),
                                )
                                .await
                            };
                            if let Some(next) = chunk.offset {
                                offset = next;
                            }
                            session.after_write(written, chunk.done, signal.aborted(), now_ms())
                        }
                    }
                }
                SseStep::Wait { until_ms } => {
                    let changed = self.waiters.changed(seen, until_ms, Some(&signal)).await;
                    session.after_wait(changed, signal.aborted())
                }
                SseStep::Close => return, // dropping the sender ends the body
                SseStep::Abort => {
                    let _ = sender.try_send(Err(JsValue::from_str("the stream response ended")));
                    return;
                }
            };
        }
    }

    /// A fork PUT: take a reference at the source, decide, copy the inherited rows, commit.
    async fn create_fork(&self, request: &Request, body: &[u8], source_name: &str) -> Answer {
        let source = stream_rpc(&self.env, source_name)?;
        let info = await_js(source.fork_acquire(now_ms() as f64)).await?;
        if let Some(freed) = get(&info, "releaseSource").as_string() {
            release_chain(&self.env, &freed).await;
        }
        let acquired = get(&info, "state").as_string().as_deref() == Some("live");
        let result = self.copy_fork(request, body, &source, &info).await;
        if result.is_err() && acquired {
            release_chain(&self.env, source_name).await;
        }
        result
    }

    async fn copy_fork(
        &self,
        request: &Request,
        body: &[u8],
        source: &SessionStreamRpc,
        info: &JsValue,
    ) -> Answer {
        let step = |sub_row: JsValue, commit: bool| {
            let (url, headers, body, info) = (
                request.url(),
                request.headers(),
                body.to_vec(),
                info.clone(),
            );
            self.transaction(move |core| {
                core.put_fork(&url, &headers, &body, info, sub_row, commit, now_ms())
            })
        };
        let mut plan = step(JsValue::NULL, false)?;
        let Some((upto, with_sub_row)) = plan.effects.copy_upto.take() else {
            return self.answer(plan, None).await;
        };
        let mut from = 0u64;
        while from < upto {
            let rows: Array = await_js(source.export_rows(from as f64, upto as f64))
                .await?
                .dyn_into()?;
            let Some(last) = rows.iter().last() else {
                break;
            };
            from = get(&last, "end").as_f64().unwrap_or(upto as f64) as u64;
            self.transaction(move |core| core.import_rows(rows))?;
        }
        let sub_row = if with_sub_row {
            await_js(source.row_starting_at(upto as f64)).await?
        } else {
            JsValue::NULL
        };
        let reply = step(sub_row, true)?;
        self.answer(reply, None).await
    }
}

/// The RPC methods other streams' objects call (forks; see `fork.rs`).
#[wasm_bindgen]
impl SessionStreamObject {
    #[wasm_bindgen(js_name = forkAcquire)]
    pub fn fork_acquire(&self, now_ms: f64) -> Result<JsValue, JsValue> {
        self.shell
            .transaction(move |core| core.fork_acquire(now_ms))
    }

    #[wasm_bindgen(js_name = forkRelease)]
    pub fn fork_release(&self) -> Result<JsValue, JsValue> {
        let next = self.shell.transaction(|core| core.fork_release())?;
        self.shell.waiters.wake();
        let shell = self.shell.clone();
        wasm_bindgen_futures::spawn_local(async move { shell.push_sockets().await });
        Ok(next.map_or(JsValue::NULL, JsValue::from))
    }

    #[wasm_bindgen(js_name = exportRows)]
    pub fn export_rows(&self, from: f64, upto: f64) -> Result<Array, JsValue> {
        self.shell.core.borrow().export_rows(from, upto)
    }

    #[wasm_bindgen(js_name = rowStartingAt)]
    pub fn row_starting_at(&self, start: f64) -> Result<JsValue, JsValue> {
        self.shell.core.borrow().row_starting_at(start)
    }

    /// `{ statements, rowsRead, rowsWritten, posts, transactions, commits }` of this object so
    /// far, as JSON (test builds; the Worker's `GET /__test/stream-io/<name>` asks for it).
    #[cfg(feature = "test-hooks")]
    #[wasm_bindgen(js_name = sqlIoForTest)]
    pub fn sql_io_for_test(&self) -> String {
        let io = self.shell.core.borrow().store.io();
        let counts = self.shell.counts.get();
        serde_json::json!({
            "statements": io.statements,
            "rowsRead": io.rows_read,
            "rowsWritten": io.rows_written,
            "posts": counts.posts,
            "transactions": counts.transactions,
            "commits": counts.commits,
        })
        .to_string()
    }
}

/// The test hooks' view of one instance (test builds): its in-memory marker and its live sockets.
#[cfg(feature = "test-hooks")]
#[wasm_bindgen]
impl SessionStreamObject {
    /// `{ marker, constructed, sockets }` as JSON: the random marker this instance drew when it
    /// was built (a new one means the runtime dropped the old instance: its memory is gone), how
    /// many `SessionStream` instances the isolate has built, and the sockets the runtime holds.
    #[wasm_bindgen(js_name = instanceForTest)]
    pub fn instance_for_test(&self) -> String {
        use crate::cloudflare::test_holds::{constructed, ObjectKind};
        serde_json::json!({
            "marker": self.live.marker,
            "constructed": constructed(ObjectKind::SessionStream),
            "sockets": self.shell.state.get_websockets().len(),
        })
        .to_string()
    }
}

#[wasm_bindgen]
extern "C" {
    /// A `SessionStream` stub, seen through the RPC methods above.
    #[wasm_bindgen(extends = js_sys::Object)]
    pub type SessionStreamRpc;
    #[wasm_bindgen(method, js_name = forkAcquire)]
    fn fork_acquire(this: &SessionStreamRpc, now_ms: f64) -> Promise;
    #[wasm_bindgen(method, js_name = forkRelease)]
    fn fork_release(this: &SessionStreamRpc) -> Promise;
    #[wasm_bindgen(method, js_name = exportRows)]
    fn export_rows(this: &SessionStreamRpc, from: f64, upto: f64) -> Promise;
    #[wasm_bindgen(method, js_name = rowStartingAt)]
    fn row_starting_at(this: &SessionStreamRpc, start: f64) -> Promise;
    #[cfg(feature = "test-hooks")]
    #[wasm_bindgen(method, js_name = sqlIoForTest)]
    fn sql_io_for_test(this: &SessionStreamRpc) -> Promise;
    #[cfg(feature = "test-hooks")]
    #[wasm_bindgen(method, js_name = instanceForTest)]
    fn instance_for_test(this: &SessionStreamRpc) -> Promise;
}

/// `GET /__test/stream-instance/<name>` (test builds, `TEST_HOOKS=1`): the stream object's
/// marker, constructions and sockets (`SessionStreamObject::instance_for_test`). Asking wakes it.
#[cfg(feature = "test-hooks")]
pub async fn instance_of(env: &Env, name: &str) -> Result<JsValue, JsValue> {
    await_js(stream_rpc(env, name)?.instance_for_test()).await
}

/// `GET /__test/stream-io/<name>` (test builds, `TEST_HOOKS=1`): the SQL counts of the stream's
/// object, as JSON (`SessionStreamObject::sql_io_for_test`).
#[cfg(feature = "test-hooks")]
pub async fn sql_io_of(env: &Env, name: &str) -> Result<JsValue, JsValue> {
    await_js(stream_rpc(env, name)?.sql_io_for_test()).await
}

fn stream_rpc(env: &Env, name: &str) -> Result<SessionStreamRpc, JsValue> {
    Ok(stub(env, SESSION_STREAM_BINDING, name)?.into_rpc::<SessionStreamRpc>())
}

async fn await_js(promise: Promise) -> Result<JsValue, JsValue> {
    JsFuture::from(promise).await
}

/// Releases one fork reference at `name`, and on up the chain while sources get purged. A
/// failure is logged, not returned: the request that freed the reference has already
/// committed, and a reference left behind only keeps a deleted source reserved (410) longer.
async fn release_chain(env: &Env, name: &str) {
    let mut next = Some(name.to_owned());
    let mut hops = 0;
    while let Some(name) = next.take() {
        hops += 1;
        let released = match stream_rpc(env, &name) {
            Ok(stub) => await_js(stub.fork_release()).await,
            Err(error) => Err(error),
        };
        match released {
            Ok(value) => {
                next = next_release_hop(hops, value.as_string());
                if next.is_none() && value.as_string().is_some() {
                    web_sys::console::error_1(
                        &format!("fork release stopped after {hops} hops at {name}").into(),
                    );
                }
            }
            Err(error) => {
                web_sys::console::error_2(
                    &format!("releasing a fork reference at {name} failed:").into(),
                    &error,
                );
            }
        }
    }
}

/// Writes one chunk, giving up at `deadline_ms` (a reader that stopped reading must not pin us).
async fn write_until(
    sender: &mut mpsc::Sender<Result<Vec<u8>, JsValue>>,
    bytes: Vec<u8>,
    deadline_ms: u64,
) -> Written {
    use futures_util_sink::send;
    match race(send(sender, Ok(bytes)), sleep_until(deadline_ms)).await {
        Either::Left(true) => Written::Ok,
        _ => Written::Failed,
    }
}

/// A minimal `SinkExt::send` for one mpsc sender (no futures-util dependency for one call).
mod futures_util_sink {
    use std::future::poll_fn;

    use futures_channel::mpsc::Sender;

    /// Resolves true once the item is queued, false when the receiver is gone.
    pub async fn send<T>(sender: &mut Sender<T>, item: T) -> bool {
        if poll_fn(|cx| sender.poll_ready(cx)).await.is_err() {
            return false;
        }
        sender.start_send(item).is_ok()
    }
}

/// A ReadableStream fed from the receiver (an `Err` item errors the stream).
fn stream_body(
    receiver: mpsc::Receiver<Result<Vec<u8>, JsValue>>,
) -> Result<web_sys::ReadableStream, JsValue> {
    let response =
        worker::Response::from_stream(receiver).map_err(|e| JsValue::from_str(&e.to_string()))?;
    match response.into_parts().1 {
        worker::ResponseBody::Stream(stream) => Ok(stream),
        _ => Err(JsValue::from_str("the SSE body is not a stream")),
    }
}

/// Seconds of jitter for a cursor the client already holds (Durable Streams protocol §10.1).
fn jitter() -> u32 {
    random_in(
        limits::STREAM_CURSOR_JITTER_SECONDS_MIN,
        limits::STREAM_CURSOR_JITTER_SECONDS_MAX,
    )
}

/// Closes `socket` with `end`'s frame (a socket already closed refuses: nothing is left to do).
fn close_socket(socket: &WebSocket, end: SocketEnd) {
    let (code, reason) = end.frame();
    let _ = socket.close(Some(code), Some(reason));
}

/// A refusal as a reply (a versioned streams diagnostic).
pub fn refusal_reply(refusal: &Refusal) -> Reply {
    let mut reply = Reply::new(refusal.status)
        .header("content-type", "application/json")
        .body(refusal.body().into_bytes());
    for (name, value) in &refusal.headers {
        reply = reply.header(name, *value);
    }
    reply
}

/// A refusal as a web response, with the security headers.
pub fn refusal_response(refusal: &Refusal) -> web_sys::Response {
    refusal_reply(refusal)
        .into_response(None)
        .map(web_sys::Response::from)
        .unwrap_or_else(|_| crate::web::http::bare_response(refusal.status))
}
