//! The chat-stream proxy's decisions (`createChatStreamProxy`): the route a browser reads its
//! session's stream through. The proxy moves bytes; what it may move is decided here: the
//! methods (reads; appends only where the host opted in with `writes`), which request headers reach the
//! upstream (Durable Streams protocol headers only: the browser's cookies and its own
//! `Authorization` stay behind; the server's streams credentials are added by the host), which
//! answer headers come back (none that would misdescribe the re-framed body), and what an
//! upstream failure becomes (a versioned diagnostic of its own: an upstream error body never
//! reaches the client).

use crate::diagnostics::{proxy, Row};
use crate::protocol::TurnDiagnostic;

/// Request headers passed to the upstream: what a Durable Streams read or append needs.
const FORWARDED_REQUEST_HEADERS: &[&str] = &[
    "accept",
    "content-type",
    "if-none-match",
    "last-event-id",
    "stream-seq",
    "stream-ttl",
    "stream-expires-at",
    "stream-closed",
    "producer-id",
    "producer-epoch",
    "producer-seq",
    "producer-seq-count",
];

/// Answer headers never passed back: the runtime re-frames the body (so its length and encoding
/// are new), hop-by-hop headers, and the streams server's own cookies and auth challenges.
const DROPPED_RESPONSE_HEADERS: &[&str] = &[
    "content-length",
    "content-encoding",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "set-cookie",
    "www-authenticate",
    "trailer",
    "upgrade",
];

/// Whether a proxy takes appends: none (the default: a route that lets a reader through hands
/// out no write access), or those its host's `writes.authorize` allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writes {
    Refused,
    Authorized,
}

/// What a request's method makes of it, before anything else is looked at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodDecision {
    /// GET or HEAD: served as the target allows.
    Read,
    /// POST on a proxy with writes: served only once `writes.authorize` allows it.
    Append,
    Refuse(ProxyFailure),
}

/// The methods a proxy serves: reads always; appends (POST) only with writes. Every other
/// method (PUT creates a stream, DELETE deletes it) is never proxied.
pub fn decide_method(method: &str, writes: Writes) -> MethodDecision {
    match (method, writes) {
        ("GET" | "HEAD", _) => MethodDecision::Read,
        ("POST", Writes::Authorized) => MethodDecision::Append,
        (_, Writes::Refused) => MethodDecision::Refuse(ProxyFailure::ReadOnly),
        (_, Writes::Authorized) => MethodDecision::Refuse(ProxyFailure::MethodNotAllowed),
    }
}

/// True for a live read that asks for a WebSocket: a GET with `Upgrade: websocket` (the token is
/// case-insensitive). The proxy forwards the upgrade (no other request carries one: a fetch of
/// Node's rejects it) and hands back an upstream 101 untouched ([`passes_untouched`]); a
/// Cloudflare `SessionStream` object accepts it as a hibernatable socket carrying the SSE read's
/// events.
pub fn is_socket_read(method: &str, upgrade: Option<&str>) -> bool {
    method == "GET" && upgrade.is_some_and(|u| u.trim().eq_ignore_ascii_case("websocket"))
}

/// True for an upstream answer passed back exactly as it came: a 101, whose socket cannot be
/// moved into another response.
pub fn passes_untouched(status: u16) -> bool {
    status == 101
}

/// True for a request header (lower-case name) the upstream gets.
pub fn forwards_request_header(name: &str) -> bool {
    FORWARDED_REQUEST_HEADERS.contains(&name)
}

/// True for an answer header (lower-case name) the client gets back on a passed-through answer.
pub fn passes_response_header(name: &str) -> bool {
    !DROPPED_RESPONSE_HEADERS.contains(&name)
}

/// True for an answer header kept on a diagnostic that replaced an upstream error: the
/// protocol's own (`Stream-*`, `Producer-*`: a writer needs `Producer-Epoch` on a stale epoch)
/// and `Retry-After`.
pub fn keeps_on_failure(name: &str) -> bool {
    name.starts_with("stream-") || name.starts_with("producer-") || name == "retry-after"
}

/// Every way a proxied request fails, with its status and diagnostic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProxyFailure {
    /// A method other than GET, HEAD or POST, on a proxy with writes.
    MethodNotAllowed,
    /// Any method but GET or HEAD, on a proxy without writes.
    ReadOnly,
    /// `writes.authorize` did not allow this append.
    WriteForbidden,
    /// `writes.authorize` threw.
    WriteAuthorizeFailed,
    /// The handler was called with something that is neither a Request nor has `.req`.
    NotARequest,
    /// The target resolver said no (returned null or undefined) for this request.
    Forbidden,
    /// The target resolver threw, or returned something that is not a target.
    TargetInvalid,
    /// The client went away before the upstream answered.
    Cancelled,
    /// The upstream could not be reached.
    Unreachable,
    // Upstream answers, by what they mean for the client.
    BadRequest,
    NotFound,
    Conflict,
    Gone,
    TooLarge,
    Busy,
    /// 403 with `Producer-Epoch`: a newer writer owns the producer.
    StaleEpoch,
    /// 401, or 403 without `Producer-Epoch`: the upstream refused the server's own credentials.
    UpstreamAuth,
    /// Any other upstream error status.
    UpstreamRefused,
    /// 5xx.
    UpstreamFailed,
}

impl ProxyFailure {
    pub const ALL: [ProxyFailure; 19] = [
        Self::MethodNotAllowed,
        Self::ReadOnly,
        Self::WriteForbidden,
        Self::WriteAuthorizeFailed,
        Self::NotARequest,
        Self::Forbidden,
        Self::TargetInvalid,
        Self::Cancelled,
        Self::Unreachable,
        Self::BadRequest,
        Self::NotFound,
        Self::Conflict,
        Self::Gone,
        Self::TooLarge,
        Self::Busy,
        Self::StaleEpoch,
        Self::UpstreamAuth,
        Self::UpstreamRefused,
        Self::UpstreamFailed,
    ];
}

impl ProxyFailure {
    /// The mapping to the registry's rows (`core::diagnostics::proxy`).
    pub const fn row(self) -> Row {
        match self {
            Self::MethodNotAllowed => proxy::METHOD_NOT_ALLOWED,
            Self::ReadOnly => proxy::READ_ONLY,
            Self::WriteForbidden => proxy::WRITE_FORBIDDEN,
            Self::NotARequest | Self::TargetInvalid | Self::WriteAuthorizeFailed => proxy::INTERNAL,
            Self::Forbidden => proxy::FORBIDDEN,
            Self::Cancelled => proxy::CANCELLED,
            Self::Unreachable => proxy::UNREACHABLE,
            Self::BadRequest => proxy::BAD_REQUEST,
            Self::NotFound => proxy::NOT_FOUND,
            Self::Conflict => proxy::CONFLICT,
            Self::Gone => proxy::GONE,
            Self::TooLarge => proxy::TOO_LARGE,
            Self::Busy => proxy::BUSY,
            Self::StaleEpoch => proxy::STALE_EPOCH,
            Self::UpstreamAuth => proxy::UPSTREAM_AUTH,
            Self::UpstreamRefused => proxy::UPSTREAM_REFUSED,
            Self::UpstreamFailed => proxy::UPSTREAM_FAILED,
        }
    }

    pub const fn status(self) -> u16 {
        self.row().status
    }

    /// The `allow` header a 405 carries: what this proxy would have served.
    pub const fn allow(self) -> Option<&'static str> {
        match self {
            Self::ReadOnly => Some("GET, HEAD"),
            Self::MethodNotAllowed => Some("GET, HEAD, POST"),
            _ => None,
        }
    }

    pub fn diagnostic(self) -> TurnDiagnostic {
        self.row().diagnostic()
    }

    pub fn error_body_json(self) -> String {
        self.row().error_body_json()
    }
}

/// What an upstream answer with `status` becomes: passed through (`None`), or a diagnostic.
/// `producer_epoch`: the answer carries `Producer-Epoch`.
pub fn upstream_failure(status: u16, producer_epoch: bool) -> Option<ProxyFailure> {
    Some(match status {
        100..=399 => return None,
        400 => ProxyFailure::BadRequest,
        401 => ProxyFailure::UpstreamAuth,
        403 if producer_epoch => ProxyFailure::StaleEpoch,
        403 => ProxyFailure::UpstreamAuth,
        404 => ProxyFailure::NotFound,
        409 => ProxyFailure::Conflict,
        410 => ProxyFailure::Gone,
        413 => ProxyFailure::TooLarge,
        429 => ProxyFailure::Busy,
        500..=599 => ProxyFailure::UpstreamFailed,
        _ => ProxyFailure::UpstreamRefused,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::diagnostic::is_diagnostic_code;

    #[test]
    fn only_an_upgraded_get_is_a_socket_read_and_only_its_101_passes_untouched() {
        let cases = [
            ("GET", Some("websocket"), true),
            ("GET", Some("WebSocket"), true),
            ("GET", Some(" websocket "), true),
            ("GET", Some("h2c"), false),
            ("GET", None, false),
            ("HEAD", Some("websocket"), false),
            ("POST", Some("websocket"), false),
        ];
        for (method, upgrade, expected) in cases {
            assert_eq!(
                is_socket_read(method, upgrade),
                expected,
                "{method} {upgrade:?}"
            );
        }
        assert!(passes_untouched(101));
        for status in [200, 204, 304, 404, 500] {
            assert!(!passes_untouched(status), "{status}");
        }
        // The upgrade is never forwarded as an ordinary header, nor passed back on a rebuilt answer.
        assert!(!forwards_request_header("upgrade"));
        assert!(!passes_response_header("upgrade"));
    }

    #[test]
    fn upstream_answers_map_to_the_clients_diagnostics() {
        let check = |status, epoch, expected: Option<ProxyFailure>| {
            assert_eq!(
                upstream_failure(status, epoch),
                expected,
                "{status} {epoch}"
            );
        };
        for status in [200, 204, 206, 304] {
            check(status, false, None);
        }
        check(400, false, Some(ProxyFailure::BadRequest));
        check(401, false, Some(ProxyFailure::UpstreamAuth));
        check(403, false, Some(ProxyFailure::UpstreamAuth));
        check(403, true, Some(ProxyFailure::StaleEpoch));
        check(404, false, Some(ProxyFailure::NotFound));
        check(409, true, Some(ProxyFailure::Conflict));
        check(410, false, Some(ProxyFailure::Gone));
        check(413, false, Some(ProxyFailure::TooLarge));
        check(429, false, Some(ProxyFailure::Busy));
        check(418, false, Some(ProxyFailure::UpstreamRefused));
        check(500, false, Some(ProxyFailure::UpstreamFailed));
        check(503, false, Some(ProxyFailure::UpstreamFailed));
    }

    #[test]
    fn headers_in_and_out() {
        for name in [
            "accept",
            "if-none-match",
            "producer-epoch",
            "stream-seq",
            "content-type",
        ] {
            assert!(forwards_request_header(name), "{name}");
        }
        for name in [
            "authorization",
            "cookie",
            "host",
            "accept-encoding",
            "x-forwarded-for",
            "origin",
        ] {
            assert!(!forwards_request_header(name), "{name}");
        }
        for name in [
            "content-type",
            "stream-next-offset",
            "cache-control",
            "etag",
            "stream-cursor",
        ] {
            assert!(passes_response_header(name), "{name}");
        }
        for name in [
            "content-length",
            "content-encoding",
            "set-cookie",
            "transfer-encoding",
            "www-authenticate",
        ] {
            assert!(!passes_response_header(name), "{name}");
        }
        for name in [
            "stream-next-offset",
            "producer-epoch",
            "producer-expected-seq",
            "retry-after",
        ] {
            assert!(keeps_on_failure(name), "{name}");
        }
        for name in ["content-type", "x-upstream-debug", "server", "set-cookie"] {
            assert!(!keeps_on_failure(name), "{name}");
        }
    }

    /// Writes are opt-in: without them every method but GET and HEAD is refused as read-only;
    /// with them POST is an append (for `writes.authorize` to allow) and nothing else is added.
    #[test]
    fn methods_by_write_access() {
        use MethodDecision::{Append, Read, Refuse};
        use ProxyFailure::{MethodNotAllowed, ReadOnly};
        use Writes::{Authorized, Refused};
        let cases = [
            ("GET", Refused, Read),
            ("HEAD", Refused, Read),
            ("POST", Refused, Refuse(ReadOnly)),
            ("PUT", Refused, Refuse(ReadOnly)),
            ("PATCH", Refused, Refuse(ReadOnly)),
            ("DELETE", Refused, Refuse(ReadOnly)),
            ("OPTIONS", Refused, Refuse(ReadOnly)),
            ("get", Refused, Refuse(ReadOnly)),
            ("GET", Authorized, Read),
            ("HEAD", Authorized, Read),
            ("POST", Authorized, Append),
            ("PUT", Authorized, Refuse(MethodNotAllowed)),
            ("DELETE", Authorized, Refuse(MethodNotAllowed)),
            ("OPTIONS", Authorized, Refuse(MethodNotAllowed)),
        ];
        for (method, writes, expected) in cases {
            assert_eq!(
                decide_method(method, writes),
                expected,
                "{method} {writes:?}"
            );
        }
        assert_eq!(ReadOnly.status(), 405);
        assert_eq!(ReadOnly.allow(), Some("GET, HEAD"));
        assert_eq!(MethodNotAllowed.allow(), Some("GET, HEAD, POST"));
        assert_eq!(ProxyFailure::WriteForbidden.status(), 403);
        for failure in ProxyFailure::ALL {
            assert_eq!(
                failure.allow().is_some(),
                failure.status() == 405,
                "{failure:?}"
            );
        }
    }

    #[test]
    fn every_row_is_a_versioned_diagnostic() {
        for failure in ProxyFailure::ALL {
            let d = failure.diagnostic();
            assert!(is_diagnostic_code(&d.code), "{}", d.code);
            assert!((400..=599).contains(&failure.status()), "{failure:?}");
            assert!(failure
                .error_body_json()
                .starts_with(r#"{"error":{"version":1,"code":""#));
        }
    }
}
