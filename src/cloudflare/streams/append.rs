//! POST: append, close, idempotent producers (Durable Streams protocol §5.2, §5.2.1, §5.3). The decision is
//! `core::streams::append::decide_append`; `commit_append` is the only place an append changes
//! state, all in the caller's one SQLite transaction.

use crate::core::diagnostics::streams as rows;
use wasm_bindgen::JsValue;

use super::object::{Ctx, SessionStreamCore, State};
use super::reply::Reply;
use super::store::StoredExpiry;
use crate::core::streams::append::{
    decide_append, AppendCommit, AppendData, AppendDecision, AppendRequest, StreamForAppend,
};
use crate::core::streams::closure::ClosedStreamDecision;
use crate::core::streams::producer::{parse_producer_headers, with_seq_count, ProducerDecision};

impl SessionStreamCore {
    pub(super) fn post(&mut self, ctx: &Ctx<'_>, body: &[u8]) -> Result<Reply, JsValue> {
        let state = self.state(ctx.now_ms)?;
        if state != State::Live {
            return Ok(Self::not_live(state));
        }
        let header = |n: &str| ctx.req.header(n);
        let (id, epoch, seq, count) = (
            header("producer-id"),
            header("producer-epoch"),
            header("producer-seq"),
            header("producer-seq-count"),
        );
        let parsed = parse_producer_headers(id.as_deref(), epoch.as_deref(), seq.as_deref())
            .and_then(|p| with_seq_count(p, count.as_deref()));
        let producer = match parsed {
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
        let tail = meta.tail_offset();
        match decision {
            AppendDecision::Commit(mut commit) => {
                let mut reply = Reply::new(commit.status)
                    .header("stream-next-offset", commit.next_offset.to_string())
                    .headers(std::mem::take(&mut commit.producer_headers));
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
                    .header("stream-next-offset", tail.to_string())
                    .header("stream-closed", "true");
                if let ClosedStreamDecision::DuplicateOfClosingRequest { epoch, seq } = d {
                    reply = reply
                        .header("producer-epoch", epoch.to_string())
                        .header("producer-seq", seq.to_string());
                }
                if d == ClosedStreamDecision::Conflict {
                    reply = reply.with_diagnostic(&rows::STREAM_CLOSED.diagnostic());
                } else {
                    self.touch(ctx.now_ms)?;
                }
                Ok(reply)
            }
            AppendDecision::Producer(d) => {
                let mut reply = Reply::new(d.status()).headers(d.response_headers());
                if matches!(d, ProducerDecision::Duplicate { .. }) {
                    let echo = producer.as_ref().and_then(|p| p.seq_count_echo());
                    reply = reply
                        .header("stream-next-offset", tail.to_string())
                        .headers(echo);
                    self.touch(ctx.now_ms)?;
                } else if let Some(row) = d.refusal_row() {
                    reply = reply.with_diagnostic(&row.diagnostic());
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
        commit: AppendCommit,
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
}
