//! The demo Worker's route table and demo auth (`cloudflare::routes`): every route of design §8,
//! the methods each answers, and the diagnostics of a bad tenant or session id.
#![cfg(feature = "cloudflare")]

use turnkeep::cloudflare::routes::{
    chat_session_name, demo_tenant, session_view_target, Diagnostic, Route, CHART_SCRIPT_PATH,
};

#[test]
fn every_route_of_the_table() {
    let cases: &[(&str, Route)] = &[
        ("/", Route::Page),
        ("/api/chat", Route::Chat),
        ("/api/ask", Route::Ask),
        ("/mcp/sandbox", Route::Sandbox),
        (CHART_SCRIPT_PATH, Route::ChartScript),
        ("/api/sessions/s1", Route::Session("s1".into())),
        ("/api/sessions/a%2Fb", Route::Session("a%2Fb".into())),
        ("/api/sessions/", Route::Other),
        ("/api/sessions/a/b", Route::Other),
        ("/api/chat/", Route::Other),
        ("/v1/stream/a", Route::Other),
        ("/api/chat/stream/s1", Route::Other),
        ("/nope", Route::Other),
    ];
    for (path, expected) in cases {
        assert_eq!(&Route::of(path), expected, "{path}");
    }
}

#[test]
fn methods_each_route_answers() {
    let cases: &[(&str, &str, bool)] = &[
        ("/", "GET", true),
        ("/", "HEAD", true),
        ("/", "POST", false),
        (CHART_SCRIPT_PATH, "GET", true),
        (CHART_SCRIPT_PATH, "DELETE", false),
        ("/api/sessions/s1", "GET", true),
        ("/api/sessions/s1", "HEAD", false),
        ("/api/sessions/s1", "DELETE", false),
        // The handlers check their own methods (with their own diagnostics).
        ("/api/chat", "GET", true),
        ("/api/ask", "PUT", true),
        ("/mcp/sandbox", "POST", true),
    ];
    for (path, method, allowed) in cases {
        assert_eq!(Route::of(path).allows(method), *allowed, "{method} {path}");
    }
    let refusal = Diagnostic::method_not_allowed("GET, HEAD");
    assert_eq!(refusal.status, 405);
    assert_eq!(refusal.headers, vec![("allow", "GET, HEAD".to_string())]);
    assert_eq!(
        refusal.body(),
        r#"{"error":{"version":1,"code":"REQUEST_METHOD_NOT_ALLOWED","message":"Only GET, HEAD is supported.","retryable":false}}"#
    );
}

#[test]
fn demo_auth_takes_a_safe_id_tenant_and_nothing_else() {
    assert_eq!(demo_tenant(Some("Bearer tenant-1")), Ok("tenant-1"));
    assert_eq!(demo_tenant(Some("bearer t.1:x")), Ok("t.1:x"));
    for bad in [
        None,
        Some(""),
        Some("Bearer"),
        Some("Bearer a/b"),
        Some("Bearer -a"),
        Some("Token t"),
    ] {
        let refusal = demo_tenant(bad).unwrap_err();
        assert_eq!(
            (refusal.status, refusal.code),
            (401, "AUTH_REQUIRED"),
            "{bad:?}"
        );
        assert_eq!(refusal.headers[0].0, "www-authenticate");
    }
}

#[test]
fn the_session_view_needs_a_tenant_then_a_safe_id_session() {
    assert_eq!(
        session_view_target(Some("Bearer t"), "s%2D1"),
        Ok(("t".to_string(), "s-1".to_string()))
    );
    assert_eq!(
        session_view_target(None, "s1").unwrap_err().code,
        "AUTH_REQUIRED"
    );
    for raw in ["a%2Fb", "%", "%E0", "-x"] {
        assert_eq!(
            session_view_target(Some("Bearer t"), raw).unwrap_err().code,
            "REQUEST_INVALID_SESSION_ID",
            "{raw}"
        );
    }
    assert_eq!(chat_session_name("t", "s"), "t/s");
}
