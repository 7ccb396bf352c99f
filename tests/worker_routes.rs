//! The demo Worker's route table and demo auth (`cloudflare::routes`): every route of README.md's "The demo Worker",
//! the methods each answers, and the diagnostics of a bad tenant or session id.
#![cfg(feature = "cloudflare")]

use turnkeep::cloudflare::routes::{
    chat_session_name, chat_stream_route, demo_tenant, session_view_target, ChatStreamRoute,
    Diagnostic, Route, CHART_SCRIPT_PATH,
};

#[test]
fn every_route_of_the_table() {
    let cases: &[(&str, Route)] = &[
        ("/", Route::Page),
        ("/api/chat", Route::Chat),
        ("/api/ui/chat", Route::UiChat),
        ("/api/ui/chat/c1/stream", Route::UiChat),
        ("/api/ui/chat/c1/stop", Route::UiChat),
        ("/api/ui/chatx", Route::Other),
        ("/api/ask", Route::Ask),
        ("/mcp/sandbox", Route::Sandbox),
        (CHART_SCRIPT_PATH, Route::ChartScript),
        ("/api/sessions/s1", Route::Session("s1".into())),
        ("/api/sessions/a%2Fb", Route::Session("a%2Fb".into())),
        ("/api/sessions/", Route::Other),
        ("/api/sessions/a/b", Route::Other),
        ("/api/chat/", Route::Other),
        ("/v1/stream/a", Route::Other),
        ("/api/chat/stream/s1", Route::ChatStream("s1".into())),
        ("/api/chat/stream/a%2Fb", Route::ChatStream("a%2Fb".into())),
        ("/api/chat/stream/a/b", Route::Other),
        ("/api/chat/stream/", Route::Other),
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
        ("/api/chat/stream/s1", "OPTIONS", true),
        ("/api/ui/chat/c1/stream", "GET", true),
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

/// The status and code of a refusal, or a label for the other decisions.
fn chat_stream(method: &str, authorization: Option<&str>, raw: &str) -> String {
    match chat_stream_route(method, authorization, raw) {
        ChatStreamRoute::Preflight => "preflight".into(),
        ChatStreamRoute::Refuse(d) => format!("{} {}", d.status, d.code),
        ChatStreamRoute::Proxy(read) => format!(
            "proxy {} ({}/{}){}",
            read.stream,
            read.tenant,
            read.session_id,
            if read.create_missing {
                " create-missing"
            } else {
                ""
            }
        ),
    }
}

/// The route reads the tenant's own stream from the Worker's own object: no streams token is
/// needed or attached, whatever the environment says (`npm start` has none).
#[test]
fn the_chat_stream_route_reads_the_tenants_own_stream() {
    let cases: &[(&str, Option<&str>, &str, &str)] = &[
        (
            "GET",
            Some("Bearer tenant-a"),
            "s1",
            "proxy chat/tenant-a/s1 (tenant-a/s1) create-missing",
        ),
        // A HEAD only looks: it creates nothing.
        (
            "HEAD",
            Some("Bearer t"),
            "s%2D1",
            "proxy chat/t/s-1 (t/s-1)",
        ),
        // A preflight before anything else; browsers never write the log.
        ("OPTIONS", None, "s1", "preflight"),
        // Browsers never write the log: the proxy's read-only refusal, before auth.
        ("POST", Some("Bearer t"), "s1", "405 STREAM_READ_ONLY"),
        ("POST", None, "s1", "405 STREAM_READ_ONLY"),
        ("DELETE", Some("Bearer t"), "s1", "405 STREAM_READ_ONLY"),
        ("PUT", Some("Bearer t"), "s1", "405 STREAM_READ_ONLY"),
        // Demo auth, then the session id.
        ("GET", None, "s1", "401 AUTH_REQUIRED"),
        ("GET", Some("Bearer a/b"), "s1", "401 AUTH_REQUIRED"),
        ("GET", Some("Basic YWNtZTpw"), "s1", "401 AUTH_REQUIRED"),
        (
            "GET",
            Some("Bearer t"),
            "a%2Fb",
            "400 REQUEST_INVALID_SESSION_ID",
        ),
        (
            "GET",
            Some("Bearer t"),
            "%",
            "400 REQUEST_INVALID_SESSION_ID",
        ),
    ];
    for (method, authorization, raw, expected) in cases {
        assert_eq!(
            chat_stream(method, *authorization, raw),
            *expected,
            "{method} {authorization:?} {raw}"
        );
    }
    // The 401 is the demo's versioned diagnostic, with its challenge.
    let ChatStreamRoute::Refuse(refusal) = chat_stream_route("GET", None, "s1") else {
        panic!("a refusal");
    };
    assert_eq!(refusal.headers[0].0, "www-authenticate");
    assert!(refusal.body().contains(r#""version":1"#));
    // A write is the proxy's read-only diagnostic, with what the route serves.
    let ChatStreamRoute::Refuse(write) = chat_stream_route("POST", Some("Bearer t"), "s1") else {
        panic!("a refusal");
    };
    assert_eq!(write.status, 405);
    assert_eq!(write.headers, vec![("allow", "GET, HEAD".to_string())]);
    assert!(write.body().contains(r#""code":"STREAM_READ_ONLY""#));
}

#[test]
fn a_socket_read_takes_the_pages_tenant_only_from_the_workers_own_origin() {
    use turnkeep::cloudflare::routes::socket_authorization;
    let own = "https://chat.example";
    let cookie = Some("a=1; turnkeep_tenant=acme; b=2");
    let cases: [(Option<&str>, Option<&str>, Option<&str>, Option<&str>); 7] = [
        // A header given is used as it is (servers, Node clients): demo auth judges it.
        (Some("Bearer globex"), cookie, None, Some("Bearer globex")),
        // A page of the Worker's own origin: its tenant cookie.
        (None, cookie, Some(own), Some("Bearer acme")),
        // Another site's page, or no Origin at all: the cookie is not taken.
        (None, cookie, Some("https://evil.example"), None),
        (None, cookie, None, None),
        // No cookie, or a tenant that is not a SafeId: the page's own default tenant.
        (None, None, Some(own), Some("Bearer demo")),
        (
            None,
            Some("turnkeep_tenant=a%2Fb"),
            Some(own),
            Some("Bearer demo"),
        ),
        (
            None,
            Some("turnkeep_tenant="),
            Some(own),
            Some("Bearer demo"),
        ),
    ];
    for (authorization, cookie, origin, expected) in cases {
        assert_eq!(
            socket_authorization(authorization, cookie, origin, own).as_deref(),
            expected,
            "{authorization:?} {cookie:?} {origin:?}"
        );
    }
}
