//! Where a session's routes are when a target names only the session (the seed's
//! `{ sessionId, baseUrl?, headers? }`): turnkeep's canonical layout, the demo Worker's and the
//! README's — the chat-stream proxy at `api/chat/stream/<sessionId>` and the chat endpoint at
//! `api/chat`, under `baseUrl` (the page's origin when absent). Pure: the shell resolves the
//! paths against the base.

/// The session stream's path under the base (the chat-stream proxy route).
pub const SESSION_STREAM_PATH: &str = "api/chat/stream/";
/// The chat endpoint's path under the base.
pub const CHAT_PATH: &str = "api/chat";

/// `(stream path, chat path)` for `session_id` (a SafeId: safe in a path as it is), relative
/// to a base that ends in `/`.
pub fn session_paths(session_id: &str) -> (String, &'static str) {
    (format!("{SESSION_STREAM_PATH}{session_id}"), CHAT_PATH)
}

/// `base` with a trailing `/`, so relative paths resolve under it rather than beside its last
/// segment (`https://app.test/tenant` → `https://app.test/tenant/api/chat`).
pub fn as_directory(base: &str) -> String {
    if base.ends_with('/') {
        base.to_owned()
    } else {
        format!("{base}/")
    }
}

/// How a live read travels: an SSE response, or a WebSocket carrying the same SSE events (a
/// Cloudflare stream object hibernates with its sockets open, so an idle page costs nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Sse,
    Socket,
}

/// The transport of the next read: a socket when the host offered one (`webSocket`) and no
/// socket of this connection failed to open (a server or proxy without the upgrade, a refused
/// handshake: a browser cannot tell which, so the connection reads SSE from then on).
pub fn transport(sockets_offered: bool, socket_refused: bool) -> Transport {
    if sockets_offered && !socket_refused {
        Transport::Socket
    } else {
        Transport::Sse
    }
}

/// The WebSocket URL of an http(s) read URL (`ws:` / `wss:`, the rest unchanged); `None` for
/// any other scheme.
pub fn socket_url(read_url: &str) -> Option<String> {
    [("https://", "wss://"), ("http://", "ws://")]
        .into_iter()
        .find_map(|(http, ws)| {
            let rest = read_url.get(..http.len())?.eq_ignore_ascii_case(http);
            rest.then(|| format!("{ws}{}", &read_url[http.len()..]))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_resolves_to_its_routes() {
        assert_eq!(
            session_paths("s1"),
            ("api/chat/stream/s1".to_owned(), "api/chat")
        );
        assert_eq!(as_directory("https://app.test"), "https://app.test/");
        assert_eq!(as_directory("https://app.test/t/"), "https://app.test/t/");
        assert_eq!(as_directory("https://app.test/t"), "https://app.test/t/");
    }
    #[test]
    fn a_read_goes_by_socket_only_when_offered_and_never_refused() {
        let cases = [
            (false, false, Transport::Sse),
            (false, true, Transport::Sse),
            (true, false, Transport::Socket),
            (true, true, Transport::Sse),
        ];
        for (offered, refused, expected) in cases {
            assert_eq!(transport(offered, refused), expected, "{offered} {refused}");
        }
    }

    #[test]
    fn a_socket_url_swaps_only_the_scheme() {
        let cases = [
            (
                "http://127.0.0.1:8787/api/chat/stream/s?offset=-1&live=sse",
                Some("ws://127.0.0.1:8787/api/chat/stream/s?offset=-1&live=sse"),
            ),
            (
                "https://app.test/s?x=https://y",
                Some("wss://app.test/s?x=https://y"),
            ),
            ("HTTPS://app.test/s", Some("wss://app.test/s")),
            ("ftp://app.test/s", None),
            ("http:/", None),
        ];
        for (url, expected) in cases {
            assert_eq!(socket_url(url).as_deref(), expected, "{url}");
        }
    }
}
