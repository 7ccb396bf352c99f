//! PUT (create / idempotent re-create; forks continue in `fork`), HEAD and DELETE (POST is in
//! `append`). Each decision comes from `core::streams`; the commit is the only place state
//! changes.

use wasm_bindgen::JsValue;

use super::object::{Ctx, SessionStreamCore, State};
use super::query::{etag, source_name};
use super::reply::Reply;
use super::store::{Meta, StoredExpiry};
use crate::core::streams::create::{
    decide_create, parse_create_headers, CreateDecision, CreateHeaders, CreateRequest, InitialData,
    Source, StreamConfig, Target,
};
use crate::core::streams::offset::Offset;

/// Header values of a PUT, owned (the core borrows them).
pub(super) struct PutHeaders {
    values: [Option<String>; 7],
}

impl PutHeaders {
    pub fn read(ctx: &Ctx<'_>) -> PutHeaders {
        let names = [
            "content-type",
            "stream-ttl",
            "stream-expires-at",
            "stream-closed",
            "stream-forked-from",
            "stream-fork-offset",
            "stream-fork-sub-offset",
        ];
        PutHeaders {
            values: names.map(|n| ctx.req.header(n)),
        }
    }

    pub fn request(&self) -> CreateRequest<'_> {
        let v = |i: usize| self.values[i].as_deref();
        CreateRequest {
            content_type: v(0),
            ttl: v(1),
            expires_at: v(2),
            stream_closed: v(3),
            forked_from: v(4),
            fork_offset: v(5),
            fork_sub_offset: v(6),
        }
    }
}

impl SessionStreamCore {
    pub(super) fn put(&mut self, ctx: &Ctx<'_>, body: &[u8]) -> Result<Reply, JsValue> {
        let raw = PutHeaders::read(ctx);
        let h = match parse_create_headers(&raw.request()) {
            Ok(h) => h,
            Err(e) => return Ok(Reply::rejected(&e)),
        };
        let state = self.state(ctx.now_ms)?;
        if state == State::Absent {
            if let Some(from) = &h.forked_from {
                let mut reply = Reply::pending();
                reply.effects.need_source = Some(source_name(from));
                return Ok(reply);
            }
        }
        let config = self.store.meta.as_ref().map(Meta::config);
        let target = match (state, &config, &self.store.meta) {
            (State::Gone, _, _) => Target::SoftDeleted,
            (State::Live, Some(config), Some(meta)) => Target::Live {
                config,
                closed: meta.closed,
            },
            _ => Target::Free,
        };
        let decision = decide_create(&h, target, Source::Missing, body);
        self.commit_put(ctx, &h, decision, None)
    }

    /// Commits a PUT decision (plain or fork). `prefix` is a fork's materialised sub-offset data.
    pub(super) fn commit_put(
        &mut self,
        ctx: &Ctx<'_>,
        h: &CreateHeaders,
        decision: CreateDecision,
        prefix: Option<Vec<u8>>,
    ) -> Result<Reply, JsValue> {
        match decision {
            CreateDecision::Rejected(e) => Ok(Reply::rejected(&e)),
            CreateDecision::Exists => Ok(self.put_headers(Reply::new(200))),
            CreateDecision::Create {
                config,
                start,
                initial,
                closed,
            } => {
                if h.forked_from.is_none() {
                    self.store.purge()?; // leftovers of an expired stream
                }
                self.create(ctx.now_ms, config, start, initial, closed, prefix)?;
                let mut reply = self.put_headers(Reply::new(201));
                reply = reply.header("location", ctx.req.location());
                reply.effects.wake = true;
                Ok(reply)
            }
        }
    }

    fn create(
        &mut self,
        now_ms: u64,
        config: StreamConfig,
        start: Offset,
        initial: InitialData,
        closed: bool,
        prefix: Option<Vec<u8>>,
    ) -> Result<(), JsValue> {
        let mut tail = start.byte_offset;
        let initial = match initial {
            InitialData::None => Vec::new(),
            InitialData::Bytes(bytes) => bytes,
            InitialData::Json(messages) => messages.join(",").into_bytes(),
        };
        for data in [prefix.unwrap_or_default(), initial] {
            if !data.is_empty() {
                let end = tail + data.len() as u64;
                self.store.insert_row(tail, end, &data)?;
                tail = end;
            }
        }
        self.store.meta = Some(Meta {
            created_ms: now_ms,
            content_type: config.content_type,
            expiry: StoredExpiry::from_core(&config.expiry),
            requested_expiry: StoredExpiry::from_core(&config.requested_expiry),
            last_access_ms: now_ms,
            tail,
            stored_bytes: tail,
            closed,
            closed_by: None,
            last_stream_seq: None,
            forked_from: config.forked_from,
            fork_offset: config.fork_offset.map(|o| o.byte_offset),
            fork_sub_offset: config.fork_sub_offset,
            soft_deleted: false,
            fork_refs: 0,
            fork_depth: config.fork_depth,
        });
        self.store.save_meta()
    }

    fn put_headers(&self, reply: Reply) -> Reply {
        let Some(meta) = &self.store.meta else {
            return reply;
        };
        let reply = reply
            .header("content-type", meta.content_type.clone())
            .header("stream-next-offset", meta.tail_offset().to_string());
        if meta.closed {
            reply.header("stream-closed", "true")
        } else {
            reply
        }
    }

    pub(super) fn head(&mut self, ctx: &Ctx<'_>) -> Result<Reply, JsValue> {
        let state = self.state(ctx.now_ms)?;
        let (State::Live, Some(meta)) = (state, &self.store.meta) else {
            return Ok(Reply::new(if state == State::Gone { 410 } else { 404 }));
        };
        let tail = meta.tail_offset().to_string();
        let mut reply = Reply::new(200)
            .header("content-type", meta.content_type.clone())
            .header("stream-next-offset", tail.clone())
            .header("cache-control", "no-store")
            .header("etag", etag(meta.created_ms, "-1", &tail, meta.closed));
        if meta.closed {
            reply = reply.header("stream-closed", "true");
        }
        if let Some(pair) = meta.expiry.to_core().response_header() {
            reply = reply.headers([pair]);
        }
        Ok(reply)
    }

    pub(super) fn delete(&mut self, ctx: &Ctx<'_>) -> Result<Reply, JsValue> {
        let state = self.state(ctx.now_ms)?;
        if state != State::Live {
            return Ok(Self::not_live(state));
        }
        match &mut self.store.meta {
            Some(meta) if meta.fork_refs > 0 => {
                meta.soft_deleted = true;
                self.store.save_meta()?;
            }
            _ => self.purge()?,
        }
        let mut reply = Reply::new(204);
        reply.effects.wake = true;
        Ok(reply)
    }
}
