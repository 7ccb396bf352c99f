//! The turn journal (`core::session::journal`): what a claim keeps and drops, what a record
//! writes, what a replay starts from, and what the controller resumes — pure, case by case.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use serde_json::{json, Map};
use turnkeep::core::chat::controller::{Action, ChatConfig, ChatController, SendError};
use turnkeep::core::chat::demo::demo_tools;
use turnkeep::core::protocol::{Message, MessageStatus, Role, ToolCall, ToolCallStatus};
use turnkeep::core::session::{
    check_write, claim_turn, decode_session_snapshot, journal_of, new_session, record_journal,
    release_turn, replay_history, tool_idempotency_key, ClaimDecision, JournalError,
    SessionEnvelope, SessionIdentity, SessionWrite, TurnOutcome, WriteKind,
};
use turnkeep::core::limits::TURN_JOURNAL_BYTES_MAX;

const NOW_MS: u64 = 1_783_738_800_000;
const LEASE_MS: u64 = 3_000;

fn identity() -> SessionIdentity {
    SessionIdentity {
        session_id: "s1".into(),
        definition_id: "demo".into(),
        definition_revision: 1,
        conversation: None,
    }
}

fn message(id: &str, role: Role, status: MessageStatus) -> Message {
    Message {
        id: id.into(),
        role,
        content: String::new(),
        status,
        created_at: "2026-07-11T03:00:00.000Z".into(),
        parts: None,
        tool_calls: None,
        tool_call_id: None,
        metadata: None,
    }
}

fn call(id: &str, status: ToolCallStatus) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "lookup".into(),
        args: Map::from_iter([("query".to_string(), json!("cats"))]),
        status,
        result: None,
        error: None,
    }
}

fn result(call_id: &str, id: &str) -> Message {
    let mut m = message(id, Role::Tool, MessageStatus::Complete);
    m.content = format!("result of {call_id}");
    m.tool_call_id = Some(call_id.into());
    m
}

/// The user's message, then an assistant message asking for `calls`.
fn asked(calls: &[(&str, ToolCallStatus)]) -> Vec<Message> {
    let mut assistant = message("m2", Role::Assistant, MessageStatus::Complete);
    assistant.tool_calls = Some(calls.iter().map(|(id, s)| call(id, *s)).collect());
    vec![message("m1", Role::User, MessageStatus::Complete), assistant]
}

/// `t1` claimed at `NOW_MS`, then its journal recorded with `messages`.
fn journaled(messages: &[Message]) -> SessionEnvelope {
    let ClaimDecision::Claimed(claimed) =
        claim_turn(&new_session(&identity(), NOW_MS), "t1", NOW_MS, LEASE_MS).unwrap()
    else {
        panic!("claim")
    };
    record_journal(&claimed, "t1", 0, messages, NOW_MS + 10).unwrap()
}

#[test]
fn a_record_is_a_fenced_write_of_the_holder_that_round_trips() {
    let env = journaled(&asked(&[("c1", ToolCallStatus::Pending)]));
    let journal = journal_of(&env, "t1").expect("recorded");
    assert_eq!(journal.messages.len(), 2);
    assert_eq!(decode_session_snapshot(&env.to_value()).unwrap(), env);
    let base = {
        let mut base = env.clone();
        base.cursor -= 1;
        base.turn_journal = None;
        base.updated_at = turnkeep::core::checks::format_iso_millis_at(NOW_MS);
        base
    };
    let write = |turn_id: &str, next: SessionEnvelope| SessionWrite::on_stored(
        WriteKind::Record { turn_id: turn_id.into() },
        &base,
        next,
        NOW_MS + 10,
    );
    assert!(check_write(&write("t1", env.clone())).is_ok());
    // Another turn's record, or one that moves the lease, is refused before it is sent.
    assert!(check_write(&write("t2", env.clone())).is_err());
    let mut moved = env.clone();
    moved.active_turn = None;
    assert!(check_write(&write("t1", moved)).is_err());
}

#[test]
fn a_record_needs_a_live_lease_and_fits_its_limit() {
    let env = journaled(&asked(&[("c1", ToolCallStatus::Pending)]));
    let messages = asked(&[("c1", ToolCallStatus::Pending)]);
    // (who records, when) → refused?
    let cases: &[(&str, u64, Option<JournalError>)] = &[
        ("t1", NOW_MS + 20, None),
        ("t1", NOW_MS + LEASE_MS, Some(JournalError::NotHeld)), // lapsed by its own clock
        ("t2", NOW_MS + 20, Some(JournalError::NotHeld)),
    ];
    for (turn_id, at, refused) in cases {
        let got = record_journal(&env, turn_id, 0, &messages, *at).err();
        assert_eq!(&got, refused, "{turn_id} at {at}");
    }
    let mut big = message("m3", Role::Tool, MessageStatus::Complete);
    big.content = "x".repeat(TURN_JOURNAL_BYTES_MAX);
    let too_large = record_journal(&env, "t1", 0, &[big], NOW_MS + 20);
    assert!(matches!(too_large, Err(JournalError::TooLarge { .. })), "{too_large:?}");
}

#[test]
fn a_trailing_streaming_message_is_not_recorded() {
    let mut messages = asked(&[("c1", ToolCallStatus::Complete)]);
    messages.push(result("c1", "m3"));
    messages.push(message("m4", Role::Assistant, MessageStatus::Streaming));
    let env = journaled(&messages);
    let ids: Vec<_> = journal_of(&env, "t1").unwrap().messages.iter().map(|m| m.id.clone()).collect();
    assert_eq!(ids, ["m1", "m2", "m3"]);
}

/// (the claimer, when) → whether the journal survives the claim, and what t1's history says.
#[test]
fn a_claim_keeps_the_journal_of_its_own_turn_only() {
    let env = journaled(&asked(&[("c1", ToolCallStatus::Pending)]));
    let lapsed = NOW_MS + LEASE_MS;
    let cases: &[(&str, u64, Option<(bool, Option<TurnOutcome>)>)] = &[
        ("t2", NOW_MS + 20, None),                                  // busy
        ("t1", lapsed, Some((true, None))),                         // its retry replays it
        ("t2", lapsed, Some((false, Some(TurnOutcome::Indeterminate)))), // another turn ends it
    ];
    for (claimer, at, expected) in cases {
        let got = match claim_turn(&env, claimer, *at, LEASE_MS).unwrap() {
            ClaimDecision::Claimed(next) => Some((
                journal_of(&next, "t1").is_some(),
                next.terminal_turn("t1").map(|t| t.outcome),
            )),
            _ => None,
        };
        assert_eq!(&got, expected, "{claimer} at {at}");
    }
    // A journal left after its lease was given up (an abandoned retry) is ended by the next
    // claim of another turn just the same.
    let mut abandoned = env.clone();
    abandoned.active_turn = None;
    let ClaimDecision::Claimed(next) = claim_turn(&abandoned, "t2", NOW_MS + 20, LEASE_MS).unwrap() else {
        panic!("claim")
    };
    assert_eq!(next.turn_journal, None);
    assert_eq!(next.terminal_turn("t1").map(|t| t.outcome), Some(TurnOutcome::Indeterminate));
}

#[test]
fn a_release_drops_its_own_journal() {
    let env = journaled(&asked(&[("c1", ToolCallStatus::Pending)]));
    let released = release_turn(&env, "t1", TurnOutcome::Completed, NOW_MS + 20).unwrap();
    assert_eq!(released.turn_journal, None);
    let other = release_turn(&env, "t9", TurnOutcome::Completed, NOW_MS + 20).unwrap();
    assert!(other.turn_journal.is_some());
}

#[test]
fn a_replay_starts_from_the_history_before_the_turn() {
    let env = journaled(&asked(&[("c1", ToolCallStatus::Pending)]));
    let mut journal = journal_of(&env, "t1").unwrap().clone();
    journal.history_len = 2;
    let h = |n: usize| (0..n).map(|i| message(&format!("h{i}"), Role::User, MessageStatus::Complete)).collect::<Vec<_>>();
    // The memory as the crashed turn left it: unsaved (2), saved with its own messages (4).
    assert_eq!(replay_history(&journal, h(2)).unwrap(), h(2));
    assert_eq!(replay_history(&journal, h(4)).unwrap(), h(2));
    assert!(replay_history(&journal, h(1)).is_err());
}

#[test]
fn idempotency_keys_name_the_session_the_turn_and_the_call() {
    assert_eq!(tool_idempotency_key("s1", "t1", "call-7"), "s1:t1:call-7");
}

fn ids() -> impl FnMut(&str) -> String {
    let mut n = 0;
    move |prefix: &str| {
        n += 1;
        format!("{prefix}-r{n}")
    }
}

/// What `resume` does with a journal, by the state of its calls.
#[test]
fn resume_runs_only_the_calls_without_a_recorded_result() {
    use ToolCallStatus::*;
    let config = ChatConfig { tools: demo_tools(), ..ChatConfig::default() };
    // (calls of the recorded assistant message, results recorded) → what runs, or the model
    let cases: &[(&[(&str, ToolCallStatus)], &[&str], &str)] = &[
        (&[("c1", Pending)], &[], "run c1"),
        (&[("c1", Running)], &[], "run c1"), // killed inside the tool: it runs again
        (&[("c1", Complete), ("c2", Pending)], &["c1"], "run c2"),
        (&[("c1", Complete), ("c2", Error)], &["c1", "c2"], "model"),
        (&[("c1", Complete), ("c2", RequiresConfirmation)], &["c1"], "done"),
    ];
    for (calls, answered, expected) in cases {
        let mut recorded = asked(calls);
        for (i, id) in answered.iter().enumerate() {
            recorded.push(result(id, &format!("m{}", 3 + i)));
        }
        let mut controller = ChatController::new(config.clone(), vec![]);
        let action = controller.resume(recorded.clone(), NOW_MS, &mut ids()).unwrap();
        let got = match &action {
            Action::RunTools(runs) => format!("run {}", runs.iter().map(|r| r.id.as_str()).collect::<Vec<_>>().join(",")),
            Action::CallModel(request) => {
                assert_eq!(request.messages, recorded, "the model reads what was recorded");
                "model".into()
            }
            Action::Done => "done".into(),
            other => format!("{other:?}"),
        };
        assert_eq!(&got, expected, "{calls:?} answered {answered:?}");
        assert!(controller.state().messages.starts_with(&recorded[..1]));
    }
    let mut controller = ChatController::new(config, vec![]);
    let nothing = controller.resume(vec![message("m1", Role::User, MessageStatus::Complete)], NOW_MS, &mut ids());
    assert_eq!(nothing, Err(SendError::NothingToResume));
}
