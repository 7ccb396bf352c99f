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
}
