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
use turnkeep::core::agui::{
    decode_run_input, decode_transport_send, hydration, is_run_input, prefers_json, AgUiStream,
    RunJoin,
};
use turnkeep::core::projection::Projection;
use turnkeep::core::protocol::{FilePart, Part};
use turnkeep::core::ui::{Approval, UiTurn};
use turnkeep::turn::{admit, open, resolve, run, Interrupt, Resolution, ResolveRequest, Turn};

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

/// AG-UI 1.0's media parts (and TanStack's, the same shape) as the stored message's files.
#[test]
fn media_parts_are_kept_as_file_parts() {
    let file = |source: &str, mime: Option<&str>| {
        Part::File(FilePart {
            source: source.into(),
            mime_type: mime.map(str::to_owned),
            filename: None,
        })
    };
    let body = run_input(
        json!({ "messages": [{ "id": "u1", "role": "user", "content": [
        { "type": "text", "text": "what is this?" },
        { "type": "image", "source": { "type": "data", "value": "iVBORw0K", "mimeType": "image/png" } },
        { "type": "document", "source": { "type": "url", "value": "https://example.com/a.pdf", "mimeType": "application/pdf" } },
    ] }] }),
    );
    let UiTurn::Send { text, files, .. } = decode_run_input(&body).expect("decodes").turn else {
        panic!("a send");
    };
    assert_eq!(text, "what is this?");
    assert_eq!(
        files,
        vec![
            file("data:image/png;base64,iVBORw0K", Some("image/png")),
            file("https://example.com/a.pdf", Some("application/pdf")),
        ]
    );
    let refused = [
        (
            json!({ "type": "image", "source": { "type": "file", "value": "file-1" } }),
            "provider file ids",
        ),
        (
            json!({ "type": "image", "source": { "type": "data", "value": "AAAA" } }),
            "mimeType",
        ),
        (json!({ "type": "audio" }), "source"),
    ];
    for (part, detail) in refused {
        let body = run_input(
            json!({ "messages": [{ "id": "u1", "role": "user", "content": [
            { "type": "text", "text": "x" }, part,
        ] }] }),
        );
        let error = decode_run_input(&body).expect_err("refused");
        assert!(error.detail.contains(detail), "{detail}: {}", error.detail);
    }
}

/// The Durable Streams TanStack transport's `{ messages, data }`: the session is the route's,
/// the last message says what the request is.
#[test]
fn a_transport_send_is_a_turn_or_the_answers_of_its_approvals() {
    let user = json!({ "messages": [
        { "id": "m0", "role": "user", "parts": [{ "type": "text", "content": "earlier" }] },
        { "id": "m1", "role": "user", "parts": [{ "type": "text", "content": "hello" }] },
    ], "data": { "anything": 1 } });
    let request = decode_transport_send(&user, "s9").expect("decodes");
    assert_eq!(request.session_id, "s9");
    let UiTurn::Send {
        turn_id,
        message_id,
        text,
        ..
    } = request.turn
    else {
        panic!("a send");
    };
    assert_eq!(
        (turn_id.as_str(), message_id.as_deref(), text.as_str()),
        ("ui-m1", Some("m1"), "hello")
    );
    assert_eq!(
        decode_transport_send(&user, "s9").unwrap().turn.turn_id(),
        Some("ui-m1"),
        "the same message is the same turn (a resend is a replay)"
    );

    let answered = json!({ "messages": [{ "id": "a1", "role": "assistant", "parts": [
        { "type": "text", "content": "I need a yes." },
        { "type": "tool-call", "id": "c1", "name": "transfer", "arguments": "{}", "state": "approval-responded",
          "approval": { "id": "confirm-c1", "needsApproval": true, "approved": false } },
        { "type": "tool-call", "id": "c2", "name": "transfer", "arguments": "{}", "state": "approval-requested",
          "approval": { "id": "confirm-c2", "needsApproval": true } },
    ] }] });
    assert_eq!(
        decode_transport_send(&answered, "s9").unwrap().turn,
        UiTurn::Approvals(vec![Approval {
            token: "confirm-c1".into(),
            approved: false,
            reason: None
        }])
    );

    let refused = [
        (json!({ "messages": [] }), "non-empty"),
        (
            json!({ "messages": [{ "role": "user", "parts": [{ "type": "text", "content": "x" }] }] }),
            "id",
        ),
        (
            json!({ "messages": [{ "id": "a", "role": "assistant", "parts": [] }] }),
            "approval",
        ),
        (
            json!({ "messages": [{ "id": "a", "role": "assistant", "parts": [{ "type": "tool-call", "state": "approval-responded", "approval": { "id": "bad id", "approved": true } }] }] }),
            "token",
        ),
    ];
    for (body, detail) in refused {
        let error = decode_transport_send(&body, "s9").expect_err("refused");
        assert!(error.detail.contains(detail), "{detail}: {}", error.detail);
    }
}

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

/// `conversation`, then the last call's confirmation decided and its continuation run.
fn decided(inputs: &[&str], approve: bool) -> Session {
    let session = conversation(inputs);
    let token = session
        .saved()
        .iter()
        .flat_map(|m| m.tool_calls.iter().flatten())
        .last()
        .map(|c| format!("confirm-{}", c.id))
        .expect("a call");
    let request = ResolveRequest {
        session_id: SESSION.into(),
        token,
        approve,
        reason: None,
    };
    let ports = session.ports(true, 5);
    let chat = chat_setup(SESSION);
    let turn = block_on(&session.world, async {
        match resolve(&ports, &chat, &request, &LIMITS, &Interrupt::new()).await {
            Ok(Resolution::Continue(turn)) => turn,
            _ => panic!("the decision wins"),
        }
    });
    block_on(&session.world, run(turn, Rc::new(Sink::default())));
    session.world.advance(1_000);
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
    let session = conversation(&[
        "hello",
        "/tool cats",
        "/think cats",
        "/words 12",
        "/confirm 9",
    ]);
    let chunks = session.log_store.chunks();
    let starts: Vec<usize> = (0..chunks.len())
        .filter(|&i| chunks[i]["type"] == "RUN_STARTED")
        .collect();
    assert_eq!(starts.len(), 5);
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

// ---- A run as AG-UI events, over real turns -------------------------------------------------

/// The sequence rules AG-UI's verifier holds a stream to (`@ag-ui/client` 1.0 `verifyEvents`),
/// and its schemas' required fields; the real client judges the same streams in
/// tests/js/agui-http-agent.test.mjs.
fn check_agui(events: &[Value], context: &str) {
    assert_eq!(
        events.first().map(|e| &e["type"]),
        Some(&json!("RUN_STARTED")),
        "{context}"
    );
    let mut texts: Vec<String> = Vec::new();
    let mut calls: Vec<String> = Vec::new();
    let mut spans: Vec<String> = Vec::new();
    let mut reasonings: Vec<String> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let id = |k: &str| {
            e[k].as_str()
                .unwrap_or_else(|| panic!("{context} #{i}: {k} in {e}"))
                .to_owned()
        };
        match e["type"].as_str().unwrap() {
            "RUN_STARTED" => assert_eq!(i, 0, "{context}"),
            "TEXT_MESSAGE_START" => {
                assert_eq!(
                    e["role"], "assistant",
                    "{context} #{i}: no echo of the input"
                );
                assert!(
                    !texts.contains(&id("messageId")),
                    "{context} #{i}: started twice"
                );
                texts.push(id("messageId"));
            }
            "TEXT_MESSAGE_CONTENT" => {
                assert!(
                    texts.contains(&id("messageId")),
                    "{context} #{i}: content of a closed message"
                );
                assert!(!id("delta").is_empty(), "{context} #{i}");
            }
            "TEXT_MESSAGE_END" => {
                let m = id("messageId");
                assert!(
                    texts.contains(&m),
                    "{context} #{i}: end of a closed message"
                );
                texts.retain(|t| *t != m);
            }
            "TOOL_CALL_START" => {
                id("toolCallName");
                assert!(
                    e.get("toolName").is_none(),
                    "{context} #{i}: toolName is not AG-UI"
                );
                calls.push(id("toolCallId"));
            }
            "TOOL_CALL_ARGS" => assert!(calls.contains(&id("toolCallId")), "{context} #{i}"),
            "TOOL_CALL_END" => {
                let c = id("toolCallId");
                assert!(calls.contains(&c), "{context} #{i}: end of a closed call");
                calls.retain(|t| *t != c);
            }
            "TOOL_CALL_RESULT" => {
                id("messageId");
                id("toolCallId");
                id("content");
            }
            "REASONING_START" => {
                assert!(!spans.contains(&id("messageId")), "{context} #{i}");
                spans.push(id("messageId"));
            }
            "REASONING_MESSAGE_START" => {
                assert_eq!(e["role"], "reasoning", "{context} #{i}");
                assert!(!reasonings.contains(&id("messageId")), "{context} #{i}");
                reasonings.push(id("messageId"));
            }
            "REASONING_MESSAGE_CONTENT" => {
                assert!(reasonings.contains(&id("messageId")), "{context} #{i}");
                id("delta");
            }
            "REASONING_MESSAGE_END" => {
                let m = id("messageId");
                assert!(reasonings.contains(&m), "{context} #{i}");
                reasonings.retain(|t| *t != m);
            }
            "REASONING_END" => {
                let m = id("messageId");
                assert!(spans.contains(&m), "{context} #{i}");
                spans.retain(|t| *t != m);
            }
            "CUSTOM" => assert!(!id("name").starts_with("turnkeep."), "{context} #{i}"),
            "RUN_FINISHED" => {
                assert_eq!(i, events.len() - 1, "{context}: nothing after the end");
                assert!(
                    texts.is_empty()
                        && calls.is_empty()
                        && spans.is_empty()
                        && reasonings.is_empty(),
                    "{context}: closed before the end"
                );
                for key in ["finishReason", "usage"] {
                    assert!(e.get(key).is_none(), "{context}: {key} is not AG-UI");
                }
            }
            other => panic!("{context} #{i}: {other} is not written"),
        }
        if let Some(t) = e.get("timestamp") {
            assert!(t.is_u64(), "{context} #{i}: an integer timestamp");
        }
    }
    assert_eq!(
        events.last().map(|e| &e["type"]),
        Some(&json!("RUN_FINISHED")),
        "{context}"
    );
}

#[test]
fn every_run_of_a_log_is_a_valid_agui_stream_and_says_what_the_log_says() {
    for approve in [true, false] {
        every_run_valid(&decided(
            &[
                "hello",
                "/tool cats",
                "/think cats",
                "/words 12",
                "/confirm 9",
            ],
            approve,
        ));
    }
    // A run that ends waiting: its interrupt, as the log has it.
    let session = conversation(&["/confirm 9"]);
    let chunks = session.log_store.chunks();
    let ended = chunks
        .iter()
        .rev()
        .find(|c| c["type"] == "RUN_FINISHED")
        .unwrap();
    let mut stream = AgUiStream::new(ended["runId"].as_str().unwrap());
    let mut events = Vec::new();
    for chunk in &chunks {
        stream.feed(chunk, &mut events);
    }
    check_agui(&events, "paused");
    assert_eq!(
        events.last().unwrap()["outcome"],
        ended["outcome"],
        "the interrupt as the log has it"
    );
}

fn every_run_valid(session: &Session) {
    let chunks = session.log_store.chunks();
    let mut runs = 0;
    let mut reasoned = false;
    for start in chunks.iter().filter(|c| c["type"] == "RUN_STARTED") {
        runs += 1;
        let run_id = start["runId"].as_str().unwrap();
        let mut stream = AgUiStream::new(run_id);
        let mut events = Vec::new();
        for chunk in &chunks {
            stream.feed(chunk, &mut events);
        }
        assert!(stream.is_ended(), "{run_id}");
        check_agui(&events, run_id);
        // What the run said of its answer's text, the events say.
        let text: String = chunks
            .iter()
            .skip_while(|c| c != &start)
            .take_while(|c| c["type"] != "RUN_FINISHED")
            .filter(|c| {
                c["type"] == "TEXT_MESSAGE_CONTENT" && !c["messageId"].as_str().unwrap().is_empty()
            })
            .filter(|c| {
                chunks.iter().any(|s| {
                    s["type"] == "TEXT_MESSAGE_START"
                        && s["messageId"] == c["messageId"]
                        && s["role"] == "assistant"
                })
            })
            .map(|c| c["delta"].as_str().unwrap())
            .collect();
        let said: String = events
            .iter()
            .filter(|e| e["type"] == "TEXT_MESSAGE_CONTENT")
            .map(|e| e["delta"].as_str().unwrap())
            .collect();
        assert_eq!(said, text, "{run_id}");
        // And of its reasoning.
        let thought: String = chunks
            .iter()
            .skip_while(|c| c != &start)
            .take_while(|c| c["type"] != "RUN_FINISHED")
            .filter(|c| c["type"] == "REASONING_MESSAGE_CONTENT")
            .map(|c| c["delta"].as_str().unwrap())
            .collect();
        let said: String = events
            .iter()
            .filter(|e| e["type"] == "REASONING_MESSAGE_CONTENT")
            .map(|e| e["delta"].as_str().unwrap())
            .collect();
        assert_eq!(said, thought, "{run_id}: the reasoning");
        reasoned |= !thought.is_empty();
    }
    assert!(reasoned, "a run reasoned (`/think`)");
    assert_eq!(runs, 6, "five turns and a continuation");
}

#[test]
fn a_client_asks_for_the_202_answer_by_accepting_json_only() {
    for (accept, json_answer) in [
        (Some("application/json"), true),
        (Some("application/json, text/plain"), true),
        (Some("text/event-stream"), false),
        (Some("text/event-stream, application/json"), false),
        (Some("*/*"), false),
        (None, false),
    ] {
        assert_eq!(prefers_json(accept), json_answer, "{accept:?}");
    }
}
