//! Forks across objects (Durable Streams protocol §4.2). A fork lives in its own object and holds a copy of the
//! rows it inherits, so reading it never needs the source; the source only counts its forks, so
//! that deleting (or expiring) it while forks exist soft-deletes it (410) and the last fork to go
//! lets it be purged.
//!
//! The object's shell (`shell.rs`) drives a fork PUT in three steps, because each crosses to the
//! source's object (over RPC):
//! `forkAcquire` at the source (one reference taken if it is live), `putFork(…, commit=false)`
//! here (the decision; on success, which rows to copy), `exportRows` / `rowStartingAt` at the
//! source with `importRows` here, then `putFork(…, commit=true)`. A rejected fork releases its
//! reference again (`releaseSource`).

use js_sys::{Array, Object, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::Headers;

use super::fork_prefix::{sub_offset_prefix, SubOffsetBeyond};
use super::object::{Ctx, SessionStreamCore, State};
use super::query::source_name;
use super::reply::{set, Reply};
use super::request::Req;
use super::store::{Row, StoredExpiry};
use super::write::PutHeaders;
use crate::core::limits;
use crate::core::streams::create::{
    decide_create, parse_create_headers, CreateDecision, Source, Target,
};
use crate::core::streams::offset::Offset;

impl SessionStreamCore {
    /// Source side: takes one fork reference if the stream is live and describes it:
    /// `{state: "live" | "deleted" | "missing", contentType, expiry, tail, forkDepth}`.
    pub fn fork_acquire(&mut self, now_ms: f64) -> Result<JsValue, JsValue> {
        let out = Object::new();
        let state = self.state(now_ms.max(0.0) as u64)?;
        let label = match (state, &mut self.store.meta) {
            (State::Live, Some(meta)) => {
                meta.fork_refs += 1;
                set(&out, "contentType", meta.content_type.clone().into());
                let expiry = serde_json::to_string(&meta.expiry).unwrap_or_default();
                set(&out, "expiry", expiry.into());
                set(&out, "tail", JsValue::from_f64(meta.tail as f64));
                set(
                    &out,
                    "forkDepth",
                    JsValue::from_f64(f64::from(meta.fork_depth)),
                );
                self.store.save_meta()?;
                "live"
            }
            (State::Gone, _) => "deleted",
            _ => "missing",
        };
        set(&out, "state", label.into());
        if let Some(source) = self.pending_release.take() {
            set(&out, "releaseSource", source.into());
        }
        Ok(out.into())
    }

    /// Source side: a fork let go. Returns the name of this stream's own source when this
    /// stream was purged as a result (the shell releases there too), else `undefined`.
    pub fn fork_release(&mut self) -> Result<Option<String>, JsValue> {
        let Some(meta) = &mut self.store.meta else {
            return Ok(None);
        };
        meta.fork_refs = meta.fork_refs.saturating_sub(1);
        if meta.fork_refs == 0 && meta.soft_deleted {
            self.purge()?;
        } else {
            self.store.save_meta()?;
        }
        Ok(self.pending_release.take())
    }

    /// Source side: stored rows ending in `(from, upto]`, one page (`[{start, end, data}]`).
    pub fn export_rows(&self, from: f64, upto: f64) -> Result<Array, JsValue> {
        let rows = self.store.rows_after(
            from as u64,
            upto as u64,
            limits::STREAM_FORK_COPY_PAGE_BYTES,
        )?;
        Ok(rows.iter().map(row_to_js).collect())
    }

    /// Source side: the row starting at `start` (the append a sub-offset cuts into), or null.
    pub fn row_starting_at(&self, start: f64) -> Result<JsValue, JsValue> {
        Ok(self
            .store
            .row_starting_at(start as u64)?
            .as_ref()
            .map_or(JsValue::NULL, row_to_js))
    }

    /// Fork side: stores copied rows.
    pub fn import_rows(&mut self, rows: Array) -> Result<(), JsValue> {
        for row in rows.iter() {
            let row = row_from_js(&row).ok_or_else(|| JsValue::from_str("malformed fork row"))?;
            self.store.insert_row(row.start, row.end, &row.data)?;
        }
        Ok(())
    }

    /// Fork side: decides a fork PUT with the source described by `source` (from
    /// `forkAcquire`). Without `commit`, a successful decision answers status 0 with
    /// `copyUpto`; with `commit`, the copied rows are in place and `sub_row` is the source row a
    /// sub-offset cuts into (or null), and the fork is created.
    #[allow(clippy::too_many_arguments)]
    pub fn put_fork(
        &mut self,
        url: &str,
        headers: &Headers,
        body: &[u8],
        source: JsValue,
        sub_row: JsValue,
        commit: bool,
        now_ms: u64,
    ) -> Result<Reply, JsValue> {
        let ctx = Ctx {
            req: Req { url, headers },
            now_ms,
            jitter_seconds: 0,
        };
        let reply = self.fork_step(&ctx, body, &source, &sub_row, commit)?;
        Ok(self.finish(reply))
    }
}

impl SessionStreamCore {
    fn fork_step(
        &mut self,
        ctx: &Ctx<'_>,
        body: &[u8],
        source: &JsValue,
        sub_row: &JsValue,
        commit: bool,
    ) -> Result<Reply, JsValue> {
        let raw = PutHeaders::read(ctx);
        let h = match parse_create_headers(&raw.request()) {
            Ok(h) => h,
            Err(e) => return Ok(Reply::rejected(&e)),
        };
        let acquired = get_str(source, "state").as_deref() == Some("live");
        let release = |mut reply: Reply| {
            if acquired {
                reply.effects.release_source = h.forked_from.as_deref().map(source_name);
            }
            reply
        };
        if self.state(ctx.now_ms)? != State::Absent {
            // Someone created the path meanwhile: answer as a plain PUT would, without the reference.
            return Ok(release(self.put(ctx, body)?));
        }
        let content_type = get_str(source, "contentType").unwrap_or_default();
        let expiry = get_str(source, "expiry")
            .and_then(|e| serde_json::from_str::<StoredExpiry>(&e).ok())
            .unwrap_or(StoredExpiry::Never)
            .to_core();
        let tail = Offset {
            read_seq: 0,
            byte_offset: get_f64(source, "tail") as u64,
        };
        let source_state = match get_str(source, "state").as_deref() {
            Some("live") => Source::Live {
                content_type: &content_type,
                expiry: &expiry,
                tail,
                fork_depth: get_f64(source, "forkDepth") as u32,
            },
            Some("deleted") => Source::SoftDeleted,
            _ => Source::Missing,
        };
        let decision = decide_create(&h, Target::Free, source_state, body);
        let CreateDecision::Create { start, .. } = &decision else {
            return Ok(release(self.commit_put(ctx, &h, decision, None)?));
        };
        if !commit {
            self.store.purge()?; // leftovers of an earlier, unfinished fork
            let mut reply = Reply::pending();
            reply.effects.copy_upto = Some((start.byte_offset, h.fork_sub_offset > 0));
            return Ok(reply);
        }
        let row = row_from_js(sub_row);
        let row = row.as_ref().map(|r| (r.start, r.data.as_slice()));
        let prefix =
            match sub_offset_prefix(&content_type, h.fork_sub_offset, start.byte_offset, row) {
                Ok(prefix) => prefix,
                Err(SubOffsetBeyond) => {
                    self.store.purge()?;
                    let reply = Reply::diagnostic(&SubOffsetBeyond::ROW);
                    return Ok(release(reply));
                }
            };
        self.commit_put(ctx, &h, decision, prefix)
    }
}

fn row_to_js(row: &Row) -> JsValue {
    let obj = Object::new();
    set(&obj, "start", JsValue::from_f64(row.start as f64));
    set(&obj, "end", JsValue::from_f64(row.end as f64));
    set(&obj, "data", Uint8Array::from(row.data.as_slice()).into());
    obj.into()
}

fn row_from_js(value: &JsValue) -> Option<Row> {
    if !value.is_object() {
        return None;
    }
    let data = js_sys::Reflect::get(value, &"data".into())
        .ok()?
        .dyn_into::<Uint8Array>()
        .ok()?;
    let (start, end) = (get_f64(value, "start") as u64, get_f64(value, "end") as u64);
    (end > start && end - start == u64::from(data.length())).then(|| Row {
        start,
        end,
        data: data.to_vec(),
    })
}

fn get_str(value: &JsValue, key: &str) -> Option<String> {
    js_sys::Reflect::get(value, &key.into()).ok()?.as_string()
}

fn get_f64(value: &JsValue, key: &str) -> f64 {
    js_sys::Reflect::get(value, &key.into())
        .ok()
        .and_then(|v| v.as_f64())
        .unwrap_or(0.0)
}
