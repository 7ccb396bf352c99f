//! Live readers on hibernatable WebSockets: a GET `?offset=…&live=sse` that asks to upgrade
//! (`Upgrade: websocket`) gets the same SSE events as the SSE response would carry, each
//! WebSocket text message holding whole events, but over a socket accepted with the Durable
//! Objects hibernation API. Between appends the object runs nothing and holds no request, so the
//! runtime may evict it (no duration billed) while the sockets stay open; the next append
//! constructs it again, and it finds its sockets (`State::get_websockets`) and where each one
//! is (the socket's attachment, [`SocketReader`]) and sends what follows.
//!
//! The pure rules (host-tested): which request is a socket read (`core::streams::proxy`'s rule,
//! which the chat-stream proxy forwards the upgrade by), whether one more socket may join, and
//! how a socket is closed. The effects are in `shell.rs` (wasm only).

use serde::{Deserialize, Serialize};

use crate::core::limits;

/// What a socket reader keeps across the object's hibernation (the socket's attachment, at most
/// 2 KiB on Cloudflare: an offset and a cursor are a few dozen bytes): where its next events
/// start, and the cursor its control events carry on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SocketReader {
    pub offset: String,
    pub cursor: Option<String>,
}

/// Which read is a socket read: the rule the chat-stream proxy forwards by, too.
pub use crate::core::streams::proxy::is_socket_read;

/// Whether one more socket may join a stream that has `open` sockets now
/// (`limits::STREAM_LIVE_SOCKETS_MAX`; one more is answered 429 `streams.v1.readers_busy`).
pub fn may_join(open: usize) -> bool {
    open < limits::STREAM_LIVE_SOCKETS_MAX
}

/// How the object closes a reader's socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SocketEnd {
    /// The stream is closed and read to its end, or gone: the reader has everything.
    Done,
    /// Storage failed while rendering: the reader reconnects from its offset.
    Failed,
    /// More is waiting than one push sends (`limits::STREAM_SOCKET_PUSH_CHUNKS_MAX`): the
    /// reader reconnects from its offset and reads the rest as a catch-up.
    Behind,
    /// The client closed (or broke) its side: the object closes its own.
    ClientLeft,
}

impl SocketEnd {
    /// `(code, reason)` of the close frame (RFC 6455 and the IANA registry of close codes: 1000
    /// normal, 1011 server error, 1013 try again).
    pub const fn frame(self) -> (u16, &'static str) {
        match self {
            SocketEnd::Done => (1000, "the stream ended"),
            SocketEnd::Failed => (1011, "the stream could not be read"),
            SocketEnd::Behind => (1013, "reconnect to read on"),
            SocketEnd::ClientLeft => (1000, "closed"),
        }
    }
}
