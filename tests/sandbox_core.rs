//! The ui:// sandbox's decisions (`core::sandbox`), data-driven: URI checks, theme selection
//! and fallback, resources and their declared origins, the CSP, and hostile strings through
//! every injected value (theme values, theme names, URIs, declared origins).
#![cfg(not(target_arch = "wasm32"))]

use serde_json::{json, Value};
use turnkeep::core::sandbox::csp::hash_source;
use turnkeep::core::sandbox::{
    check_ui_uri, content_security_policy, decode_resource, decode_themes, render_page,
    select_theme, theme_style, Resource, ResourceCsp, SandboxFailure, Theme, UriError,
};

#[test]
fn only_ui_uris_pass() {
    for (uri, want) in [
        (Some("ui://demo/hello"), Ok("ui://demo/hello")),
        (
            Some("ui://widgets.example/weather/card.js"),
            Ok("ui://widgets.example/weather/card.js"),
        ),
        (Some("ui://demo"), Ok("ui://demo")),
        (None, Err(UriError::Missing)),
        (Some(""), Err(UriError::NotUi)),
        (Some("https://demo/hello"), Err(UriError::NotUi)),
        (Some("UI://demo/hello"), Err(UriError::NotUi)),
        (Some("javascript:alert(1)//ui://x"), Err(UriError::NotUi)),
        (Some("ui:///path"), Err(UriError::NoHost)),
        (
            Some("ui://demo/\"><script>alert(1)</script>"),
            Err(UriError::BadCharacter),
        ),
        (Some("ui://demo/a b"), Err(UriError::BadCharacter)),
        (Some("ui://demo/a\nb"), Err(UriError::BadCharacter)),
    ] {
        assert_eq!(check_ui_uri(uri), want, "{uri:?}");
    }
    let long = format!("ui://demo/{}", "a".repeat(2_048));
    assert_eq!(check_ui_uri(Some(&long)), Err(UriError::TooLong));
}

fn themes() -> Vec<Theme> {
    decode_themes(&json!({
        "default": { "--ns-color-text": "#111111", "--not-ns-token": "ignored", "color": "red" },
        "dark": { "--ns-color-text": "#eeeeee" },
    }))
    .unwrap()
}

#[test]
fn themes_fall_back_to_the_default_then_the_first() {
    let t = themes();
    assert_eq!(
        t[0].tokens,
        vec![("--ns-color-text".to_owned(), "#111111".to_owned())],
        "only --ns-* tokens are kept"
    );
    for (requested, default, want) in [
        (Some("dark"), "default", "dark"),
        (Some("unknown"), "default", "default"),
        (None, "default", "default"),
        (Some("  "), "default", "default"),
        (Some("unknown"), "dark", "dark"),
        (Some("unknown"), "missing", "default"),
    ] {
        assert_eq!(
            select_theme(&t, requested, default).name,
            want,
            "{requested:?} {default}"
        );
    }
    let empty = select_theme(&[], Some("dark"), "default");
    assert_eq!((empty.name.as_str(), empty.tokens.len()), ("default", 0));
    assert!(
        decode_themes(&json!({ "default": { "--ns-x": 1 } })).is_err(),
        "values are strings"
    );
    assert!(decode_themes(&json!([])).is_err());
}

#[test]
fn resources_and_their_declared_origins() {
    assert_eq!(decode_resource(&Value::Null), Ok(None));
    assert_eq!(
        decode_resource(&json!("<p>x</p>")).unwrap().unwrap().csp,
        ResourceCsp::default()
    );
    let r = decode_resource(&json!({ "body": "<p>x</p>", "csp": { "resourceDomains": ["HTTPS://CDN.example.com", "https://*.example.org:8443"] } }))
        .unwrap()
        .unwrap();
    assert_eq!(
        r.csp.resource_domains,
        ["https://cdn.example.com", "https://*.example.org:8443"]
    );
    // Anything that would widen or break the policy is refused, not passed through.
    for hostile in [
        "'unsafe-inline'",
        "*",
        "data:",
        "https://a.example; script-src *",
        "https://a.example 'unsafe-eval'",
        "https://a.example/path",
        "javascript://x",
        "https://",
        "https://a.example:99999",
    ] {
        let v = json!({ "body": "", "csp": { "resourceDomains": [hostile] } });
        assert!(decode_resource(&v).is_err(), "{hostile}");
    }
    assert!(
        decode_resource(&json!({ "body": "", "csp": { "scriptSrc": ["https://a.example"] } }))
            .is_err(),
        "unknown list"
    );
    assert!(decode_resource(&json!({ "html": "" })).is_err());
    assert!(decode_resource(&json!(42)).is_err());
}

#[test]
fn the_csp_denies_by_default_and_allows_exactly_what_was_declared() {
    let style = ":root {}";
    let none = content_security_policy(&ResourceCsp::default(), style);
    assert_eq!(
        none,
        format!(
            "default-src 'none'; script-src 'none'; style-src {}; img-src data:; font-src 'none'; media-src 'none'; connect-src 'none'; frame-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'; sandbox allow-scripts",
            hash_source(style)
        )
    );
    let declared = ResourceCsp {
        resource_domains: vec!["https://cdn.example.com".into()],
        connect_domains: vec!["wss://live.example.com".into()],
        ..ResourceCsp::default()
    };
    let csp = content_security_policy(&declared, style);
    for directive in [
        "script-src https://cdn.example.com",
        "img-src data: https://cdn.example.com",
        "connect-src wss://live.example.com",
        "frame-src 'none'",
    ] {
        assert!(
            csp.split("; ")
                .any(|d| d == directive || d.starts_with(&format!("{directive} "))),
            "{directive} in {csp}"
        );
    }
    assert!(!csp.contains("unsafe"), "no unsafe-* ever");
    // The hash is the style element's exact text, as browsers compute it.
    assert_eq!(
        hash_source(""),
        "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
    );
}

#[test]
fn hostile_theme_values_and_names_stay_inert() {
    let hostile_value =
        "red; } body { background: url(https://evil.example/x) } </style><script>alert(1)</script>";
    let hostile_name = "\"><script>alert(1)</script><x a='";
    let theme = Theme {
        name: hostile_name.into(),
        tokens: vec![
            ("--ns-color-surface".into(), hostile_value.into()),
            ("--ns-open".into(), "calc(".into()),
        ],
    };
    let page = render_page(
        &Resource {
            body: "<main>ok</main>".into(),
            csp: ResourceCsp::default(),
        },
        &theme,
    );
    let style = theme_style(&theme);
    // One style element, closed by us; the values contain no syntax of their own.
    assert!(!style.contains('<'), "{style}");
    assert_eq!(page.html.matches("</style>").count(), 1);
    assert_eq!(page.html.matches("<script>").count(), 0, "{}", page.html);
    assert_eq!(
        style.matches('{').count(),
        2,
        "only our two rule blocks: {style}"
    );
    assert_eq!(style.matches('}').count(), 2, "{style}");
    assert!(
        style.contains("--ns-open: calc\\28 ;"),
        "an unbalanced ( is escaped: {style}"
    );
    assert!(
        page.html.contains(
            "data-theme=\"&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;x a=&#39;\""
        ),
        "{}",
        page.html
    );
    // The style block is the one the CSP hashes.
    assert!(page.content_security_policy.contains(&hash_source(&style)));
    assert!(
        page.html.find("</style>").unwrap() < page.html.find("<main>ok</main>").unwrap(),
        "theme before the body"
    );
}

#[test]
fn failures_are_versioned_diagnostics_that_echo_nothing() {
    for f in SandboxFailure::ALL {
        let body: Value = serde_json::from_str(&f.error_body_json()).unwrap();
        assert_eq!(body["error"]["version"], 1);
        assert_eq!(body["error"]["code"], f.row().code);
    }
    assert_eq!(SandboxFailure::UriInvalid.status(), 400);
    assert_eq!(SandboxFailure::NotFound.status(), 404);
}
