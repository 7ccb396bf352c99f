//! `SessionStreamCore`: the Rust half of one `SessionStream` Durable Object. The JS class builds
//! one per object instance with `new SessionStreamCore(ctx.storage)` and passes each request in
//! with `handle`; every answer is a plain object (see `reply::Reply::into_js`).

use wasm_bindgen::prelude::*;
use web_sys::Headers;

use super::reply::Reply;
use super::request::Req;
use super::store::Store;
use crate::cloudflare::sql::Sql;

/// One stream's state and storage.
#[wasm_bindgen]
pub struct SessionStreamCore {
    pub(super) store: Store,
    /// A source reference freed while answering (the stream expired or was deleted); handed to
    /// the shell with the next reply so it can release it at the source.
    pub(super) pending_release: Option<String>,
}

/// Where the stream stands before a request is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    Absent,
    /// Soft-deleted: deleted or expired while forks exist (410).
    Gone,
    Live,
}

/// Inputs every handler needs.
pub(super) struct Ctx<'a> {
    pub req: Req<'a>,
    pub now_ms: u64,
    pub jitter_seconds: u32,
}

#[wasm_bindgen]
impl SessionStreamCore {
    /// Opens (and if needed creates) the stream's tables in `ctx.storage`.
    #[wasm_bindgen(constructor)]
    pub fn new(storage: JsValue) -> Result<SessionStreamCore, JsValue> {
        let sql = Sql::from_storage(&storage).map_err(|m| {
            JsValue::from(js_sys::Error::new(&format!("new SessionStreamCore: {m}")))
        })?;
        let store = Store::open(sql)?;
        Ok(SessionStreamCore {
            store,
            pending_release: None,
        })
    }

    /// Serves one request to `/v1/stream/<name>`. `waited` is true when a long-poll has already
    /// waited out its time (answer 204 instead of asking to wait again). Throws only when storage
    /// fails; the shell then answers 500 and rebuilds this object from storage.
    #[allow(clippy::too_many_arguments)]
    pub fn handle(
        &mut self,
        method: &str,
        url: &str,
        headers: &Headers,
        body: &[u8],
        now_ms: f64,
        jitter_seconds: u32,
        waited: bool,
    ) -> Result<JsValue, JsValue> {
        let ctx = Ctx {
            req: Req { url, headers },
            now_ms: now_ms.max(0.0) as u64,
            jitter_seconds,
        };
        let reply = match method {
            "PUT" => self.put(&ctx, body)?,
            "POST" => self.post(&ctx, body)?,
            "GET" => self.get(&ctx, waited)?,
            "HEAD" => self.head(&ctx)?,
            "DELETE" => self.delete(&ctx)?,
            _ => Reply::diagnostic(405, "streams.v1.method_not_allowed", "method not allowed")
                .header("allow", "GET, HEAD, POST, PUT, DELETE, OPTIONS"),
        };
        Ok(self.finish(reply))
    }

    /// The current tail offset, or `undefined` when the stream does not exist: lets the shell
    /// tell whether a woken waiter has anything new.
    #[wasm_bindgen(js_name = tailOffset)]
    pub fn tail_offset(&self) -> Option<String> {
        self.store
            .meta
            .as_ref()
            .map(|m| m.tail_offset().to_string())
    }
}

impl SessionStreamCore {
    /// Attaches any pending source release to the reply and converts it.
    pub(super) fn finish(&mut self, mut reply: Reply) -> JsValue {
        if let Some(source) = self.pending_release.take() {
            reply.effects.release_source = Some(source);
        }
        reply.into_js()
    }

    /// The stream's state at `now_ms`, applying expiry: an expired stream with forks becomes
    /// soft-deleted; one without is purged (and releases its own source).
    pub(super) fn state(&mut self, now_ms: u64) -> Result<State, JsValue> {
        let Some(meta) = &mut self.store.meta else {
            return Ok(State::Absent);
        };
        if meta.soft_deleted {
            return Ok(State::Gone);
        }
        if !meta.lifetime().is_expired(now_ms) {
            return Ok(State::Live);
        }
        if meta.fork_refs > 0 {
            meta.soft_deleted = true;
            self.store.save_meta()?;
            return Ok(State::Gone);
        }
        self.purge()?;
        Ok(State::Absent)
    }

    /// Deletes the stream for good, remembering to release its source.
    pub(super) fn purge(&mut self) -> Result<(), JsValue> {
        let source = self
            .store
            .meta
            .as_ref()
            .and_then(|m| m.forked_from.as_deref().map(super::query::source_name));
        self.store.purge()?;
        if let Some(source) = source {
            self.pending_release = Some(source);
        }
        Ok(())
    }

    /// A read or write renews a sliding TTL (protocol §4); HEAD does not.
    pub(super) fn touch(&mut self, now_ms: u64) -> Result<(), JsValue> {
        let Some(meta) = &mut self.store.meta else {
            return Ok(());
        };
        if !matches!(meta.expiry, super::store::StoredExpiry::Ttl { .. }) {
            return Ok(());
        }
        let touched = meta
            .lifetime()
            .touched(crate::core::streams::ttl::Access::Read, now_ms);
        meta.last_access_ms = touched.last_access_ms;
        self.store.save_meta()
    }

    /// 404 or 410 for a stream that is not live.
    pub(super) fn not_live(state: State) -> Reply {
        match state {
            State::Gone => Reply::gone(),
            _ => Reply::not_found(),
        }
    }
}

/// The named limits the JS shell enforces before a request reaches the object (body size) or
/// while it waits (long-poll, SSE), so both halves read them from `core::limits`.
#[wasm_bindgen(js_name = sessionStreamLimits)]
pub fn session_stream_limits() -> JsValue {
    use crate::core::limits;
    let obj = js_sys::Object::new();
    let pairs = [
        ("appendBytesMax", limits::STREAM_APPEND_BYTES_MAX),
        (
            "refusedBodyDrainBytesMax",
            limits::STREAM_REFUSED_BODY_DRAIN_BYTES_MAX,
        ),
        ("streamBytesMax", limits::STREAM_BYTES_MAX),
        ("producersMax", limits::STREAM_PRODUCERS_MAX as u64),
        ("longPollMsDefault", limits::STREAM_LONG_POLL_MS_DEFAULT),
        ("longPollMsMax", limits::STREAM_LONG_POLL_MS_MAX),
        ("sseConnectionMsMax", limits::STREAM_SSE_CONNECTION_MS_MAX),
        ("producerGapWaitMs", limits::STREAM_PRODUCER_GAP_WAIT_MS),
        ("streamNameBytesMax", limits::STREAM_NAME_BYTES_MAX as u64),
        (
            "cursorJitterSecondsMax",
            u64::from(limits::STREAM_CURSOR_JITTER_SECONDS_MAX),
        ),
    ];
    for (key, value) in pairs {
        super::reply::set(&obj, key, JsValue::from_f64(value as f64));
    }
    obj.into()
}
