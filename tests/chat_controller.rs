//! Controller transitions: text, the tool loop, confirmation, the iteration cap, stop, model
//! failure and every limit. Scripted models make each path explicit.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

mod chat_support;

use chat_support::{counter_ids, drive, summary, NOW_MS};
use serde_json::json;
use turnkeep::core::chat::controller::{
    SendError, ARGS_NOT_OBJECT, ITERATIONS_EXCEEDED, RESULT_TOO_LARGE, STOPPED, UNKNOWN_TOOL,
};
use turnkeep::core::chat::demo::DemoStep;
use turnkeep::core::chat::{
    Action, ChatConfig, ChatController, ChatError, ChatStatus, FinishReason, ModelChunk,
    ModelRequest, ToolInvocation, ToolSpec, Usage,
};
use turnkeep::core::limits::{
    ASSISTANT_CONTENT_BYTES_MAX, TOOL_ARGS_BYTES_MAX, TOOL_CALLS_PER_RESPONSE_MAX,
    TOOL_RESULT_BYTES_MAX,
};
use turnkeep::core::protocol::{Message, MessageStatus, Role};

fn spec(name: &str, requires_confirmation: bool) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("{name} tool"),
        parameters: json!({"type": "object"}),
        requires_confirmation,
        host_validates: false,
    }
}

fn config(max_tool_iterations: u32) -> ChatConfig {
    ChatConfig {
        tools: vec![spec("lookup", false), spec("transfer", true)],
        max_tool_iterations,
        ..Default::default()
    }
}

fn text(t: &str) -> DemoStep {
    DemoStep::Chunk(ModelChunk::Text(t.into()))
}

fn call(index: u32, id: Option<&str>, name: Option<&str>, args: &str) -> DemoStep {
    DemoStep::Chunk(ModelChunk::ToolCall {
        index,
        id: id.map(Into::into),
        name: name.map(Into::into),
        args_delta: args.into(),
    })
}

fn finish(reason: FinishReason, prompt: u64, completion: u64) -> DemoStep {
    DemoStep::Chunk(ModelChunk::Finish {
        reason,
        usage: Some(Usage::new(prompt, completion)),
    })
}

/// A model that plays `first` on its first call and `then` on every later one.
fn scripted(
    first: Vec<DemoStep>,
    then: Vec<DemoStep>,
) -> impl FnMut(&ModelRequest) -> Vec<DemoStep> {
    let mut calls = 0;
    move |_| {
        calls += 1;
        if calls == 1 {
            first.clone()
        } else {
            then.clone()
        }
    }
}

struct Expected<'a> {
    messages: &'a [&'a str],
    status: ChatStatus,
    error: Option<ChatError>,
}

/// Runs a turn with `model` and a lookup tool answering `found <query>`, then compares.
fn check(
    config: ChatConfig,
    model: &mut dyn FnMut(&ModelRequest) -> Vec<DemoStep>,
    expected: Expected<'_>,
) {
    let mut controller = ChatController::new(config, Vec::new());
    let revisions = drive(&mut controller, "hi", model, &mut |i: &ToolInvocation| {
        Ok(format!(
            "found {}",
            i.args.get("q").and_then(|v| v.as_str()).unwrap_or("?")
        ))
    });
    let state = controller.state();
    assert_eq!(summary(state), expected.messages);
    assert_eq!(state.status, expected.status);
    assert_eq!(state.error, expected.error);
    assert!(controller.is_done());
    assert!(
        revisions.last() > revisions.first(),
        "the turn changed the state"
    );
}

#[test]
fn text_streams_into_one_assistant_message() {
    check(
        config(5),
        &mut scripted(
            vec![
                text("Hel"),
                text(""),
                text("lo"),
                finish(FinishReason::Stop, 1, 2),
            ],
            vec![],
        ),
        Expected {
            messages: &[r#"user complete "hi""#, r#"assistant complete "Hello""#],
            status: ChatStatus::Complete,
            error: None,
        },
    );
}

#[test]
fn tool_call_deltas_repeat_id_and_name_and_concatenate_args() {
    check(
        config(5),
        &mut scripted(
            vec![
                call(0, Some("c1"), Some("lookup"), r#"{"q""#),
                call(0, Some("c1-ignored"), Some("lookup"), r#":"x"}"#),
                finish(FinishReason::ToolCalls, 1, 1),
            ],
            vec![text("done"), finish(FinishReason::Stop, 1, 1)],
        ),
        Expected {
            messages: &[
                r#"user complete "hi""#,
                r#"assistant complete """#,
                r#"  call c1 lookup {"q":"x"} complete result="found x""#,
                r#"tool complete "found x" for c1"#,
                r#"assistant complete "done""#,
            ],
            status: ChatStatus::Complete,
            error: None,
        },
    );
}

#[test]
fn parallel_calls_are_ordered_by_index_and_missing_ids_are_drawn() {
    check(
        config(5),
        &mut scripted(
            vec![
                call(1, None, Some("lookup"), r#"{"q":"b"}"#),
                call(0, Some("first"), None, ""),
                call(0, None, Some("lookup"), r#"{"q":"a"}"#),
            ],
            vec![text("ok")],
        ),
        Expected {
            messages: &[
                r#"user complete "hi""#,
                r#"assistant complete """#,
                r#"  call first lookup {"q":"a"} complete result="found a""#,
                r#"  call call-3 lookup {"q":"b"} complete result="found b""#,
                r#"tool complete "found a" for first"#,
                r#"tool complete "found b" for call-3"#,
                r#"assistant complete "ok""#,
            ],
            status: ChatStatus::Complete,
            error: None,
        },
    );
}

#[test]
fn a_repeated_tool_call_id_gets_a_fresh_one_so_results_match_their_call() {
    // Two different calls (indexes 0 and 1) under one id: results are matched by id, so the
    // later call gets a drawn id instead of sharing the first one's.
    check(
        config(5),
        &mut scripted(
            vec![
                call(0, Some("same"), Some("lookup"), r#"{"q":"a"}"#),
                call(1, Some("same"), Some("lookup"), r#"{"q":"b"}"#),
            ],
            vec![text("ok")],
        ),
        Expected {
            messages: &[
                r#"user complete "hi""#,
                r#"assistant complete """#,
                r#"  call same lookup {"q":"a"} complete result="found a""#,
                r#"  call call-3 lookup {"q":"b"} complete result="found b""#,
                r#"tool complete "found a" for same"#,
                r#"tool complete "found b" for call-3"#,
                r#"assistant complete "ok""#,
            ],
            status: ChatStatus::Complete,
            error: None,
        },
    );
}

#[test]
fn bad_arguments_and_unknown_tools_become_call_errors_the_model_reads() {
    let unknown = format!("{UNKNOWN_TOOL:?}");
    let bad_args = format!("{ARGS_NOT_OBJECT:?}");
    let lines = [
        r#"user complete "hi""#.to_owned(),
        r#"assistant complete """#.to_owned(),
        format!(r#"  call a lookup {{}} error error="{ARGS_NOT_OBJECT}""#),
        format!(r#"  call b lookup {{}} error error="{ARGS_NOT_OBJECT}""#),
        format!(r#"  call c search {{}} error error="{UNKNOWN_TOOL}""#),
        format!("tool error {bad_args} for a"),
        format!("tool error {bad_args} for b"),
        format!("tool error {unknown} for c"),
        r#"assistant complete "sorry""#.to_owned(),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut seen_requests = Vec::new();
    let mut model = scripted(
        vec![
            call(0, Some("a"), Some("lookup"), r#"{"q": "#),
            call(1, Some("b"), Some("lookup"), r#"[1]"#),
            call(2, Some("c"), Some("search"), r#"{}"#),
        ],
        vec![text("sorry")],
    );
    check(
        config(5),
        &mut |r: &ModelRequest| {
            seen_requests.push(r.messages.len());
            model(r)
        },
        Expected {
            messages: &lines,
            status: ChatStatus::Complete,
            error: None,
        },
    );
    // The second request carries user, assistant and the three error tool messages.
    assert_eq!(seen_requests, [1, 5]);
}

#[test]
fn a_call_requiring_confirmation_ends_the_turn_waiting_after_the_others_run() {
    let mut model_calls = 0;
    let mut model = scripted(
        vec![
            call(0, Some("t"), Some("transfer"), r#"{"amount":5}"#),
            call(1, Some("l"), Some("lookup"), r#"{"q":"z"}"#),
        ],
        vec![text("never")],
    );
    check(
        config(5),
        &mut |r: &ModelRequest| {
            model_calls += 1;
            model(r)
        },
        Expected {
            messages: &[
                r#"user complete "hi""#,
                r#"assistant complete """#,
                r#"  call t transfer {"amount":5} requires_confirmation"#,
                r#"  call l lookup {"q":"z"} complete result="found z""#,
                r#"tool complete "found z" for l"#,
            ],
            status: ChatStatus::Complete,
            error: None,
        },
    );
    assert_eq!(
        model_calls, 1,
        "the model is not called again while a confirmation waits"
    );
}

#[test]
fn the_tool_loop_stops_at_the_iteration_cap_with_an_error() {
    for max in [0u32, 1, 2, 5] {
        let mut runs = 0u32;
        let mut controller = ChatController::new(config(max), Vec::new());
        drive(
            &mut controller,
            "loop",
            &mut |_: &ModelRequest| vec![call(0, None, Some("lookup"), r#"{"q":"again"}"#)],
            &mut |_: &ToolInvocation| {
                runs += 1;
                Ok("more".into())
            },
        );
        let state = controller.state();
        assert_eq!(runs, max, "max {max}: tools run once per allowed round");
        assert_eq!(state.status, ChatStatus::Error);
        assert_eq!(state.error, Some(ChatError::ToolIterationsExceeded { max }));
        let last = state.messages.last().expect("messages");
        let calls = last
            .tool_calls
            .as_ref()
            .expect("the refused round is recorded");
        assert_eq!(calls[0].error.as_deref(), Some(ITERATIONS_EXCEEDED));
        // user, then an assistant and a tool message per allowed round, then the refused round.
        assert_eq!(state.messages.len() as u32, 2 + 2 * max);
    }
}

#[test]
fn model_failure_keeps_the_partial_text_and_ends_in_error() {
    check(
        config(5),
        &mut scripted(vec![text("part"), DemoStep::Fail, text("after")], vec![]),
        Expected {
            messages: &[r#"user complete "hi""#, r#"assistant error "part""#],
            status: ChatStatus::Error,
            error: Some(ChatError::ModelFailed),
        },
    );
}

fn started(input: &str) -> (ChatController, impl FnMut(&str) -> String) {
    let mut ids = counter_ids();
    let mut c = ChatController::new(config(5), Vec::new());
    assert!(matches!(
        c.send(input, NOW_MS, &mut ids),
        Ok(Action::CallModel(_))
    ));
    (c, ids)
}

#[test]
fn stop_mid_stream_keeps_the_partial_text_and_ignores_what_follows() {
    let (mut c, mut ids) = started("hi");
    c.on_chunk(ModelChunk::Text("partial".into()));
    assert_eq!(c.stop(), Action::Done);
    let frozen = (c.state().clone(), c.revision());
    assert_eq!(
        summary(c.state()),
        [r#"user complete "hi""#, r#"assistant complete "partial""#]
    );
    assert_eq!(c.state().status, ChatStatus::Complete);
    assert_eq!(c.on_chunk(ModelChunk::Text("late".into())), Action::Done);
    assert_eq!(c.on_model_end(NOW_MS, &mut ids), Action::Done);
    assert_eq!(c.on_model_error(), Action::Done);
    assert_eq!(c.stop(), Action::Done);
    assert_eq!((c.state().clone(), c.revision()), frozen);
}

#[test]
fn stop_before_any_text_drops_the_empty_assistant_message() {
    let (mut c, _) = started("hi");
    c.on_chunk(call(0, Some("x"), Some("lookup"), "{").into_chunk());
    c.stop();
    assert_eq!(summary(c.state()), [r#"user complete "hi""#]);
    assert_eq!(c.state().status, ChatStatus::Complete);
}

#[test]
fn stop_while_tools_run_marks_them_stopped() {
    let (mut c, mut ids) = started("hi");
    c.on_chunk(call(0, Some("a"), Some("lookup"), r#"{"q":"1"}"#).into_chunk());
    c.on_chunk(call(1, Some("b"), Some("lookup"), r#"{"q":"2"}"#).into_chunk());
    assert!(matches!(c.on_model_end(NOW_MS, &mut ids), Action::RunTools(ref v) if v.len() == 2));
    let before = c.revision();
    c.on_tool_started("a");
    assert!(c.revision() > before);
    assert_eq!(
        summary(c.state())[2],
        r#"  call a lookup {"q":"1"} running"#
    );
    assert_eq!(
        summary(c.state())[3],
        r#"  call b lookup {"q":"2"} pending"#
    );
    assert_eq!(
        c.on_tool_result("a", Ok("one".into()), NOW_MS, &mut ids),
        Action::Continue
    );
    assert_eq!(c.stop(), Action::Done);
    assert_eq!(
        summary(c.state()),
        [
            r#"user complete "hi""#.to_owned(),
            r#"assistant complete """#.to_owned(),
            r#"  call a lookup {"q":"1"} complete result="one""#.to_owned(),
            format!(r#"  call b lookup {{"q":"2"}} error error="{STOPPED}""#),
            r#"tool complete "one" for a"#.to_owned(),
        ]
    );
    let rev = c.revision();
    assert_eq!(
        c.on_tool_result("b", Ok("late".into()), NOW_MS, &mut ids),
        Action::Done
    );
    assert_eq!(c.revision(), rev);
}

#[test]
fn tool_results_for_unknown_or_settled_ids_are_ignored() {
    let (mut c, mut ids) = started("hi");
    c.on_chunk(call(0, Some("a"), Some("lookup"), r#"{"q":"1"}"#).into_chunk());
    c.on_chunk(call(1, Some("b"), Some("lookup"), r#"{"q":"2"}"#).into_chunk());
    c.on_model_end(NOW_MS, &mut ids);
    c.on_tool_result("a", Ok("one".into()), NOW_MS, &mut ids);
    let rev = c.revision();
    assert_eq!(
        c.on_tool_result("a", Ok("again".into()), NOW_MS, &mut ids),
        Action::Continue
    );
    assert_eq!(
        c.on_tool_result("zzz", Ok("?".into()), NOW_MS, &mut ids),
        Action::Continue
    );
    c.on_tool_started("a");
    assert_eq!(c.revision(), rev);
    assert!(matches!(
        c.on_tool_result("b", Err("boom".into()), NOW_MS, &mut ids),
        Action::CallModel(_)
    ));
    let calls = c.state().messages[1].tool_calls.clone().expect("calls");
    assert_eq!(calls[1].error.as_deref(), Some("boom"));
}

#[test]
fn limits_end_the_turn_or_the_call_with_a_clear_error() {
    // More tool calls in one response than allowed.
    let (mut c, _) = started("hi");
    for i in 0..TOOL_CALLS_PER_RESPONSE_MAX as u32 {
        assert_eq!(
            c.on_chunk(call(i, None, Some("lookup"), "{}").into_chunk()),
            Action::Continue
        );
    }
    assert_eq!(
        c.on_chunk(call(999, None, Some("lookup"), "{}").into_chunk()),
        Action::Done
    );
    assert_eq!(c.state().error, Some(ChatError::TooManyToolCalls));
    assert_eq!(c.state().messages[1].status, MessageStatus::Error);

    // Arguments larger than allowed, across fragments.
    let (mut c, _) = started("hi");
    let half = "x".repeat(TOOL_ARGS_BYTES_MAX / 2);
    assert_eq!(
        c.on_chunk(call(0, None, Some("lookup"), &half).into_chunk()),
        Action::Continue
    );
    assert_eq!(
        c.on_chunk(call(0, None, None, &half).into_chunk()),
        Action::Continue
    );
    assert_eq!(
        c.on_chunk(call(0, None, None, "x").into_chunk()),
        Action::Done
    );
    assert_eq!(c.state().error, Some(ChatError::ToolArgsTooLarge));

    // Streamed text larger than allowed.
    let (mut c, _) = started("hi");
    assert_eq!(
        c.on_chunk(ModelChunk::Text("y".repeat(ASSISTANT_CONTENT_BYTES_MAX))),
        Action::Continue
    );
    assert_eq!(c.on_chunk(ModelChunk::Text("y".into())), Action::Done);
    assert_eq!(c.state().error, Some(ChatError::ResponseTooLarge));
    assert_eq!(c.state().status, ChatStatus::Error);

    // A tool result larger than allowed errors that call only.
    let (mut c, mut ids) = started("hi");
    c.on_chunk(call(0, Some("a"), Some("lookup"), "{}").into_chunk());
    c.on_model_end(NOW_MS, &mut ids);
    let action = c.on_tool_result(
        "a",
        Ok("z".repeat(TOOL_RESULT_BYTES_MAX + 1)),
        NOW_MS,
        &mut ids,
    );
    assert!(matches!(action, Action::CallModel(_)));
    let calls = c.state().messages[1].tool_calls.clone().expect("calls");
    assert_eq!(calls[0].error.as_deref(), Some(RESULT_TOO_LARGE));
}

#[test]
fn send_validates_then_commits() {
    let mut ids = counter_ids();
    let mut c = ChatController::new(config(5), Vec::new());
    assert_eq!(
        c.send(" \n\t", NOW_MS, &mut ids),
        Err(SendError::BlankInput)
    );
    assert_eq!(
        (c.revision(), c.state().status, c.state().messages.len()),
        (0, ChatStatus::Idle, 0)
    );
    assert!(c.send("go", NOW_MS, &mut ids).is_ok());
    assert_eq!(
        c.send("again", NOW_MS, &mut ids),
        Err(SendError::AlreadyStarted)
    );
}

#[test]
fn ids_times_history_and_the_model_request() {
    let history = vec![Message {
        id: "old-1".into(),
        role: Role::System,
        content: "be brief".into(),
        status: MessageStatus::Complete,
        created_at: "2020-01-01T00:00:00.000Z".into(),
        parts: None,
        tool_calls: None,
        tool_call_id: None,
        metadata: None,
    }];
    let mut ids = counter_ids();
    let mut c = ChatController::new(config(5), history.clone());
    let Ok(Action::CallModel(request)) = c.send("hi", NOW_MS, &mut ids) else {
        panic!("CallModel")
    };
    // The request holds the history and the user message, not the empty assistant message.
    assert_eq!(request.messages.len(), 2);
    assert_eq!(request.messages[0], history[0]);
    assert_eq!(request.tools, config(5).tools);
    let state = c.state();
    assert_eq!(state.status, ChatStatus::Streaming);
    assert_eq!(state.messages[1].id, "msg-1");
    assert_eq!(state.messages[2].id, "msg-2");
    assert_eq!(state.messages[2].status, MessageStatus::Streaming);
    assert_eq!(state.messages[1].created_at, "2026-07-11T03:00:00.000Z");
    // Usage sums over the model calls of the turn.
    c.on_chunk(ModelChunk::Finish {
        reason: FinishReason::Stop,
        usage: Some(Usage::new(3, 4)),
    });
    assert_eq!(c.state().usage, Usage::new(3, 4));
}

trait IntoChunk {
    fn into_chunk(self) -> ModelChunk;
}

impl IntoChunk for DemoStep {
    fn into_chunk(self) -> ModelChunk {
        match self {
            DemoStep::Chunk(c) => c,
            DemoStep::Fail => panic!("not a chunk"),
        }
    }
}

#[test]
fn reasoning_grows_beside_the_text_and_survives_a_stop() {
    let (mut c, mut ids) = started("hi");
    let before = c.revision();
    c.on_chunk(ModelChunk::Reasoning("think ".into()));
    c.on_chunk(ModelChunk::Reasoning("hard".into()));
    assert!(c.revision() > before, "reasoning is an observable change");
    c.on_chunk(ModelChunk::Text("answer".into()));
    let assistant = &c.state().messages[1];
    assert_eq!(
        (assistant.content.as_str(), assistant.reasoning()),
        ("answer", "think hard")
    );
    assert_eq!(
        assistant.metadata.as_ref().and_then(|m| m.get("reasoning")),
        Some(&serde_json::json!("think hard"))
    );
    assert_eq!(c.on_model_end(NOW_MS, &mut ids), Action::Done);
    // A call stopped while it only reasoned keeps its reasoning (a message with neither goes).
    let (mut c, _) = started("hi");
    c.on_chunk(ModelChunk::Reasoning("half a thought".into()));
    c.stop();
    assert_eq!(c.state().messages.len(), 2);
    assert_eq!(c.state().messages[1].reasoning(), "half a thought");
    assert_eq!(c.state().messages[1].status, MessageStatus::Complete);
}

#[test]
fn reasoning_beyond_its_limit_ends_the_turn() {
    let (mut c, _) = started("hi");
    let big = "x".repeat(turnkeep::core::limits::REASONING_BYTES_MAX);
    assert_eq!(c.on_chunk(ModelChunk::Reasoning(big)), Action::Continue);
    assert_eq!(c.on_chunk(ModelChunk::Reasoning("y".into())), Action::Done);
    assert_eq!(c.state().error, Some(ChatError::ResponseTooLarge));
}

#[test]
fn the_call_settings_reach_every_model_request() {
    let mut settings = turnkeep::core::chat::CallSettings::default();
    settings
        .set(
            turnkeep::core::chat::Setting::Instructions,
            "instructions",
            &serde_json::json!("Be brief."),
        )
        .expect("valid");
    let config = ChatConfig {
        settings: settings.clone(),
        ..config(5)
    };
    let mut c = ChatController::new(config, Vec::new());
    let Ok(Action::CallModel(request)) = c.send("hi", NOW_MS, &mut counter_ids()) else {
        panic!("CallModel")
    };
    assert_eq!(request.settings, settings);
}
