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
