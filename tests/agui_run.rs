//! AG-UI runs on the host (`core::agui`): the `RunAgentInput` TanStack AI's client and
//! `HttpAgent` send, decoded into a turn; what `hydrate` restores and what `joinRun` replays,
//! over logs real turns wrote (the turn pipeline with the demo model, a memory log). The client
//! itself judges them in tests/js/tanstack-connection.test.mjs and
//! tests/workerd/tanstack-chat.test.mjs (the real `@tanstack/ai-client`).
#![cfg(not(target_arch = "wasm32"))]

mod turn_support;

use std::rc::Rc;

use serde_json::{json, Value};
use turn_support::*;
use turnkeep::core::agui::{decode_run_input, hydration, is_run_input, RunJoin};
use turnkeep::core::projection::Projection;
use turnkeep::core::ui::{Approval, UiTurn};
use turnkeep::turn::{admit, open, run, Interrupt, Turn};

// ---- The request ----------------------------------------------------------------------------

fn run_input(extra: Value) -> Value {
    let mut body = json!({
        "threadId": "s1", "runId": "run-1796-abc", "state": {}, "tools": [], "context": [],
        "forwardedProps": {},
        "messages": [
            { "id": "msg-1", "role": "user", "parts": [{ "type": "text", "content": "hello" }] },
        ],
    });
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

#[test]
fn a_run_input_is_a_turn_of_the_thread_with_the_clients_message_id() {
    let cases = [
        // TanStack's UIMessage (text parts carry `content`).
        (run_input(json!({})), "run-1796-abc", "hello"),
        // AG-UI's message (`content` a string), as HttpAgent sends it; a run id that is not a
        // SafeId is derived from.
        (
            run_input(
                json!({ "runId": "a b", "messages": [{ "id": "u9", "role": "user", "content": "hi there" }] }),
            ),
            "run-h",
            "hi there",
        ),
    ];
    for (body, turn_prefix, text) in cases {
        assert!(is_run_input(&body));
        let request = decode_run_input(&body).expect("decodes");
        assert_eq!(request.session_id, "s1");
        let UiTurn::Send {
            turn_id,
            message_id,
            text: got,
            ..
        } = request.turn
        else {
            panic!("a send");
        };
        assert!(turn_id.starts_with(turn_prefix), "{turn_id}");
        assert_eq!(got, text);
        assert!(message_id.is_some());
    }
    let ai_sdk = json!({ "id": "s1", "trigger": "submit-message", "messages": [] });
    assert!(!is_run_input(&ai_sdk), "the AI SDK's body is not one");
}

#[test]
fn resume_entries_are_confirmation_decisions_and_the_messages_are_not_read() {
    let body = run_input(json!({
        "messages": [{ "id": "tool-c1", "role": "tool", "toolCallId": "c1", "content": "{\"approved\":true}" }],
        "resume": [
            { "interruptId": "confirm-c1", "status": "resolved", "payload": { "approved": true } },
            { "interruptId": "confirm-c2", "status": "resolved", "payload": { "approved": false, "reason": "no" } },
            { "interruptId": "confirm-c3", "status": "cancelled" },
        ],
    }));
    let request = decode_run_input(&body).expect("decodes");
    let approval = |token: &str, approved: bool, reason: Option<&str>| Approval {
        token: token.into(),
        approved,
        reason: reason.map(str::to_owned),
    };
    assert_eq!(
        request.turn,
        UiTurn::Approvals(vec![
            approval("confirm-c1", true, None),
            approval("confirm-c2", false, Some("no")),
            approval("confirm-c3", false, Some("cancelled")),
        ])
    );
}

#[test]
fn a_run_input_the_route_cannot_use_says_why() {
    let cases = [
        (run_input(json!({ "threadId": "no spaces" })), "threadId"),
        (run_input(json!({ "runId": "" })), "runId"),
        (run_input(json!({ "messages": [] })), "non-empty"),
        (
            run_input(json!({ "messages": [{ "id": "a", "role": "assistant", "content": "x" }] })),
            "user",
        ),
        (
            run_input(json!({ "messages": [{ "id": "u", "role": "user", "content": "  " }] })),
            "text",
        ),
        (run_input(json!({ "resume": {} })), "array"),
        (
            run_input(json!({ "resume": [{ "interruptId": "confirm-1", "status": "resolved" }] })),
            "approved",
        ),
        (
            run_input(json!({ "resume": [{ "interruptId": "bad id", "status": "cancelled" }] })),
            "token",
        ),
        (
            run_input(json!({ "resume": [{ "interruptId": "confirm-1", "status": "maybe" }] })),
            "status",
        ),
    ];
    for (body, detail) in cases {
        let error = decode_run_input(&body).expect_err("refused");
        assert!(
            error.detail.contains(detail),
            "{}: {}",
            detail,
            error.detail
        );
    }
}

// ---- hydrate and joinRun, over real turns ---------------------------------------------------

const SESSION: &str = "s1";

fn start(session: &Session, turn_id: &str, input: &str) -> Rc<Turn> {
    let ports = session.ports(true, 5);
    let chat = chat_setup(SESSION);
    let sub = submission(SESSION, turn_id, input);
    let deadline = Interrupt::new();
    block_on(&session.world, async {
        let claim = admit(&ports, &chat, &sub, &LIMITS, &deadline)
            .await
            .expect("claimed");
        let opened = open(&ports, &chat, &sub, &claim, &LIMITS, &deadline)
            .await
            .expect("opened");
        Turn::new(ports.clone(), LIMITS, sub.clone(), claim, opened)
    })
}

fn conversation(inputs: &[&str]) -> Session {
    let world = World::new();
    let session = Session::new(&world);
    for (i, input) in inputs.iter().enumerate() {
        let turn = start(&session, &format!("t{i}"), input);
        block_on(&session.world, run(turn, Rc::new(Sink::default())));
        session.world.advance(1_000);
    }
    session
}

#[test]
fn hydrate_restores_a_waiting_approval_as_the_interrupt_the_run_ended_with() {
    let session = conversation(&["hello", "/confirm 5"]);
    let chunks = session.log_store.chunks();
    let mut projection = Projection::new();
    projection.feed_all(&chunks);
    let restored = hydration(&projection);
    let ended = chunks
        .iter()
        .rev()
        .find(|c| c["type"] == "RUN_FINISHED")
        .unwrap();
    let interrupt = &ended["outcome"]["interrupts"][0];
    assert_eq!(
        interrupt["reason"], "approval_required",
        "one TanStack's client can answer"
    );
    assert_eq!(interrupt["metadata"]["kind"], "approval");
    assert_eq!(
        restored["interrupts"]["pending"][0], *interrupt,
        "hydrate says what the run said"
    );
    assert_eq!(restored["interrupts"]["runId"], "t1");
    assert_eq!(
        restored["activeRun"],
        Value::Null,
        "a pending interrupt takes precedence"
    );
    assert_eq!(
        restored["messages"],
        Value::Array(projection.native_messages())
    );

    // A seed of the messages alone (no confirmations known) names the same token.
    let seeded = Projection::from_initial(
        &serde_json::to_value(projection.to_messages()).unwrap(),
        None,
    );
    assert_eq!(
        hydration(&seeded)["interrupts"]["pending"][0]["id"],
        interrupt["id"]
    );

    let done = conversation(&["hello"]);
    let mut projection = Projection::new();
    projection.feed_all(&done.log_store.chunks());
    let restored = hydration(&projection);
    assert_eq!(restored["interrupts"], Value::Null);
    assert_eq!(restored["activeRun"], Value::Null);
}

/// A join at any chunk of any run: a client holding the conversation before the run's answer,
/// fed the join's chunks, holds what the log holds at the run's end, and the join ends there.
#[test]
fn a_run_joined_at_any_point_rebuilds_the_answer_then_follows_it() {
    let session = conversation(&["hello", "/tool cats", "/words 12", "/confirm 9"]);
    let chunks = session.log_store.chunks();
    let starts: Vec<usize> = (0..chunks.len())
        .filter(|&i| chunks[i]["type"] == "RUN_STARTED")
        .collect();
    assert_eq!(starts.len(), 4);
    for from in starts {
        let run_id = chunks[from]["runId"].as_str().unwrap();
        let to = from
            + chunks[from..]
                .iter()
                .position(|c| c["type"] == "RUN_FINISHED")
                .unwrap();
        let mut whole = Projection::new();
        whole.feed_all(&chunks[..=to]);
        for cut in from + 1..=to {
            let mut held = Projection::new();
            held.feed_all(&chunks[..cut]);
            assert_eq!(held.active_run(), Some(run_id), "cut {cut}");
            let (mut join, mut out) = RunJoin::start(&held, SESSION, run_id, 9);
            out.extend(chunks[cut..].iter().filter_map(|c| join.feed(c)));
            assert!(join.is_ended(), "cut {cut}");
            assert_eq!(
                out.last(),
                Some(&chunks[to]),
                "cut {cut}: ends at the run's end"
            );
            let messages = held.to_messages();
            let before = messages.len() - turnkeep::core::ui::turn_answer(&messages).len();
            let seed = serde_json::to_value(&messages[..before]).unwrap();
            let mut client = Projection::from_initial(&seed, None);
            client.feed_all(&out);
            assert_eq!(client.to_messages(), whole.to_messages(), "cut {cut}");
        }
        // The run over before the join: the answer, and the join is over.
        let (join, _) = RunJoin::start(&whole, SESSION, run_id, 9);
        assert!(join.is_ended());
    }
}
