//! The confirmations a session log shows, through the one projection: TanStack AI 0.58's
//! approval interrupt (`RUN_FINISHED` outcome), 0.8's `CUSTOM approval-requested`, and
//! turnkeep's `CUSTOM turnkeep.confirmation` states. Chunk shapes follow what TanStack writes
//! (see the notes on its chunk vocabulary); turnkeep's own writer is covered by turn_confirm.rs.
#![cfg(not(target_arch = "wasm32"))]

use serde_json::{json, Value};
use turnkeep::core::projection::Projection;
use turnkeep::core::protocol::ToolCallStatus;
use turnkeep::core::session::ConfirmationStatus;

fn project(chunks: &[Value]) -> Projection {
    let mut projection = Projection::new();
    projection.feed_all(chunks);
    projection
}

fn call_started(id: &str) -> Vec<Value> {
    vec![
        json!({"type": "RUN_STARTED", "runId": "r1", "threadId": "s1"}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}),
        json!({"type": "TOOL_CALL_START", "toolCallId": id, "toolCallName": "transfer", "parentMessageId": "m1"}),
        json!({"type": "TOOL_CALL_ARGS", "toolCallId": id, "delta": "{\"amount\":5}"}),
        json!({"type": "TOOL_CALL_END", "toolCallId": id}),
    ]
}

/// (token, toolCallId, expiresAt, status, action) of each confirmation.
type Shown = (
    String,
    String,
    Option<u64>,
    ConfirmationStatus,
    Option<String>,
);

fn summary(p: &Projection) -> Vec<Shown> {
    p.confirmations()
        .iter()
        .map(|c| {
            (
                c.token.clone(),
                c.tool_call_id.clone(),
                c.expires_at,
                c.status,
                c.action.clone(),
            )
        })
        .collect()
}

fn call_status(p: &Projection, id: &str) -> ToolCallStatus {
    p.messages()
        .flat_map(|m| m.tool_calls.iter().flatten())
        .find(|c| c.id == id)
        .map(|c| c.status)
        .expect("the call")
}

#[test]
fn a_tanstack_058_approval_interrupt_is_a_pending_confirmation() {
    let mut chunks = call_started("call_1");
    chunks.push(json!({
        "type": "RUN_FINISHED", "runId": "r1", "threadId": "s1",
        "outcome": {"type": "interrupt", "interrupts": [
            {"id": "approval_call_1", "reason": "tool_call", "toolCallId": "call_1",
             "expiresAt": "2026-07-11T03:05:00.000Z",
             "metadata": {"kind": "approval", "toolName": "transfer", "input": {"amount": 5}}},
            {"id": "input_2", "reason": "client_tool_input", "toolCallId": "call_2",
             "metadata": {"kind": "client_tool"}},
        ]},
        "metadata": {"tanstack": {"finishReason": "tool_calls"}},
    }));
    let p = project(&chunks);
    assert_eq!(
        summary(&p),
        [(
            "approval_call_1".into(),
            "call_1".into(),
            Some(1_783_739_100_000),
            ConfirmationStatus::Pending,
            Some("transfer".into())
        )],
        "client-tool interrupts are not confirmations"
    );
    assert_eq!(
        p.confirmations()[0].input,
        json!({"amount": 5}).as_object().unwrap().clone()
    );
    assert_eq!(
        call_status(&p, "call_1"),
        ToolCallStatus::RequiresConfirmation
    );
}

#[test]
fn a_tanstack_08_approval_request_is_a_pending_confirmation() {
    let mut chunks = call_started("call_1");
    chunks.push(json!({"type": "RUN_FINISHED", "runId": "r1", "finishReason": "tool_calls"}));
    chunks.push(json!({
        "type": "CUSTOM", "name": "approval-requested",
        "value": {"toolCallId": "call_1", "toolName": "transfer", "input": {"amount": 5},
                  "approval": {"id": "approval_call_1", "needsApproval": true}},
    }));
    let p = project(&chunks);
    assert_eq!(
        summary(&p),
        [(
            "approval_call_1".into(),
            "call_1".into(),
            None,
            ConfirmationStatus::Pending,
            Some("transfer".into())
        )]
    );
    assert_eq!(
        call_status(&p, "call_1"),
        ToolCallStatus::RequiresConfirmation
    );
}

#[test]
fn turnkeeps_record_states_move_a_confirmation_and_a_request_never_moves_it_back() {
    let record = |status: &str| {
        json!({"type": "CUSTOM", "name": "turnkeep.confirmation", "value": {
            "token": "confirm-c1", "action": "transfer", "input": {"amount": 5},
            "toolCallId": "c1", "expiresAt": 1_783_739_100_000u64, "status": status}})
    };
    let request = json!({"type": "CUSTOM", "name": "approval-requested", "value": {
        "toolCallId": "c1", "toolName": "transfer", "input": {"amount": 5},
        "approval": {"id": "confirm-c1", "needsApproval": true}}});
    let mut chunks = call_started("c1");
    chunks.extend([
        request.clone(),
        record("pending"),
        record("approving"),
        record("approved"),
        request,
    ]);
    let p = project(&chunks);
    assert_eq!(
        summary(&p),
        [(
            "confirm-c1".into(),
            "c1".into(),
            Some(1_783_739_100_000),
            ConfirmationStatus::Approved,
            Some("transfer".into())
        )]
    );
    // A record chunk that is not a valid record changes nothing.
    let mut broken = call_started("c1");
    broken.push(json!({"type": "CUSTOM", "name": "turnkeep.confirmation", "value": {"token": "bad token", "status": "approved"}}));
    assert!(project(&broken).confirmations().is_empty());
}
