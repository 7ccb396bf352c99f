//! What the Rust side hands back to the JS shell for one request: a status, headers, a body, and
//! the follow-up work only the shell can do (wake waiters, wait, stream SSE, talk to another
//! stream's object). Built as a plain JS object so one wasm call answers one request.

use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::JsValue;

use crate::core::streams::Rejection;

/// Follow-up work for the shell.
#[derive(Default)]
pub struct Effects {
    /// Data or closure changed: wake long-poll and SSE waiters.
    pub wake: bool,
    /// Long-poll at the tail: wait for an append (or the timeout), then ask again with the
    /// offset it resolved to (`offset=now` must not move on to a later tail).
    pub wait: Option<String>,
    /// Start an SSE response reading from this offset; `true` when payloads are base64.
    pub sse: Option<(String, bool)>,
    /// A fork is being created: fetch this source stream's fork info, then call `putFork`.
    pub need_source: Option<String>,
    /// This stream (or a fork of it) no longer holds its source: release one reference there.
    pub release_source: Option<String>,
    /// A fork was planned: copy the source's rows up to this byte offset, and the row starting
    /// there when a sub-offset is asked for.
    pub copy_upto: Option<(u64, bool)>,
    /// A producer append arrived ahead of its predecessors (409 sequence gap). The shell may
    /// retry it as earlier appends commit, for at most `STREAM_PRODUCER_GAP_WAIT_MS`, and answers
    /// this 409 only if the gap is still open then: what the client would do after a 409, without
    /// the round trip.
    pub gap: bool,
}

/// One answer.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
    pub effects: Effects,
}

impl Reply {
    pub fn new(status: u16) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            effects: Effects::default(),
        }
    }

    /// Not an HTTP answer yet (status 0): the shell continues as the effects say (wait for
    /// data, fetch a fork source, copy rows).
    pub fn pending() -> Reply {
        Reply::new(0)
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Reply {
        self.headers.push((name, value.into()));
        self
    }

    pub fn headers(mut self, pairs: impl IntoIterator<Item = (&'static str, String)>) -> Reply {
        self.headers.extend(pairs);
        self
    }

    pub fn body(mut self, body: Vec<u8>) -> Reply {
        self.body = body;
        self
    }

    /// A versioned diagnostic: `{"error":{"code":"streams.v1.…","message":"…"}}`.
    pub fn diagnostic(status: u16, code: &str, message: &str) -> Reply {
        let body = serde_json::json!({ "error": { "code": code, "message": message } });
        Reply::new(status)
            .header("content-type", "application/json")
            .body(body.to_string().into_bytes())
    }

    /// A protocol rejection with its own status and code.
    pub fn rejected(r: &dyn Rejection) -> Reply {
        Reply::diagnostic(r.status(), r.code(), &r.to_string())
    }

    pub fn not_found() -> Reply {
        Reply::diagnostic(
            404,
            "streams.v1.stream_not_found",
            "no stream exists at this path",
        )
    }

    pub fn gone() -> Reply {
        Reply::diagnostic(
            410,
            "streams.v1.stream_gone",
            "this stream was deleted; it stays reserved while forks of it exist",
        )
    }

    /// The JS object `{status, headers: [name, value, …], body: Uint8Array, …effects}`.
    pub fn into_js(self) -> JsValue {
        let obj = Object::new();
        set(&obj, "status", JsValue::from(self.status));
        let headers = Array::new();
        for (name, value) in &self.headers {
            headers.push(&JsValue::from_str(name));
            headers.push(&JsValue::from_str(value));
        }
        set(&obj, "headers", headers.into());
        if !self.body.is_empty() {
            set(&obj, "body", Uint8Array::from(self.body.as_slice()).into());
        }
        let e = self.effects;
        if e.wake {
            set(&obj, "wake", JsValue::TRUE);
        }
        if let Some(offset) = e.wait {
            set(&obj, "wait", JsValue::from_str(&offset));
        }
        if let Some((offset, base64)) = e.sse {
            set(&obj, "sseOffset", JsValue::from_str(&offset));
            set(&obj, "sseBase64", JsValue::from_bool(base64));
        }
        if let Some(source) = e.need_source {
            set(&obj, "needSource", JsValue::from_str(&source));
        }
        if let Some(source) = e.release_source {
            set(&obj, "releaseSource", JsValue::from_str(&source));
        }
        if e.gap {
            set(&obj, "gap", JsValue::TRUE);
        }
        if let Some((upto, with_sub)) = e.copy_upto {
            set(&obj, "copyUpto", JsValue::from_f64(upto as f64));
            set(&obj, "copySubRow", JsValue::from_bool(with_sub));
        }
        obj.into()
    }
}

pub fn set(obj: &Object, key: &str, value: JsValue) {
    // Setting a property on a fresh plain object cannot fail.
    let _ = Reflect::set(obj, &JsValue::from_str(key), &value);
}
