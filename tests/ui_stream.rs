//! The AI SDK UI message stream on the host (`core::ui`): the routes, the request the stock
//! `DefaultChatTransport` sends, and the one mapping from a session log's chunks to UI message
//! chunks — over logs real turns wrote (the turn pipeline with the demo model, a memory log),
//! and for a stream that starts at any point of a turn (rebuilt, then fed the rest). The client
//! itself judges the streams in tests/js/ui-message-stream.test.mjs (the real `ai` package).
#![cfg(not(target_arch = "wasm32"))]

mod turn_support;

use std::rc::Rc;

use serde_json::{json, Value};
use turn_support::*;
use turnkeep::core::projection::Projection;
use turnkeep::core::protocol::Part;
use turnkeep::core::ui::{
    decode_ui_request, run_answer, turn_answer, ui_messages, ui_route, Approval, ToolConfirmations,
    UiRoute, UiStream, UiTurn,
};
use turnkeep::turn::{admit, open, resolve, run, Interrupt, Resolution, ResolveRequest, Turn};

// ---- Routes -------------------------------------------------------------------------------

#[test]
fn every_route_of_the_ui_handler() {
    let s = |id: &str| id.to_owned();
    let cases: &[(&str, &str, UiRoute)] = &[
        ("POST", "/api/ui/chat", UiRoute::Send),
        ("POST", "/api/ui/chat/", UiRoute::Send),
        (
            "GET",
            "/api/ui/chat",
            UiRoute::MethodNotAllowed { allow: "POST" },
        ),
        (
            "GET",
            "/api/ui/chat/c1/stream",
            UiRoute::Resume {
                session_id: s("c1"),
            },
        ),
        (
            "GET",
            "/chat/c%2D1/stream",
            UiRoute::Resume {
                session_id: s("c-1"),
            },
        ),
        (
            "POST",
            "/api/ui/chat/c1/stream",
            UiRoute::MethodNotAllowed { allow: "GET" },
        ),
        (
            "POST",
            "/api/ui/chat/c1/stop",
            UiRoute::Stop {
                session_id: s("c1"),
            },
        ),
        (
            "GET",
            "/api/ui/chat/c1/stop",
            UiRoute::MethodNotAllowed { allow: "POST" },
        ),
        (
            "GET",
            "/api/ui/chat/c1/messages",
            UiRoute::Messages {
                session_id: s("c1"),
            },
        ),
        (
            "POST",
            "/api/ui/chat/c1/messages",
            UiRoute::Post {
                session_id: s("c1"),
            },
        ),
        (
            "PUT",
            "/api/ui/chat/c1/messages",
            UiRoute::MethodNotAllowed { allow: "GET, POST" },
        ),
        (
            "GET",
            "/api/ui/chat/c1/hydrate",
            UiRoute::Hydrate {
                session_id: s("c1"),
            },
        ),
        (
            "POST",
            "/api/ui/chat/c1/hydrate",
            UiRoute::MethodNotAllowed { allow: "GET" },
        ),
        ("GET", "/api/ui/chat/a%2Fb/stream", UiRoute::BadSessionId),
        ("GET", "/api/ui/chat/%/stream", UiRoute::BadSessionId),
        // A chat id that is itself "stream" is a send to `{api}/stream`'s parent: only the
        // segment after an id names a route.
        ("POST", "/stream", UiRoute::Send),
    ];
    for (method, path, expected) in cases {
        assert_eq!(&ui_route(method, path), expected, "{method} {path}");
    }
}

// ---- Requests ------------------------------------------------------------------------------

/// What `DefaultChatTransport` sends for `sendMessage({ text })` (AI SDK 7).
fn stock_send(extra: Value) -> Value {
    let mut body = json!({
        "id": "chat-1",
        "messages": [
            { "id": "u0", "role": "user", "parts": [{ "type": "text", "text": "earlier" }] },
            { "id": "a0", "role": "assistant", "parts": [{ "type": "step-start" }, { "type": "text", "text": "echo: earlier", "state": "done" }] },
            { "id": "uhVdQ4Ma", "role": "user", "parts": [{ "type": "text", "text": "hello" }] },
        ],
        "trigger": "submit-message",
    });
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

#[test]
fn the_stock_transports_requests_decode_to_turns() {
    let sent = decode_ui_request(&stock_send(json!({}))).unwrap();
    assert_eq!(sent.session_id, "chat-1");
    assert_eq!(
        sent.turn,
        UiTurn::Send {
            turn_id: "ui-uhVdQ4Ma".into(),
            message_id: Some("uhVdQ4Ma".into()),
            text: "hello".into(),
            files: vec![],
        }
    );
    // A file attached with the text: files first, then text, as useChat builds them.
    let mut with_file = stock_send(json!({}));
    with_file["messages"][2]["parts"] = json!([
        { "type": "file", "mediaType": "text/plain", "filename": "notes.txt", "url": "data:text/plain;base64,aGk=" },
        { "type": "text", "text": "see the file" },
    ]);
    let UiTurn::Send { text, files, .. } = decode_ui_request(&with_file).unwrap().turn else {
        panic!("a send")
    };
    assert_eq!(text, "see the file");
    assert!(
        matches!(&files[..], [Part::File(f)] if f.source == "data:text/plain;base64,aGk=" && f.filename.as_deref() == Some("notes.txt"))
    );
    // regenerate(): the client dropped the answer; the last message is the user's again.
    let regen = decode_ui_request(&stock_send(
        json!({ "trigger": "regenerate-message", "messageId": "a1" }),
    ))
    .unwrap();
    assert_eq!(
        regen.turn,
        UiTurn::Regenerate {
            turn_id: Some("re-a1".into())
        }
    );
    let regen = decode_ui_request(&stock_send(json!({ "trigger": "regenerate-message" }))).unwrap();
    assert_eq!(regen.turn, UiTurn::Regenerate { turn_id: None });
    // The approval resubmit: the assistant message with its tool part answered.
    let approval = json!({
        "id": "chat-1",
        "trigger": "submit-message",
        "messageId": "a1",
        "messages": [
            { "id": "u1", "role": "user", "parts": [{ "type": "text", "text": "/confirm 5" }] },
            { "id": "a1", "role": "assistant", "parts": [
                { "type": "step-start" },
                { "type": "tool-transfer", "toolCallId": "call-1", "state": "approval-responded", "input": { "amount": 5 }, "approval": { "id": "confirm-call-1", "approved": false, "reason": "too much" } },
            ] },
        ],
    });
    assert_eq!(
        decode_ui_request(&approval).unwrap().turn,
        UiTurn::Approvals(vec![Approval {
            token: "confirm-call-1".into(),
            approved: false,
            reason: Some("too much".into())
        }])
    );
    // An id that is no SafeId gives a stable hashed turn id; one too long is not kept.
    let mut odd = stock_send(json!({}));
    odd["messages"][2]["id"] = json!("a b/c");
    let UiTurn::Send {
        turn_id,
        message_id,
        ..
    } = decode_ui_request(&odd).unwrap().turn
    else {
        panic!("a send")
    };
    assert!(
        turn_id.starts_with("ui-h") && turn_id.len() == 20,
        "{turn_id}"
    );
    assert_eq!(message_id.as_deref(), Some("a b/c"));
    assert_eq!(
        decode_ui_request(&odd).unwrap().turn,
        decode_ui_request(&odd).unwrap().turn
    );
}

#[test]
fn what_is_not_such_a_request_is_refused_with_the_rule_it_broke() {
    let check = |body: Value, rule: &str| {
        let err = decode_ui_request(&body).expect_err(rule);
        assert!(
            err.detail.contains(rule),
            "{} should mention {rule}",
            err.detail
        );
    };
    check(json!([]), "object");
    check(stock_send(json!({ "id": "a/b" })), "SafeId");
    check(stock_send(json!({ "id": 7 })), "SafeId");
    check(stock_send(json!({ "trigger": "resume-stream" })), "trigger");
    check(stock_send(json!({ "messageId": 3 })), "messageId");
    check(stock_send(json!({ "messages": [] })), "non-empty");
    check(stock_send(json!({ "messages": "hi" })), "non-empty");
    let mut blank = stock_send(json!({}));
    blank["messages"][2]["parts"] = json!([{ "type": "text", "text": "  " }]);
    check(blank, "text");
    let mut no_parts = stock_send(json!({}));
    no_parts["messages"][2]["parts"] = json!({});
    check(no_parts, "parts");
    let mut bad_file = stock_send(json!({}));
    bad_file["messages"][2]["parts"] =
        json!([{ "type": "file", "mediaType": "text/plain" }, { "type": "text", "text": "x" }]);
    check(bad_file, "url");
    let answer_without_approval = json!({ "id": "c", "trigger": "submit-message", "messages": [
        { "id": "a", "role": "assistant", "parts": [{ "type": "text", "text": "hi" }] } ] });
    check(answer_without_approval, "approval");
    let mut deep = stock_send(json!({}));
    let mut nested = json!(1);
    for _ in 0..40 {
        nested = json!([nested]);
    }
    deep["messages"][2]["parts"] = json!([{ "type": "text", "text": "x", "extra": nested }]);
    check(deep, "limits");
}

// ---- The mapping, over real turns -----------------------------------------------------------

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

fn run_to_end(session: &Session, turn: &Rc<Turn>) {
    let sink = Rc::new(Sink::default());
    block_on(&session.world, run(turn.clone(), sink));
    session.world.advance(1_000);
}

/// Runs `inputs` as turns, then approves the confirmation the last one asked for.
fn conversation(inputs: &[&str], approve: Option<bool>) -> Session {
    let world = World::new();
    let session = Session::new(&world);
    for (i, input) in inputs.iter().enumerate() {
        run_to_end(&session, &start(&session, &format!("t{i}"), input));
    }
    if let Some(approve) = approve {
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
        let turn = block_on(&world, async {
            match resolve(&ports, &chat, &request, &LIMITS, &Interrupt::new()).await {
                Ok(Resolution::Continue(turn)) => turn,
                _ => panic!("the decision wins"),
            }
        });
        run_to_end(&session, &turn);
    }
    session
}

/// The log's runs: each `RUN_STARTED … RUN_FINISHED/RUN_ERROR`, with the chunks before it.
fn runs(chunks: &[Value]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in chunks.iter().enumerate() {
        match c["type"].as_str() {
            Some("RUN_STARTED") => start = Some(i),
            Some("RUN_FINISHED" | "RUN_ERROR") => {
                out.push((start.take().expect("a started run"), i))
            }
            _ => {}
        }
    }
    out
}

fn types(ui: &[Value]) -> Vec<String> {
    ui.iter()
        .map(|c| c["type"].as_str().unwrap().to_owned())
        .collect()
}

/// Feeds `chunks[from..=to]` to a stream for the run that starts at `from`.
fn map_run(chunks: &[Value], from: usize, to: usize) -> Vec<Value> {
    let mut projection = Projection::new();
    projection.feed_all(&chunks[..from]);
    let continuation = chunks[from]["runId"]
        .as_str()
        .unwrap()
        .starts_with("confirm-");
    let mut ui = if continuation {
        let messages = projection.to_messages();
        let confirmations = ToolConfirmations::from_log(projection.confirmations());
        let resolving = chunks[from]["runId"]
            .as_str()
            .unwrap()
            .strip_prefix("confirm-");
        UiStream::continuing(turn_answer(&messages), &confirmations, resolving)
    } else {
        UiStream::new()
    };
    let mut out = Vec::new();
    for chunk in &chunks[from..=to] {
        ui.feed(chunk, &mut out);
    }
    assert!(ui.is_ended());
    out
}

#[test]
fn a_text_turn_is_start_a_step_a_text_part_and_finish() {
    let session = conversation(&["hello there"], None);
    let chunks = session.log_store.chunks();
    let (from, to) = runs(&chunks)[0];
    let ui = map_run(&chunks, from, to);
    assert_eq!(
        types(&ui),
        [
            "start",
            "start-step",
            "text-start",
            "text-delta",
            "text-delta",
            "text-delta",
            "text-end",
            "finish-step",
            "finish"
        ]
    );
    let assistant = session
        .saved()
        .into_iter()
        .find(|m| m.role == turnkeep::core::protocol::Role::Assistant)
        .unwrap();
    assert_eq!(
        ui[0]["messageId"],
        json!(assistant.id),
        "the UI message is the canonical answer"
    );
    assert_eq!(ui[2]["id"], json!(assistant.id));
    let text: String = ui
        .iter()
        .filter(|c| c["type"] == "text-delta")
        .map(|c| c["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, "echo: hello there");
    assert_eq!(ui.last().unwrap()["finishReason"], "stop");
}

#[test]
fn a_tool_turn_is_two_steps_with_the_call_between() {
    let session = conversation(&["/tool cats"], None);
    let chunks = session.log_store.chunks();
    let (from, to) = runs(&chunks)[0];
    let ui = map_run(&chunks, from, to);
    let t = types(&ui);
    assert_eq!(
        &t[..5],
        [
            "start",
            "start-step",
            "tool-input-start",
            "tool-input-delta",
            "tool-input-available"
        ]
    );
    assert_eq!(t[5], "tool-output-available");
    assert_eq!(&t[6..8], ["finish-step", "start-step"]);
    assert_eq!(t.last().unwrap(), "finish");
    assert_eq!(ui[4]["input"], json!({ "query": "cats" }));
    assert_eq!(ui[4]["toolName"], "lookup");
    assert_eq!(ui[5]["output"], "result for cats");
    let text: String = ui
        .iter()
        .filter(|c| c["type"] == "text-delta")
        .map(|c| c["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, "found: result for cats");
}

#[test]
fn an_approval_is_requested_then_the_continuation_writes_into_the_same_message() {
    for approve in [true, false] {
        let session = conversation(&["/confirm 5"], Some(approve));
        let chunks = session.log_store.chunks();
        let all = runs(&chunks);
        assert_eq!(all.len(), 2, "the turn and its continuation");
        let asking = map_run(&chunks, all[0].0, all[0].1);
        let t = types(&asking);
        let request = asking
            .iter()
            .position(|c| c["type"] == "tool-approval-request")
            .expect("asked");
        let available = asking
            .iter()
            .position(|c| c["type"] == "tool-input-available")
            .expect("input");
        assert!(
            available < request,
            "the client refuses a request for a call it has not seen"
        );
        assert_eq!(t.last().unwrap(), "finish");
        assert_eq!(asking.last().unwrap()["finishReason"], "tool-calls");
        let call_id = asking[request]["toolCallId"].as_str().unwrap().to_owned();
        assert_eq!(
            asking[request]["approvalId"],
            json!(format!("confirm-{call_id}"))
        );

        let continued = map_run(&chunks, all[1].0, all[1].1);
        assert_eq!(continued[0]["type"], "start");
        assert_eq!(
            continued[0]["messageId"], asking[0]["messageId"],
            "the same UI message: no duplicate in useChat"
        );
        let outcome = &continued[1];
        if approve {
            assert_eq!(outcome["type"], "tool-output-available", "{continued:?}");
        } else {
            assert_eq!(outcome["type"], "tool-output-denied", "{continued:?}");
        }
        assert_eq!(outcome["toolCallId"], json!(call_id));
        assert!(
            !types(&continued).contains(&"tool-input-start".to_owned()),
            "the call is not shown twice"
        );
        assert_eq!(continued.last().unwrap()["type"], "finish");
    }
}

#[test]
fn a_failed_turn_ends_with_an_error_chunk() {
    let session = conversation(&["/fail"], None);
    let chunks = session.log_store.chunks();
    let (from, to) = runs(&chunks)[0];
    let ui = map_run(&chunks, from, to);
    let last = ui.last().unwrap();
    assert_eq!(last["type"], "error");
    assert!(last["errorText"].as_str().is_some_and(|t| !t.is_empty()));
}

/// A stream that starts at any chunk of a run (a resumed stream: the answer so far rebuilt from
/// the log's projection, then the rest fed) keeps the client's rules and ends with the whole
/// answer: every text part gets its whole text once, after its `text-start`.
#[test]
fn a_stream_joined_at_any_point_rebuilds_then_continues() {
    let session = conversation(
        &[
            "hello",
            "/tool cats",
            "/think cats",
            "/words 12",
            "/confirm 9",
        ],
        Some(true),
    );
    let chunks = session.log_store.chunks();
    for (from, to) in runs(&chunks) {
        let whole = text_by_id(&map_run(&chunks, from, to));
        let thought = reasoning_of(&map_run(&chunks, from, to));
        for cut in from + 1..=to {
            let mut projection = Projection::new();
            projection.feed_all(&chunks[..cut]);
            let confirmations = ToolConfirmations::from_log(projection.confirmations());
            let run_id = chunks[from]["runId"].as_str().unwrap();
            let answer = run_answer(&projection, confirmations.has_token(run_id));
            let (mut ui, mut out) = UiStream::rebuild(&answer, &confirmations);
            ui.follow_run(chunks[from]["runId"].as_str().unwrap());
            for chunk in &chunks[cut..=to] {
                ui.feed(chunk, &mut out);
            }
            assert!(ui.is_ended(), "cut {cut}");
            check_order(&out, cut);
            assert_eq!(
                reasoning_of(&out),
                thought,
                "cut {cut}: the reasoning, once"
            );
            // What the rebuilt stream says of each text part is what the whole run said of it
            // (a continuation's rebuilt stream also holds the steps before it).
            let joined = text_by_id(&out);
            for (id, text) in &whole {
                assert_eq!(
                    joined.iter().find(|(i, _)| i == id).map(|(_, t)| t),
                    Some(text),
                    "cut {cut}: text {id}"
                );
            }
        }
    }
}

/// The reasoning the stream shows, all its parts' deltas in order.
fn reasoning_of(ui: &[Value]) -> String {
    ui.iter()
        .filter(|c| c["type"] == "reasoning-delta")
        .map(|c| c["delta"].as_str().unwrap())
        .collect()
}

#[test]
fn a_thinking_turn_shows_its_reasoning_before_its_text() {
    let session = conversation(&["/think cats"], None);
    let chunks = session.log_store.chunks();
    let (from, to) = runs(&chunks)[0];
    let ui = map_run(&chunks, from, to);
    let kinds = types(&ui);
    let first = |k: &str| kinds.iter().position(|t| t == k).expect(k);
    assert!(first("reasoning-start") < first("reasoning-delta"));
    assert!(first("reasoning-end") < first("text-start"), "{kinds:?}");
    assert!(!reasoning_of(&ui).is_empty());
    let messages = ui_messages(&session.saved(), &ToolConfirmations::default());
    let parts: Vec<&str> = messages[1]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["type"].as_str().unwrap())
        .collect();
    assert_eq!(parts, ["step-start", "reasoning", "text"]);
    assert_eq!(messages[1]["parts"][1]["text"], json!(reasoning_of(&ui)));
}

/// Each text part's id and whole text, in order of first appearance.
fn text_by_id(ui: &[Value]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for c in ui.iter().filter(|c| c["type"] == "text-delta") {
        let id = c["id"].as_str().unwrap();
        match out.iter_mut().find(|(i, _)| i == id) {
            Some((_, text)) => text.push_str(c["delta"].as_str().unwrap()),
            None => out.push((id.to_owned(), c["delta"].as_str().unwrap().to_owned())),
        }
    }
    out
}

/// The order the AI SDK's client requires: a text delta or end inside its text part, a tool
/// chunk after the call is known, one `start` first.
fn check_order(ui: &[Value], cut: usize) {
    assert_eq!(ui[0]["type"], "start", "cut {cut}: starts with start");
    assert_eq!(
        ui.iter().filter(|c| c["type"] == "start").count(),
        1,
        "cut {cut}"
    );
    let mut open: Option<String> = None;
    let mut calls: Vec<String> = Vec::new();
    for c in ui {
        let id = c["id"].as_str().map(str::to_owned);
        match c["type"].as_str().unwrap() {
            "text-start" => {
                assert!(open.is_none(), "cut {cut}: one text part open at a time");
                open = id;
            }
            "text-delta" => assert_eq!(open, id, "cut {cut}: a delta of the open part"),
            "text-end" => {
                assert_eq!(open, id, "cut {cut}");
                open = None;
            }
            "tool-input-start" | "tool-input-available" => {
                calls.push(c["toolCallId"].as_str().unwrap().to_owned())
            }
            "tool-input-delta"
            | "tool-approval-request"
            | "tool-output-available"
            | "tool-output-error"
            | "tool-output-denied" => {
                assert!(
                    calls.iter().any(|k| c["toolCallId"] == json!(k)),
                    "cut {cut}: {c} names a known call"
                );
            }
            _ => {}
        }
    }
    assert!(open.is_none(), "cut {cut}: every text part ended");
}

#[test]
fn the_conversation_as_ui_messages_is_one_assistant_message_per_turn() {
    let session = conversation(&["hello", "/tool cats", "/confirm 5"], None);
    let ui = ui_messages(&session.saved(), &ToolConfirmations::default());
    let roles: Vec<&str> = ui.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant"
        ]
    );
    let tool_turn = &ui[3]["parts"];
    let kinds: Vec<&str> = tool_turn
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["step-start", "tool-lookup", "step-start", "text"]);
    assert_eq!(tool_turn[1]["state"], "output-available");
    assert_eq!(tool_turn[1]["output"], "result for cats");
    let saved = session.saved();
    let first_tool_answer = saved
        .iter()
        .filter(|m| m.role == turnkeep::core::protocol::Role::Assistant)
        .nth(1)
        .unwrap();
    assert_eq!(
        ui[3]["id"],
        json!(first_tool_answer.id),
        "the turn's first assistant message names it"
    );
    // The confirmation, as the session's records say: the part carries its approval id.
    let stored = block_on(
        &session.world,
        turnkeep::ports::session::SessionStorage::load(
            &*session.storage,
            SESSION,
            &turnkeep::ports::CancelToken::new(),
        ),
    )
    .unwrap()
    .unwrap();
    let envelope = turnkeep::core::session::decode_session_snapshot(&stored).unwrap();
    let with_records = ui_messages(
        &saved,
        &ToolConfirmations::from_records(&envelope.confirmations),
    );
    let waiting = &with_records[5]["parts"][1];
    assert_eq!(waiting["state"], "approval-requested");
    assert_eq!(
        waiting["approval"]["id"],
        json!(envelope.confirmations[0].token)
    );
    assert_eq!(
        ui[5]["parts"][1].get("approval"),
        None,
        "no record, no approval to answer"
    );
}
