//! Shared by the `chat_*` tests: a synchronous driver for the controller, deterministic ids,
//! and a one-line-per-message summary that makes expected states easy to read.
#![allow(dead_code)]

use turnkeep::core::chat::demo::DemoStep;
use turnkeep::core::chat::{
    Action, ChatController, ChatState, ModelRequest, ToolInvocation, ToolOutcome,
};
use turnkeep::core::protocol::Message;

/// 2026-07-11T03:00:00.000Z
pub const NOW_MS: u64 = 1_783_738_800_000;

/// Ids `msg-1`, `call-2`, ... in the order they are drawn.
pub fn counter_ids() -> impl FnMut(&str) -> String {
    let mut n = 0u32;
    move |prefix: &str| {
        n += 1;
        format!("{prefix}-{n}")
    }
}

/// Runs one turn to its end: each `CallModel` plays the script `model` returns for the request,
/// each `RunTools` runs `tool` on every invocation in order. Returns the revision seen after
/// every input, and asserts they never go down.
pub fn drive(
    controller: &mut ChatController,
    input: &str,
    model: &mut dyn FnMut(&ModelRequest) -> Vec<DemoStep>,
    tool: &mut dyn FnMut(&ToolInvocation) -> ToolOutcome,
) -> Vec<u64> {
    let mut ids = counter_ids();
    let mut revisions = vec![controller.revision()];
    let seen = |c: &ChatController, revisions: &mut Vec<u64>| {
        let last = *revisions.last().expect("non-empty");
        assert!(c.revision() >= last, "revision went down");
        revisions.push(c.revision());
    };
    let action = controller
        .send(input, NOW_MS, &mut ids)
        .expect("send accepted");
    seen(controller, &mut revisions);
    drive_from(controller, action, model, tool, &mut ids, revisions)
}

/// Performs `action` and every action after it until the turn ends (see [`drive`]).
pub fn drive_from(
    controller: &mut ChatController,
    mut action: Action,
    model: &mut dyn FnMut(&ModelRequest) -> Vec<DemoStep>,
    tool: &mut dyn FnMut(&ToolInvocation) -> ToolOutcome,
    ids: &mut dyn turnkeep::core::chat::IdSource,
    mut revisions: Vec<u64>,
) -> Vec<u64> {
    let seen = |c: &ChatController, revisions: &mut Vec<u64>| {
        let last = *revisions.last().expect("non-empty");
        assert!(c.revision() >= last, "revision went down");
        revisions.push(c.revision());
    };
    for _ in 0..1000 {
        action = match action {
            Action::CallModel(request) => {
                let mut next = None;
                for step in model(&request) {
                    let result = match step {
                        DemoStep::Chunk(chunk) => controller.on_chunk(chunk),
                        DemoStep::Fail => controller.on_model_error(),
                    };
                    seen(controller, &mut revisions);
                    if result == Action::Done || controller.is_done() {
                        next = Some(Action::Done);
                        break;
                    }
                }
                let next = next.unwrap_or_else(|| controller.on_model_end(NOW_MS, ids));
                seen(controller, &mut revisions);
                next
            }
            Action::RunTools(invocations) => {
                for invocation in &invocations {
                    controller.on_tool_started(&invocation.id);
                    seen(controller, &mut revisions);
                }
                let mut next = Action::Continue;
                for invocation in &invocations {
                    next = controller.on_tool_result(&invocation.id, tool(invocation), NOW_MS, ids);
                    seen(controller, &mut revisions);
                }
                next
            }
            Action::Continue => panic!("Continue after a settled step"),
            Action::Done => return revisions,
        };
    }
    panic!("the turn did not end within 1000 steps");
}

/// `role status "content"`, then one indented line per tool call and the `toolCallId`.
pub fn summary(state: &ChatState) -> Vec<String> {
    state.messages.iter().flat_map(message_lines).collect()
}

fn message_lines(m: &Message) -> Vec<String> {
    let value = turnkeep::core::protocol::message_to_value(m);
    let mut head = format!(
        "{} {} {:?}",
        value["role"].as_str().unwrap_or("?"),
        value["status"].as_str().unwrap_or("?"),
        m.content
    );
    if let Some(id) = &m.tool_call_id {
        head.push_str(&format!(" for {id}"));
    }
    let mut lines = vec![head];
    for call in value["toolCalls"].as_array().into_iter().flatten() {
        let mut line = format!(
            "  call {} {} {} {}",
            call["id"].as_str().unwrap_or("?"),
            call["name"].as_str().unwrap_or("?"),
            call["args"],
            call["status"].as_str().unwrap_or("?")
        );
        if let Some(result) = call.get("result") {
            line.push_str(&format!(" result={result}"));
        }
        if let Some(error) = call.get("error") {
            line.push_str(&format!(" error={error}"));
        }
        lines.push(line);
    }
    lines
}
