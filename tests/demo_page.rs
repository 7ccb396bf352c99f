//! The demo page's decisions (`cloudflare::page`): which session `GET /` shows or sends the
//! browser to, and the server-rendered page (conversation, seed, panes, running turn) filled
//! into the template the Worker compiles in.
#![cfg(feature = "cloudflare")]

use serde_json::{json, Value};
use turnkeep::cloudflare::page::{
    cookie_value, page_request, query_value, render_page, PageRequest, PageTarget,
};
use turnkeep::core::projection::Projection;

const TEMPLATE: &str = include_str!("../js/cloudflare/demo-page.html");

fn decide(search: &str, cookie: Option<&str>) -> String {
    match page_request(search, cookie, || "session-fresh".to_owned()) {
        PageRequest::Redirect { location } => format!("302 {location}"),
        PageRequest::Render(t) => format!("render {} {} {}", t.tenant, t.session_id, t.panes),
    }
}

#[test]
fn which_session_a_request_shows() {
    let cases: &[(&str, Option<&str>, &str)] = &[
        ("?session=s1", None, "render demo s1 1"),
        ("?session=s1&panes=3", None, "render demo s1 3"),
        ("?panes=3&session=s%2D1", None, "render demo s-1 3"),
        ("?session=s1&panes=2", None, "render demo s1 1"),
        // The tenant is the cookie's when it is a SafeId.
        (
            "?session=s1",
            Some("turnkeep_tenant=acme"),
            "render acme s1 1",
        ),
        (
            "?session=s1",
            Some("a=b; turnkeep_tenant=acme; c=d"),
            "render acme s1 1",
        ),
        (
            "?session=s1",
            Some("turnkeep_tenant=..%2Facme"),
            "render demo s1 1",
        ),
        // No session: the one this browser showed last, else a new one.
        ("", None, "302 /?session=session-fresh"),
        ("?panes=3", None, "302 /?session=session-fresh&panes=3"),
        ("", Some("turnkeep_session=s9"), "302 /?session=s9"),
        (
            "?panes=3",
            Some("x=1; turnkeep_session=s9"),
            "302 /?session=s9&panes=3",
        ),
        (
            "",
            Some("turnkeep_session=%3Cscript%3E"),
            "302 /?session=session-fresh",
        ),
        // `?new`: always a new one.
        (
            "?new",
            Some("turnkeep_session=s9"),
            "302 /?session=session-fresh",
        ),
        ("?new&panes=3", None, "302 /?session=session-fresh&panes=3"),
        ("?new&session=s1", None, "302 /?session=session-fresh"),
        // A session id that is not a SafeId is a new session.
        ("?session=a%2Fb", None, "302 /?session=session-fresh"),
        ("?session=", Some("turnkeep_session=s9"), "302 /?session=s9"),
        ("?session=%", None, "302 /?session=session-fresh"),
    ];
    for (search, cookie, expected) in cases {
        assert_eq!(decide(search, *cookie), *expected, "{search} {cookie:?}");
    }
    let mut drew = false;
    page_request("?session=s1", None, || {
        drew = true;
        String::new()
    });
    assert!(!drew, "a fresh id is drawn only when needed");
}

#[test]
fn query_and_cookie_values() {
    assert_eq!(query_value("?a=1&b&c=x%20y", "a").as_deref(), Some("1"));
    assert_eq!(query_value("a=1&b&c=x%20y", "b").as_deref(), Some(""));
    assert_eq!(query_value("?a=1&b&c=x%20y", "c").as_deref(), Some("x y"));
    assert_eq!(query_value("?a=1", "z"), None);
    assert_eq!(query_value("?a=%", "a"), None);
    assert_eq!(cookie_value(Some("k=v;  j = w"), "k").as_deref(), Some("v"));
    assert_eq!(cookie_value(Some("k=v"), "j"), None);
    assert_eq!(cookie_value(None, "k"), None);
}

fn target(panes: u8) -> PageTarget {
    PageTarget {
        tenant: "acme".into(),
        session_id: "s1".into(),
        panes,
    }
}

fn turn(text: &str, finished: bool) -> Vec<Value> {
    let mut chunks = vec![
        json!({ "type": "RUN_STARTED", "runId": "t1", "threadId": "s1" }),
        json!({ "type": "TEXT_MESSAGE_START", "messageId": "u1", "role": "user" }),
        json!({ "type": "TEXT_MESSAGE_CONTENT", "messageId": "u1", "delta": "question </script><b>" }),
        json!({ "type": "TEXT_MESSAGE_END", "messageId": "u1" }),
        json!({ "type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant" }),
        json!({ "type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": text }),
    ];
    if finished {
        chunks.push(json!({ "type": "TEXT_MESSAGE_END", "messageId": "a1" }));
        chunks.push(json!({ "type": "RUN_FINISHED", "runId": "t1", "threadId": "s1" }));
    }
    chunks
}

fn projection(chunks: &[Value]) -> Projection {
    let mut p = Projection::new();
    p.feed_all(chunks);
    p
}

/// The seed the page's script reads (the JSON in `<script id="seed">`).
fn seed(html: &str) -> Value {
    let start = html.find(r#"id="seed">"#).expect("a seed") + r#"id="seed">"#.len();
    let end = start + html[start..].find("</script>").expect("its end");
    serde_json::from_str(&html[start..end]).expect("JSON")
}

#[test]
fn an_empty_session_shows_the_empty_state() {
    let html = render_page(TEMPLATE, &target(1), &Projection::new(), None);
    assert!(
        html.contains(r#"<div id="empty">"#),
        "the empty state is shown"
    );
    assert!(html.contains(r#"<button id="stop" type="button" disabled>"#));
    assert_eq!(
        seed(&html),
        json!({ "sessionId": "s1", "offset": null, "activeRunId": null, "messages": [], "confirmations": [] })
    );
    assert!(!html.contains("{{"), "every slot is filled");
    assert!(html.contains(r#"data-tenant="acme" data-session="s1""#));
}

#[test]
fn a_running_turn_is_in_the_html_with_its_seed() {
    let p = projection(&turn("w1 w2", false));
    let html = render_page(TEMPLATE, &target(1), &p, Some("0000_0042"));
    assert!(html.contains(r#"<div id="empty" hidden>"#));
    assert!(html.contains(r#"<div class="text">question &lt;/script&gt;&lt;b&gt;</div>"#));
    assert!(html.contains(r#"<article class="msg assistant streaming" data-message-id="a1">"#));
    assert!(html.contains(r#"<div class="text">w1 w2</div>"#));
    assert!(
        html.contains(r#"<button id="stop" type="button">"#),
        "Stop is enabled"
    );
    assert!(html.contains(r#"class="pill streaming" id="status">streaming<"#));
    let seed = seed(&html);
    assert_eq!(seed["offset"], "0000_0042");
    assert_eq!(seed["activeRunId"], "t1");
    assert_eq!(seed["messages"][0]["content"], "question </script><b>");
    // The seed cannot end its script element: every `<` is escaped.
    let start = html.find(r#"id="seed">"#).unwrap();
    assert!(!html[start..].contains("</script><b>"));
    assert_eq!(html.matches(r#"id="messages""#).count(), 1);
}

#[test]
fn three_panes_hold_the_same_conversation() {
    let p = projection(&turn("done", true));
    let html = render_page(TEMPLATE, &target(3), &p, Some("0000_0050"));
    assert_eq!(html.matches(r#"<section class="pane""#).count(), 3);
    assert_eq!(html.matches(r#"<div class="text">done</div>"#).count(), 3);
    assert_eq!(
        html.matches(r#"id="messages""#).count(),
        1,
        "only the first pane's list"
    );
    assert!(html.contains(r#"class="panes-3""#));
    assert!(html.contains(r#"href="/?session=s1">One pane<"#));
    assert!(
        html.contains(r#"<button id="stop" type="button" disabled>"#),
        "no turn runs"
    );
    assert_eq!(seed(&html)["activeRunId"], Value::Null);
    let one = render_page(TEMPLATE, &target(1), &p, None);
    assert!(one.contains(r#"href="/?session=s1&amp;panes=3">Three panes<"#));
}

#[test]
fn a_pending_confirmation_is_in_the_seed() {
    let mut chunks = turn("", false);
    chunks.push(json!({ "type": "TEXT_MESSAGE_END", "messageId": "a1" }));
    chunks.push(json!({
        "type": "RUN_FINISHED", "runId": "t1", "threadId": "s1",
        "outcome": { "type": "interrupt", "interrupts": [{ "id": "confirm-c1", "reason": "tool_call", "toolCallId": "c1",
            "expiresAt": "2026-07-11T03:05:00.000Z", "metadata": { "kind": "approval", "toolName": "transfer", "input": { "amount": 250 } } }] }
    }));
    let html = render_page(TEMPLATE, &target(1), &projection(&chunks), Some("1"));
    let confirmations = &seed(&html)["confirmations"];
    assert_eq!(confirmations[0]["token"], "confirm-c1");
    assert_eq!(confirmations[0]["status"], "pending");
    assert_eq!(confirmations[0]["input"], json!({ "amount": 250 }));
    // What a page seeds its projection with holds them again.
    let seeded =
        Projection::from_initial(&seed(&html)["messages"], None).with_confirmations(confirmations);
    assert_eq!(seeded.confirmations(), projection(&chunks).confirmations());
}
