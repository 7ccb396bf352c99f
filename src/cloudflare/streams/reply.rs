//! What the core hands the object's shell for one request: a status, headers, a body, and the
//! follow-up work the shell performs (wake waiters, wait, stream SSE, talk to another stream's
//! object).

use crate::core::diagnostics::{streams as rows, Row};
use crate::core::protocol::TurnDiagnostic;
use js_sys::{Object, Reflect};
use wasm_bindgen::JsValue;

use super::route::SECURITY_HEADERS;

use crate::core::streams::Rejection;

/// Follow-up work for the shell.
#[derive(Debug, Default)]
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
#[derive(Debug)]
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

    /// A registry row as the versioned diagnostic
    /// `{"error":{"version":1,"code":"streams.v1.…","message":"…","retryable":…}}`.
    pub fn diagnostic(row: &Row) -> Reply {
        Reply::new(row.status).with_diagnostic(&row.diagnostic())
    }

    /// This reply with `diagnostic` as its JSON body.
    pub fn with_diagnostic(self, diagnostic: &TurnDiagnostic) -> Reply {
        self.header("content-type", "application/json")
            .body(diagnostic.error_body_json(None).into_bytes())
    }

    /// A protocol rejection: its row, with the rule it broke as the message.
    pub fn rejected(r: &dyn Rejection) -> Reply {
        let row = r.row();
        Reply::new(row.status).with_diagnostic(&row.diagnostic_with(&r.to_string()))
    }

    pub fn not_found() -> Reply {
        Reply::diagnostic(&rows::STREAM_NOT_FOUND)
    }

    pub fn gone() -> Reply {
        Reply::diagnostic(&rows::STREAM_GONE)
    }

    /// The HTTP answer, with the browser security headers (`route::SECURITY_HEADERS`), built
    /// once as the runtime will send it; `body` replaces the reply's own bytes (an SSE stream).
    /// 204 and 304 never carry a body.
    pub fn into_response(
        self,
        body: Option<web_sys::ReadableStream>,
    ) -> Result<worker::Response, JsValue> {
        let headers = web_sys::Headers::new()?;
        for (name, value) in SECURITY_HEADERS {
            headers.set(name, value)?;
        }
        for (name, value) in &self.headers {
            headers.append(name, value)?;
        }
        let builder = worker::Response::builder()
            .with_status(self.status)
            .with_headers(worker::Headers(headers));
        Ok(match body {
            _ if self.status == 204 || self.status == 304 => builder.empty(),
            Some(stream) => builder.stream(stream),
            None if self.body.is_empty() => builder.empty(),
            None => builder.fixed(self.body),
        })
    }
}

/// Sets `obj[key] = value` on a fresh plain object (cannot fail).
pub fn set(obj: &Object, key: &str, value: JsValue) {
    let _ = Reflect::set(obj, &JsValue::from_str(key), &value);
}
