//! PUT (create / idempotent re-create; forks continue in `fork`), POST (append, close), HEAD and
//! DELETE. Each decision comes from `core::streams`; the commit is the only place state changes.

use wasm_bindgen::JsValue;

use super::object::{Ctx, SessionStreamCore, State};
use super::query::{etag, source_name};
use super::reply::Reply;
use super::store::{Meta, StoredExpiry};
use crate::core::streams::append::{
    decide_append, AppendData, AppendDecision, AppendRequest, StreamForAppend,
};
use crate::core::streams::closure::ClosedStreamDecision;
use crate::core::streams::create::{
    decide_create, parse_create_headers, CreateDecision, CreateHeaders, CreateRequest, InitialData,
    Source, StreamConfig, Target,
};
use crate::core::streams::offset::Offset;
use crate::core::streams::producer::{parse_producer_headers, ProducerDecision};

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
                let mut reply = Reply::new(0);
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

    pub(super) fn post(&mut self, ctx: &Ctx<'_>, body: &[u8]) -> Result<Reply, JsValue> {
        let state = self.state(ctx.now_ms)?;
        if state != State::Live {
            return Ok(Self::not_live(state));
        }
        let header = |n: &str| ctx.req.header(n);
        let (id, epoch, seq) = (
            header("producer-id"),
            header("producer-epoch"),
            header("producer-seq"),
        );
        let producer = match parse_producer_headers(id.as_deref(), epoch.as_deref(), seq.as_deref())
        {
            Ok(p) => p,
            Err(e) => return Ok(Reply::rejected(&e)),
        };
        let (content_type, closed_header, stream_seq) = (
            header("content-type"),
            header("stream-closed"),
            header("stream-seq"),
        );
        let Some(meta) = &self.store.meta else {
            return Ok(Reply::not_found());
        };
        let closed_by = meta.closed_by();
        let producer_state = producer
            .as_ref()
            .and_then(|p| self.store.producers.get(&p.id));
        let stream = StreamForAppend {
            content_type: &meta.content_type,
            tail: meta.tail_offset(),
            stored_bytes: meta.stored_bytes,
            closed: meta.closed,
            closed_by: closed_by.as_ref(),
            last_stream_seq: meta.last_stream_seq.as_deref(),
            producer_state,
            known_producers: self.store.producers.len(),
        };
        let request = AppendRequest {
            content_type: content_type.as_deref(),
            stream_closed: closed_header.as_deref(),
            stream_seq: stream_seq.as_deref(),
            producer: producer.as_ref(),
            body,
        };
        let decision = decide_append(&stream, &request);
        let tail = meta.tail_offset().to_string();
        match decision {
            AppendDecision::Commit(commit) => {
                let mut reply = Reply::new(commit.status)
                    .header("stream-next-offset", commit.next_offset.to_string())
                    .headers(commit.producer_headers.clone());
                if commit.close {
                    reply = reply.header("stream-closed", "true");
                }
                let producer_id = producer.as_ref().map(|p| p.id.as_str());
                self.commit_append(ctx.now_ms, commit, producer_id)?;
                reply.effects.wake = true;
                Ok(reply)
            }
            AppendDecision::Closed(d) => {
                let mut reply = Reply::new(d.status())
                    .header("stream-next-offset", tail)
                    .header("stream-closed", "true");
                if let ClosedStreamDecision::DuplicateOfClosingRequest { epoch, seq } = d {
                    reply = reply
                        .header("producer-epoch", epoch.to_string())
                        .header("producer-seq", seq.to_string());
                }
                if d == ClosedStreamDecision::Conflict {
                    reply = reply.header("content-type", "application/json").body(
                        br#"{"error":{"code":"streams.v1.stream_closed","message":"the stream is closed"}}"#.to_vec(),
                    );
                } else {
                    self.touch(ctx.now_ms)?;
                }
                Ok(reply)
            }
            AppendDecision::Producer(d) => {
                let mut reply = Reply::new(d.status()).headers(d.response_headers());
                if matches!(d, ProducerDecision::Duplicate { .. }) {
                    reply = reply.header("stream-next-offset", tail);
                    self.touch(ctx.now_ms)?;
                } else {
                    let body = serde_json::json!({ "error": { "code": d.code(), "message": producer_message(&d) } });
                    reply = reply
                        .header("content-type", "application/json")
                        .body(body.to_string().into_bytes());
                }
                // Ahead of the next expected seq: pipelined batches often arrive out of order,
                // so the shell may hold this one until the gap fills (see `Effects::gap`).
                reply.effects.gap = matches!(d, ProducerDecision::SequenceGap { .. });
                Ok(reply)
            }
            AppendDecision::Rejected(e) => Ok(Reply::rejected(&e)),
        }
    }

    fn commit_append(
        &mut self,
        now_ms: u64,
        commit: crate::core::streams::append::AppendCommit,
        producer_id: Option<&str>,
    ) -> Result<(), JsValue> {
        let Some(meta) = &self.store.meta else {
            return Ok(());
        };
        let start = meta.tail;
        let data = match commit.data {
            AppendData::Nothing => Vec::new(),
            AppendData::Bytes(bytes) => bytes,
            AppendData::Json(messages) => messages.join(",").into_bytes(),
        };
        if !data.is_empty() {
            self.store
                .insert_row(start, commit.next_offset.byte_offset, &data)?;
        }
        if let (Some(next), Some(id)) = (commit.producer, producer_id) {
            self.store.save_producer(id, next)?;
        }
        let Some(meta) = &mut self.store.meta else {
            return Ok(());
        };
        meta.tail = commit.next_offset.byte_offset;
        meta.stored_bytes += commit.stored_bytes;
        if let Some(seq) = commit.stream_seq {
            meta.last_stream_seq = Some(seq);
        }
        if commit.close {
            meta.closed = true;
            meta.closed_by = commit.closed_by.map(|c| (c.producer_id, c.epoch, c.seq));
        }
        if matches!(meta.expiry, StoredExpiry::Ttl { .. }) {
            meta.last_access_ms = meta.last_access_ms.max(now_ms);
        }
        self.store.save_meta()
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

fn producer_message(d: &ProducerDecision) -> &'static str {
    match d {
        ProducerDecision::StaleEpoch { .. } => "a newer producer epoch has written to this stream",
        ProducerDecision::NewEpochSeqNotZero { .. } => {
            "a new producer epoch must start at Producer-Seq 0"
        }
        ProducerDecision::SequenceGap { .. } => {
            "Producer-Seq skips ahead of the next expected sequence"
        }
        _ => "producer request refused",
    }
}
