//! GET: catch-up reads (`ETag` / `If-None-Match`), `offset=now`, long-poll (the shell waits; this
//! side decides) and the start of SSE, whose chunks `sseChunk` renders.

use wasm_bindgen::prelude::*;

use super::object::{Ctx, SessionStreamCore, State};
use super::query::etag;
use super::reply::Reply;
use super::store::{Meta, Row};
use crate::core::limits;
use crate::core::streams::content_type::{is_json, sse_needs_base64};
use crate::core::streams::cursor::response_cursor;
use crate::core::streams::offset::{Offset, OffsetQuery};
use crate::core::streams::read_query::{parse_read_query, plan_read, LiveMode, ReadStart};
use crate::core::streams::sse::{base64, push_control, push_data, Control};

impl SessionStreamCore {
    pub(super) fn get(&mut self, ctx: &Ctx<'_>, waited: bool) -> Result<Reply, JsValue> {
        let state = self.state(ctx.now_ms)?;
        if state != State::Live {
            return Ok(Self::not_live(state));
        }
        let offsets = ctx.req.query_all("offset");
        let offset_refs: Vec<&str> = offsets.iter().map(String::as_str).collect();
        let (live, cursor) = (ctx.req.query("live"), ctx.req.query("cursor"));
        let query = match parse_read_query(&offset_refs, live.as_deref(), cursor.as_deref()) {
            Ok(q) => q,
            Err(e) => return Ok(Reply::rejected(&e)),
        };
        self.touch(ctx.now_ms)?;
        let Some(meta) = &self.store.meta else {
            return Ok(Reply::not_found());
        };
        let (tail, closed) = (meta.tail_offset(), meta.closed);
        let cursor_out = || response_cursor(ctx.now_ms, cursor.as_deref(), ctx.jitter_seconds);
        if query.live == LiveMode::Sse {
            let from = query.offset.resolve(Offset::ZERO, tail);
            let base64 = sse_needs_base64(&meta.content_type);
            let mut reply = Reply::new(200)
                .header("content-type", "text/event-stream")
                .header("cache-control", "no-cache");
            if base64 {
                reply = reply.header("stream-sse-data-encoding", "base64");
            }
            reply.effects.sse = Some((from.to_string(), base64));
            return Ok(reply);
        }
        match plan_read(&query, Offset::ZERO, tail, closed) {
            ReadStart::TailSnapshot { tail } => {
                let body = if is_json(&meta.content_type) {
                    b"[]".to_vec()
                } else {
                    Vec::new()
                };
                let reply = Reply::new(200)
                    .header("content-type", meta.content_type.clone())
                    .header("stream-next-offset", tail.to_string())
                    .header("stream-up-to-date", "true")
                    .header("cache-control", "no-store")
                    .body(body);
                Ok(closed_header(reply, closed))
            }
            ReadStart::ClosedAtTail { tail } => Ok(Reply::new(204)
                .header("stream-next-offset", tail.to_string())
                .header("stream-up-to-date", "true")
                .header("stream-closed", "true")),
            ReadStart::WaitAt { offset } if waited => {
                let reply = Reply::new(204)
                    .header("stream-next-offset", offset.to_string())
                    .header("stream-up-to-date", "true")
                    .header("stream-cursor", cursor_out());
                Ok(closed_header(reply, closed))
            }
            ReadStart::WaitAt { offset } => {
                let mut reply = Reply::pending();
                reply.effects.wait = Some(offset.to_string());
                Ok(reply)
            }
            ReadStart::ReadFrom { from } => {
                let start_text = offsets.first().map_or("-1", String::as_str).to_owned();
                let rows = self.rows_from(meta, from)?;
                let cursor = (query.live == LiveMode::LongPoll).then(cursor_out);
                Ok(self.catch_up(ctx, &start_text, rows, cursor))
            }
        }
    }

    fn rows_from(&self, meta: &Meta, from: Offset) -> Result<Vec<Row>, JsValue> {
        if from.read_seq != 0 || from.byte_offset >= meta.tail {
            return Ok(Vec::new());
        }
        self.store.rows_after(
            from.byte_offset,
            meta.tail,
            limits::STREAM_READ_CHUNK_BYTES_MAX,
        )
    }

    fn catch_up(
        &self,
        ctx: &Ctx<'_>,
        start: &str,
        rows: Vec<Row>,
        cursor: Option<String>,
    ) -> Reply {
        let Some(meta) = &self.store.meta else {
            return Reply::not_found();
        };
        let end = rows.last().map_or(meta.tail, |r| r.end);
        let up_to_date = end >= meta.tail;
        let end_text = Offset {
            read_seq: 0,
            byte_offset: end,
        }
        .to_string();
        let closed_at_tail = meta.closed && up_to_date;
        let tag = etag(meta.created_ms, start, &end_text, closed_at_tail);
        if ctx.req.header("if-none-match").as_deref() == Some(tag.as_str()) {
            return Reply::new(304).header("etag", tag);
        }
        let body = join_rows(&meta.content_type, &rows);
        let mut reply = Reply::new(200)
            .header("content-type", meta.content_type.clone())
            .header("stream-next-offset", end_text)
            .header("etag", tag)
            .body(body);
        if let Some(cursor) = cursor {
            reply = reply.header("stream-cursor", cursor);
        }
        if up_to_date {
            reply = reply.header("stream-up-to-date", "true");
        }
        closed_header(reply, closed_at_tail)
    }
}

/// One piece of an SSE response.
#[derive(Debug, Default)]
pub struct SseChunk {
    /// The events to write (may be empty).
    pub text: String,
    /// Where the next chunk starts (absent: unchanged).
    pub offset: Option<String>,
    /// The stream is closed and read to its end, or gone: end the response.
    pub done: bool,
    /// A source reference freed while rendering (the stream expired): release it there.
    pub release_source: Option<String>,
}

impl SessionStreamCore {
    /// Renders the SSE events for everything after `offset` (one `data` + one `control` per
    /// stored append). With nothing new, renders one control event when `control_if_empty`
    /// (the first chunk, or a keep-alive after a quiet wait).
    pub fn sse_chunk(
        &mut self,
        offset: &str,
        cursor: Option<&str>,
        now_ms: u64,
        jitter_seconds: u32,
        control_if_empty: bool,
    ) -> Result<SseChunk, JsValue> {
        let (State::Live, Some(from)) = (self.state(now_ms)?, OffsetQuery::parse(offset).ok())
        else {
            return Ok(self.end_chunk());
        };
        self.touch(now_ms)?;
        let Some(meta) = &self.store.meta else {
            return Ok(self.end_chunk());
        };
        let from = from.resolve(Offset::ZERO, meta.tail_offset());
        let rows = self.rows_from(meta, from)?;
        let cursor = response_cursor(now_ms, cursor, jitter_seconds);
        let mut text = String::new();
        let mut last = from.to_string();
        let (json, binary) = (
            is_json(&meta.content_type),
            sse_needs_base64(&meta.content_type),
        );
        for row in &rows {
            push_data(&mut text, &payload(&row.data, json, binary));
            last = Offset {
                read_seq: 0,
                byte_offset: row.end,
            }
            .to_string();
            control(&mut text, meta, row.end, &last, &cursor);
        }
        if rows.is_empty() && control_if_empty {
            let at = if from.read_seq == 0 {
                from.byte_offset.min(meta.tail)
            } else {
                meta.tail
            };
            last = Offset {
                read_seq: 0,
                byte_offset: at,
            }
            .to_string();
            control(&mut text, meta, at, &last, &cursor);
        }
        let at_tail = rows
            .last()
            .map_or(from.byte_offset >= meta.tail, |r| r.end >= meta.tail);
        let done = meta.closed && at_tail;
        Ok(SseChunk {
            text,
            offset: Some(last),
            done,
            release_source: self.pending_release.take(),
        })
    }

    /// The chunk that ends an SSE response: the stream is gone (or the offset unreadable). It
    /// hands on a source reference freed while rendering, as every chunk does.
    fn end_chunk(&mut self) -> SseChunk {
        SseChunk {
            done: true,
            release_source: self.pending_release.take(),
            ..SseChunk::default()
        }
    }
}

fn control(text: &mut String, meta: &Meta, end: u64, end_text: &str, cursor: &str) {
    let at_tail = end >= meta.tail;
    let closed = meta.closed && at_tail;
    push_control(
        text,
        &Control {
            next_offset: end_text,
            cursor: Some(cursor),
            up_to_date: at_tail,
            closed,
        },
    );
}

fn payload(data: &[u8], json: bool, binary: bool) -> String {
    if binary {
        return base64(data);
    }
    let text = String::from_utf8_lossy(data);
    if json {
        format!("[{text}]")
    } else {
        text.into_owned()
    }
}

/// A read's body: the rows' bytes, or in JSON mode one array of all their messages.
fn join_rows(content_type: &str, rows: &[Row]) -> Vec<u8> {
    if !is_json(content_type) {
        return rows.iter().flat_map(|r| r.data.iter().copied()).collect();
    }
    let mut out = Vec::with_capacity(rows.iter().map(|r| r.data.len() + 1).sum::<usize>() + 2);
    out.push(b'[');
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&row.data);
    }
    out.push(b']');
    out
}

fn closed_header(reply: Reply, closed: bool) -> Reply {
    if closed {
        reply.header("stream-closed", "true")
    } else {
        reply
    }
}
