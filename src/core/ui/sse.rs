//! The UI message stream's framing: each chunk one SSE event `data: <JSON>\n\n`, the stream's
//! end `data: [DONE]\n\n`, and the response headers the AI SDK's server helpers send
//! (`UI_MESSAGE_STREAM_HEADERS`; the stock client checks none of them, proxies honour
//! `x-accel-buffering`).

use serde_json::Value;

/// The response headers of a UI message stream.
pub const HEADERS: &[(&str, &str)] = &[
    ("content-type", "text/event-stream"),
    ("cache-control", "no-cache"),
    ("connection", "keep-alive"),
    ("x-vercel-ai-ui-message-stream", "v1"),
    ("x-accel-buffering", "no"),
];

/// The event that ends a stream.
pub const DONE: &str = "data: [DONE]\n\n";

/// Appends `chunks` as events to `out`. JSON text holds no raw line break, so one `data:` line
/// carries a whole chunk.
pub fn push_events(out: &mut String, chunks: &[Value]) {
    for chunk in chunks {
        out.push_str("data: ");
        out.push_str(&chunk.to_string());
        out.push_str("\n\n");
    }
}

/// Reads a UI message stream's bytes back into chunks (the browser transport's side of
/// [`push_events`]), with the event-stream rules of [`crate::sse`].
#[derive(Debug, Default)]
pub struct UiStreamReader {
    parser: crate::sse::SseParser,
    done: bool,
}

/// What a read found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UiRead {
    pub chunks: Vec<Value>,
    /// `[DONE]` was read: nothing follows.
    pub done: bool,
}

impl UiStreamReader {
    pub fn new() -> Self {
        Self::default()
    }

    /// The chunks completed by `bytes`. An event whose data is not JSON, or a stream past the
    /// parser's limits, is an error (the stream is not a UI message stream).
    pub fn push(&mut self, bytes: &[u8]) -> Result<UiRead, &'static str> {
        if self.done {
            return Ok(UiRead {
                chunks: Vec::new(),
                done: true,
            });
        }
        let events = self
            .parser
            .push(bytes)
            .map_err(crate::sse::SseError::message)?;
        let mut read = UiRead::default();
        for event in events {
            if event.data == "[DONE]" {
                self.done = true;
                read.done = true;
                break;
            }
            if event.data.is_empty() {
                continue;
            }
            let chunk = serde_json::from_str(&event.data)
                .map_err(|_| "a UI message stream event is not JSON")?;
            read.chunks.push(chunk);
        }
        Ok(read)
    }
}
