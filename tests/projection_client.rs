//! What a client of the projection relies on besides the messages: the running turn (the run
//! started and not ended: what a Stop button in any tab names) and a start from messages the
//! client already holds (a server-rendered seed, or TanStack UI messages).
#![cfg(not(target_arch = "wasm32"))]

use serde_json::{json, Value};
use turnkeep::core::projection::Projection;
use turnkeep::core::protocol::MessageStatus;

fn fed(chunks: &[Value]) -> Projection {
    let mut p = Projection::new();
    p.feed_all(chunks);
    p
}

#[test]
fn the_active_run_is_the_last_started_and_not_ended() {
    let started = |id: &str| json!({ "type": "RUN_STARTED", "runId": id, "threadId": "s1" });
    let check = |chunks: &[Value], expected: Option<&str>| {
        assert_eq!(fed(chunks).active_run(), expected, "{chunks:?}");
    };
    check(&[], None);
    check(&[started("t1")], Some("t1"));
    check(
        &[
            started("t1"),
            json!({ "type": "RUN_FINISHED", "runId": "t1" }),
        ],
        None,
    );
    check(
        &[
            started("t1"),
            json!({ "type": "RUN_ERROR", "runId": "t1", "message": "m" }),
        ],
        None,
    );
    // A run whose writer died is replaced by the next one.
    check(&[started("t1"), started("t2")], Some("t2"));
    check(&[json!({ "type": "RUN_STARTED" })], None);
}

#[test]
fn a_projection_starts_from_canonical_or_ui_messages() {
    let canonical = json!([
        { "id": "u1", "role": "user", "content": "hi", "status": "complete", "createdAt": "2026-07-11T03:00:00.000Z" },
        { "id": "a1", "role": "assistant", "content": "half", "status": "streaming", "createdAt": "2026-07-11T03:00:00.001Z" },
    ]);
    let mut p = Projection::from_initial(&canonical, None);
    assert_eq!(p.chunk_count(), 0);
    p.feed(&json!({ "type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": " done" }));
    p.feed(&json!({ "type": "TEXT_MESSAGE_END", "messageId": "a1" }));
    let messages = p.to_messages();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1].content, "half done");
    assert_eq!(messages[1].status, MessageStatus::Complete);

    let ui = json!([{ "id": "u1", "role": "user", "parts": [{ "type": "text", "content": "from tanstack" }] }]);
    assert_eq!(
        Projection::from_initial(&ui, None).to_messages()[0].content,
        "from tanstack"
    );
    assert!(Projection::from_initial(&json!(null), None).is_empty());
    assert!(Projection::from_initial(&json!([]), None).is_empty());
    // A seed taken mid-turn carries the running turn; its end clears it.
    let mut mid = Projection::from_initial(&canonical, Some("t1"));
    assert_eq!(mid.active_run(), Some("t1"));
    mid.feed(&json!({ "type": "RUN_FINISHED", "runId": "t1" }));
    assert_eq!(mid.active_run(), None);
}
