//! `SessionStreamCore`: one stream's protocol state over its SQLite storage. The object's shell
//! (`shell.rs`) opens one per object instance and passes each request in with `handle`, inside
//! one storage transaction; every answer is a [`Reply`] the shell performs.

use wasm_bindgen::prelude::*;
use web_sys::Headers;

use super::reply::Reply;
use super::request::Req;
use super::store::Store;
use crate::cloudflare::sql::Sql;
use crate::core::streams::ttl::{renewal_needs_save, Access};

/// One stream's state and storage.
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

impl SessionStreamCore {
    /// Opens (and if needed creates) the stream's tables in the object's storage.
    pub fn open(storage: &worker::Storage) -> Result<SessionStreamCore, JsValue> {
        let sql = Sql::from_storage(storage).map_err(|m| {
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
        now_ms: u64,
        jitter_seconds: u32,
        waited: bool,
    ) -> Result<Reply, JsValue> {
        let ctx = Ctx {
            req: Req { url, headers },
            now_ms,
            jitter_seconds,
        };
        let reply = match method {
            "PUT" => self.put(&ctx, body)?,
            "POST" => self.post(&ctx, body)?,
            "GET" => self.get(&ctx, waited)?,
            "HEAD" => self.head(&ctx)?,
            "DELETE" => self.delete(&ctx)?,
            _ => Reply::diagnostic(&crate::core::diagnostics::streams::METHOD_NOT_ALLOWED)
                .header("allow", "GET, HEAD, POST, PUT, DELETE, OPTIONS"),
        };
        Ok(self.finish(reply))
    }
}

impl SessionStreamCore {
    /// Attaches any pending source release to the reply.
    pub(super) fn finish(&mut self, mut reply: Reply) -> Reply {
        if let Some(source) = self.pending_release.take() {
            reply.effects.release_source = Some(source);
        }
        reply
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

    /// A read or write renews a sliding TTL (Durable Streams protocol §4); HEAD does not. The renewal is saved
    /// only once it is far enough ahead of the stored one (`renewal_needs_save`): the readers
    /// one append wakes renew in the same few milliseconds, and must not each write the meta row.
    pub(super) fn touch(&mut self, now_ms: u64) -> Result<(), JsValue> {
        let Some(meta) = &mut self.store.meta else {
            return Ok(());
        };
        if !matches!(meta.expiry, super::store::StoredExpiry::Ttl { .. }) {
            return Ok(());
        }
        let touched = meta.lifetime().touched(Access::Read, now_ms);
        meta.last_access_ms = touched.last_access_ms;
        if !renewal_needs_save(self.store.saved_last_access_ms, meta.last_access_ms) {
            return Ok(());
        }
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
