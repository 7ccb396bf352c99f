//! Continuing a call that waits for a person (`ChatController::resolve_call`): approve runs
//! exactly that call with the idempotency key and the model continues; reject and expiry record
//! the denial the model reads; another call still waiting keeps the model quiet; ids a
//! confirmation cannot be bound to are replaced, oversized inputs are not asked about.
#![cfg(not(target_arch = "wasm32"))]

mod chat_support;

use chat_support::{counter_ids, drive, drive_from, summary, NOW_MS};
use serde_json::json;
use turnkeep::core::chat::controller::{
    CallResolution, ResolveCallError, CONFIRMATION_EXPIRED, INPUT_TOO_LARGE_TO_CONFIRM, REJECTED,
};
use turnkeep::core::chat::demo::DemoStep;
use turnkeep::core::chat::{
    Action, ChatConfig, ChatController, ChatStatus, ModelChunk, ModelRequest, ToolInvocation,
    ToolSpec,
};
use turnkeep::core::limits::CONFIRMATION_CALL_ID_CHARS_MAX;
use turnkeep::core::protocol::{Message, ToolCallStatus};

fn config() -> ChatConfig {
    let spec = |name: &str, requires_confirmation| ToolSpec {
        name: name.into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        requires_confirmation,
        host_validates: false,
    };
    ChatConfig {
        tools: vec![spec("lookup", false), spec("transfer", true)],
        max_tool_iterations: 5,
        ..Default::default()
    }
}

fn call(index: u32, id: Option<&str>, name: &str, args: &str) -> DemoStep {
    DemoStep::Chunk(ModelChunk::ToolCall {
        index,
        id: id.map(Into::into),
        name: Some(name.into()),
        args_delta: args.into(),
    })
}

/// The conversation after a turn whose model asked for `calls` (and later answers `done`).
fn waiting(calls: Vec<DemoStep>) -> Vec<Message> {
    let mut first = Some(calls);
    let mut controller = ChatController::new(config(), Vec::new());
    drive(
        &mut controller,
        "pay",
        &mut |_: &ModelRequest| {
            first
                .take()
                .unwrap_or_else(|| vec![DemoStep::Chunk(ModelChunk::Text("done".into()))])
        },
        &mut |i: &ToolInvocation| Ok(format!("ran {}", i.name)),
    );
    assert_eq!(controller.state().status, ChatStatus::Complete);
    controller.state().messages.clone()
}

/// Continues `history` at `call_id` with `resolution`; the model answers `ok` (recording how
/// many messages it saw), tools answer `ran <name>` (recording each invocation).
fn resume(
    history: Vec<Message>,
    call_id: &str,
    resolution: CallResolution,
) -> (ChatController, Vec<ToolInvocation>, Vec<usize>) {
    let mut controller = ChatController::new(config(), history);
    let mut ids = counter_ids();
    let first = controller
        .resolve_call(call_id, resolution, NOW_MS, &mut ids)
        .expect("the call waits");
    let mut ran = Vec::new();
    let mut model_saw = Vec::new();
    drive_from(
        &mut controller,
        first,
        &mut |r: &ModelRequest| {
            model_saw.push(r.messages.len());
            vec![DemoStep::Chunk(ModelChunk::Text("ok".into()))]
        },
        &mut |i: &ToolInvocation| {
            ran.push(i.clone());
            Ok(format!("ran {}", i.name))
        },
        &mut ids,
        vec![0],
    );
    (controller, ran, model_saw)
}

#[test]
fn approve_runs_that_call_with_its_key_and_the_model_continues() {
    let history = waiting(vec![call(0, Some("t1"), "transfer", r#"{"amount":5}"#)]);
    assert_eq!(
        summary(
            &ChatController::new(config(), history.clone())
                .state()
                .clone()
        )[2],
        r#"  call t1 transfer {"amount":5} requires_confirmation"#
    );
    let key = "confirm-t1".to_string();
    let (controller, ran, model_saw) = resume(
        history,
        "t1",
        CallResolution::Approve {
            idempotency_key: key.clone(),
        },
    );
    assert_eq!(ran.len(), 1);
    assert_eq!(ran[0].id, "t1");
    assert_eq!(ran[0].idempotency_key, Some(key));
    assert_eq!(
        summary(controller.state()),
        [
            r#"user complete "pay""#,
            r#"assistant complete """#,
            r#"  call t1 transfer {"amount":5} complete result="ran transfer""#,
            r#"tool complete "ran transfer" for t1"#,
            r#"assistant complete "ok""#,
        ]
    );
    assert_eq!(model_saw, [3], "the model reads the result");
    assert_eq!(controller.state().status, ChatStatus::Complete);
}

#[test]
fn reject_and_expiry_feed_the_denial_and_never_run_the_tool() {
    let cases = [
        (
            CallResolution::Reject { reason: None },
            REJECTED.to_string(),
        ),
        (
            CallResolution::Reject {
                reason: Some("too much".into()),
            },
            format!("{REJECTED} Reason: too much"),
        ),
        (CallResolution::Expire, CONFIRMATION_EXPIRED.to_string()),
    ];
    for (resolution, denial) in cases {
        let history = waiting(vec![call(0, Some("t1"), "transfer", r#"{"amount":5}"#)]);
        let (controller, ran, model_saw) = resume(history, "t1", resolution);
        assert!(ran.is_empty());
        let lines = summary(controller.state());
        assert_eq!(
            lines[2],
            format!(r#"  call t1 transfer {{"amount":5}} error error="{denial}""#)
        );
        assert_eq!(lines[3], format!(r#"tool error "{denial}" for t1"#));
        assert_eq!(model_saw, [3], "the model reads why");
    }
}

#[test]
fn while_another_call_of_the_message_waits_the_model_is_not_called() {
    let history = waiting(vec![
        call(0, Some("a"), "transfer", r#"{"amount":1}"#),
        call(1, Some("b"), "transfer", r#"{"amount":2}"#),
    ]);
    let approve = CallResolution::Approve {
        idempotency_key: "confirm-a".into(),
    };
    let (controller, ran, model_saw) = resume(history, "a", approve);
    assert_eq!(ran.len(), 1);
    assert!(model_saw.is_empty());
    let state = controller.state();
    assert_eq!(state.status, ChatStatus::Complete);
    assert_eq!(controller.waiting_calls().len(), 1);
    assert_eq!(controller.waiting_calls()[0].id, "b");
    // Then rejecting the second one lets the model answer.
    let (after, ran, model_saw) = resume(
        state.messages.clone(),
        "b",
        CallResolution::Reject { reason: None },
    );
    assert!(ran.is_empty());
    assert_eq!(model_saw.len(), 1);
    assert!(after.waiting_calls().is_empty());
}

#[test]
fn only_a_waiting_call_can_be_resolved_and_only_once_per_controller() {
    let history = waiting(vec![call(0, Some("t1"), "transfer", r#"{"amount":5}"#)]);
    let mut controller = ChatController::new(config(), history.clone());
    let mut ids = counter_ids();
    let reject = || CallResolution::Reject { reason: None };
    assert_eq!(
        controller.resolve_call("nope", reject(), NOW_MS, &mut ids),
        Err(ResolveCallError::NotWaiting)
    );
    assert_eq!(controller.revision(), 0, "a refusal changes nothing");
    assert!(matches!(
        controller.resolve_call("t1", reject(), NOW_MS, &mut ids),
        Ok(Action::CallModel(_))
    ));
    assert_eq!(
        controller.resolve_call("t1", reject(), NOW_MS, &mut ids),
        Err(ResolveCallError::AlreadyStarted)
    );
    // A call answered already (its tool message exists) does not wait.
    let (done, _, _) = resume(history, "t1", reject());
    let mut again = ChatController::new(config(), done.state().messages.clone());
    assert_eq!(
        again.resolve_call("t1", reject(), NOW_MS, &mut ids),
        Err(ResolveCallError::NotWaiting)
    );
}

#[test]
fn a_waiting_call_gets_an_id_its_confirmation_can_be_bound_to() {
    let long = "c".repeat(CONFIRMATION_CALL_ID_CHARS_MAX + 1);
    let fits = "c".repeat(CONFIRMATION_CALL_ID_CHARS_MAX);
    let cases = [
        ("call abc", false), // models may send any string
        ("_abc", false),
        (long.as_str(), false),
        ("call_abc123", true), // OpenAI's form
        ("call-7", true),
        (fits.as_str(), true),
    ];
    for (id, kept) in cases {
        let history = waiting(vec![
            call(0, Some(id), "transfer", "{}"),
            call(1, Some("look_1"), "lookup", "{}"),
        ]);
        let calls = history[1].tool_calls.clone().unwrap();
        assert_eq!(calls[0].id == id, kept, "{id}");
        assert_eq!(
            calls[1].id, "look_1",
            "a call that runs keeps the model's id"
        );
        assert_eq!(calls[0].status, ToolCallStatus::RequiresConfirmation);
    }
}

#[test]
fn arguments_too_large_for_a_confirmation_are_not_asked_about() {
    let deep = format!("{}1{}", "[".repeat(30), "]".repeat(30));
    let history = waiting(vec![call(
        0,
        Some("t1"),
        "transfer",
        &format!(r#"{{"x":{deep}}}"#),
    )]);
    let call = &history[1].tool_calls.as_ref().unwrap()[0];
    assert_eq!(call.status, ToolCallStatus::Error);
    assert_eq!(call.error.as_deref(), Some(INPUT_TOO_LARGE_TO_CONFIRM));
}
