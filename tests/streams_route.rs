//! The Worker's side of the streams routes (`cloudflare::streams::route`): preflight, the
//! streams token (constant-time compare), the stream name, the declared body size (a 413 that
//! reads the body first), and what is not a streams path. (The chat-stream proxy's route is the
//! demo Worker's: tests/worker_routes.rs.)
#![cfg(feature = "cloudflare")]

use turnkeep::cloudflare::streams::route::{
    bearer, chat_stream_name, decide, decode_component, same_text, stream_name, RouteRequest,
    StreamRoute, StreamsAccess, PREFLIGHT_HEADERS, SECURITY_HEADERS,
};
use turnkeep::core::limits::{STREAM_APPEND_BYTES_MAX, STREAM_NAME_BYTES_MAX};

fn request<'a>(method: &'a str, path: &'a str, authorization: Option<&'a str>) -> RouteRequest<'a> {
    RouteRequest {
        method,
        path,
        authorization,
        content_length: None,
    }
}

fn token(t: &str) -> StreamsAccess {
    StreamsAccess::from_env(None, Some(t))
}

/// The status and code of a refusal, or a label for the other decisions.
fn outcome(route: &StreamRoute) -> String {
    match route {
        StreamRoute::NotMine => "not mine".into(),
        StreamRoute::Preflight => "preflight".into(),
        StreamRoute::Refuse(r) => format!("{} {}", r.status, r.code),
        StreamRoute::Forward { stream } => format!("forward {stream}"),
    }
}

fn check(req: RouteRequest<'_>, access: &StreamsAccess, expected: &str) {
    assert_eq!(outcome(&decide(&req, access)), expected, "{req:?}");
}

#[test]
fn the_streams_route_needs_the_token_unless_public() {
    let secret = token("s3cret");
    check(
        request("GET", "/v1/stream/a", None),
        &secret,
        "401 streams.v1.unauthorized",
    );
    check(
        request("GET", "/v1/stream/a", Some("Bearer nope")),
        &secret,
        "401 streams.v1.unauthorized",
    );
    check(
        request("GET", "/v1/stream/a", Some("Bearer s3cret")),
        &secret,
        "forward a",
    );
    check(
        request("GET", "/v1/stream/a", Some("bearer   s3cret")),
        &secret,
        "forward a",
    );
    check(
        request("GET", "/v1/stream/a", Some("Basic s3cret")),
        &secret,
        "401 streams.v1.unauthorized",
    );
    check(
        request("GET", "/v1/stream/a", Some("Bearer s3cret extra")),
        &secret,
        "401 streams.v1.unauthorized",
    );
    // No token configured and not public: nobody gets in.
    let none = StreamsAccess::from_env(None, None);
    check(
        request("GET", "/v1/stream/a", Some("Bearer ")),
        &none,
        "401 streams.v1.unauthorized",
    );
    check(
        request("GET", "/v1/stream/a", None),
        &StreamsAccess::from_env(None, Some("")),
        "401 streams.v1.unauthorized",
    );
    let public = StreamsAccess::from_env(Some("1"), None);
    check(request("PUT", "/v1/stream/a", None), &public, "forward a");
    assert!(!StreamsAccess::from_env(Some("0"), None).public);
    assert!(StreamsAccess::from_env(Some("true"), None).public);
    // A 401 says how to authenticate.
    let StreamRoute::Refuse(r) = decide(&request("GET", "/v1/stream/a", None), &secret) else {
        panic!("refused expected")
    };
    assert_eq!(
        r.headers,
        vec![("www-authenticate", "Bearer realm=\"turnkeep streams\"")]
    );
    assert_eq!(
        r.body(),
        r#"{"error":{"version":1,"code":"streams.v1.unauthorized","message":"send Authorization: Bearer <streams token>","retryable":false}}"#
    );
}

#[test]
fn preflight_is_answered_before_auth() {
    check(
        request("OPTIONS", "/v1/stream/a", None),
        &token("t"),
        "preflight",
    );
    assert!(PREFLIGHT_HEADERS
        .iter()
        .any(|(n, v)| *n == "access-control-allow-methods" && v.contains("OPTIONS")));
    assert!(SECURITY_HEADERS
        .iter()
        .any(|(n, v)| *n == "access-control-allow-origin" && *v == "*"));
}

#[test]
fn stream_names_are_decoded_bounded_and_free_of_control_characters() {
    let long = "n".repeat(STREAM_NAME_BYTES_MAX);
    let too_long = "n".repeat(STREAM_NAME_BYTES_MAX + 1);
    let cases: &[(&str, Option<&str>)] = &[
        ("a", Some("a")),
        ("chat/t1/s1", Some("chat/t1/s1")),
        ("a%20b", Some("a b")),
        ("caf%C3%A9", Some("café")),
        ("a+b", Some("a+b")),
        ("", None),
        ("%", None),
        ("%zz", None),
        ("%+1", None),
        ("%C3", None),
        ("a%0Ab", None),
        ("a%7Fb", None),
        (&long, Some(&long)),
        (&too_long, None),
    ];
    for (raw, expected) in cases {
        assert_eq!(stream_name(raw).as_deref(), *expected, "{raw:?}");
    }
    let public = StreamsAccess::from_env(Some("1"), None);
    check(
        request("GET", "/v1/stream/", None),
        &public,
        "400 streams.v1.name_invalid",
    );
    check(
        request("GET", "/v1/stream/%E0%A4", None),
        &public,
        "400 streams.v1.name_invalid",
    );
    assert_eq!(decode_component("a%2Fb").as_deref(), Some("a/b"));
}

#[test]
fn a_declared_body_over_the_append_limit_is_refused_after_the_body_is_read() {
    let public = StreamsAccess::from_env(Some("1"), None);
    let over = (STREAM_APPEND_BYTES_MAX + 1).to_string();
    let at = STREAM_APPEND_BYTES_MAX.to_string();
    fn with_length(n: &str) -> RouteRequest<'_> {
        RouteRequest {
            content_length: Some(n),
            ..request("POST", "/v1/stream/a", None)
        }
    }
    let refused = decide(&with_length(&over), &public);
    let StreamRoute::Refuse(r) = &refused else {
        panic!("413 expected, got {refused:?}")
    };
    assert_eq!((r.status, r.code), (413, "streams.v1.append_too_large"));
    assert!(
        r.drain_body,
        "the client finishes sending before it gets the 413"
    );
    check(with_length(&at), &public, "forward a");
    // An unreadable length is left to the object's bounded body read.
    check(with_length("lots"), &public, "forward a");
    // Auth comes first: a stranger's large body is a 401, not read.
    let StreamRoute::Refuse(r) = decide(&with_length(&over), &token("t")) else {
        panic!("401 expected")
    };
    assert_eq!(r.status, 401);
    assert!(!r.drain_body);
}

#[test]
fn other_paths_are_not_the_streams_routes() {
    assert_eq!(chat_stream_name("t", "s"), "chat/t/s");
    for path in [
        "/",
        "/v1/streams/a",
        "/v1/stream",
        "/api/chat/stream/a/b",
        "/api/chat/stream",
        "/api/chat/stream/s1",
    ] {
        check(request("GET", path, None), &token("t"), "not mine");
    }
}

#[test]
fn bearer_values_and_constant_time_comparison() {
    assert_eq!(bearer(Some("Bearer abc")), Some("abc"));
    assert_eq!(bearer(Some("BEARER\tabc")), Some("abc"));
    assert_eq!(bearer(Some("Bearerabc")), None);
    assert_eq!(bearer(Some("Bearer")), None);
    assert_eq!(bearer(Some("Bearér x")), None);
    assert_eq!(bearer(None), None);
    assert!(same_text(b"abc", b"abc"));
    assert!(!same_text(b"abc", b"abd"));
    assert!(!same_text(b"abc", b"abcd"));
    assert!(!same_text(b"", b"a"));
    assert!(same_text(b"", b""));
}
