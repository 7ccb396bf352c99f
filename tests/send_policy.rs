//! The send policy's decisions (`core::session::send`), as a table: a session (who runs, who
//! waits), a send (its policy, whether it joined before) → what it does. And the envelope's
//! additive `queuedTurns`: omitted when empty, decoded, bounded, round-tripped.
#![cfg(not(target_arch = "wasm32"))]

use serde_json::json;
use turnkeep::core::limits::SEND_QUEUE_TURNS_MAX;
use turnkeep::core::session::{
    decide_send, decode_session_snapshot, leave_queue, new_session, ActiveTurn, ClaimDecision,
    Joined, QueuedTurn, SendDecision, SendPolicy, SendRequest, SessionEnvelope, SessionIdentity,
    TerminalTurn, TurnOutcome,
};

const NOW_MS: u64 = 1_783_738_800_000;
const LEASE_MS: u64 = 45_000;
const WAIT_UNTIL_MS: u64 = NOW_MS + 20_000;

/// What a decision comes to, without its envelopes (those are checked by `queue_after`).
#[derive(Debug, PartialEq)]
enum Does<'a> {
    Claims,
    Busy,
    Replayed,
    Joins { stop: Option<&'a str> },
    Waits { stop: Option<&'a str> },
    Superseded,
    QueueFull,
    TimedOut,
}

fn identity() -> SessionIdentity {
    SessionIdentity {
        session_id: "s1".into(),
        definition_id: "d1".into(),
        definition_revision: 1,
        conversation: None,
    }
}

/// A stored session: `running` holds a lease (live unless it ends with `~`, lapsed), `waiting`
/// are queued (live unless they end with `~`, expired), `done` finished.
fn session(running: Option<&str>, waiting: &[&str], done: &[&str]) -> SessionEnvelope {
    let mut env = new_session(&identity(), NOW_MS - 1_000);
    env.cursor = 7;
    env.active_turn = running.map(|id| ActiveTurn {
        turn_id: id.trim_end_matches('~').into(),
        expires_at: if id.ends_with('~') {
            NOW_MS
        } else {
            NOW_MS + LEASE_MS
        },
    });
    env.queued_turns = waiting
        .iter()
        .map(|id| QueuedTurn {
            turn_id: id.trim_end_matches('~').into(),
            expires_at: if id.ends_with('~') {
                NOW_MS
            } else {
                WAIT_UNTIL_MS
            },
        })
        .collect();
    env.terminal_turns = done
        .iter()
        .map(|id| TerminalTurn {
            turn_id: (*id).into(),
            outcome: TurnOutcome::Completed,
        })
        .collect();
    env
}

fn decide(
    env: &SessionEnvelope,
    turn_id: &str,
    policy: SendPolicy,
    joined: Joined<'_>,
) -> SendDecision {
    decide_send(
        env,
        &SendRequest {
            turn_id,
            policy,
            now_ms: NOW_MS,
            lease_ms: LEASE_MS,
            wait_until_ms: WAIT_UNTIL_MS,
            joined,
        },
    )
    .expect("decides")
}

fn does(decision: &SendDecision) -> Does<'_> {
    match decision {
        SendDecision::Claim(ClaimDecision::Claimed(_)) => Does::Claims,
        SendDecision::Claim(ClaimDecision::Busy { .. }) => Does::Busy,
        SendDecision::Claim(ClaimDecision::Replayed { .. }) => Does::Replayed,
        SendDecision::Wait {
            join: Some(_),
            stop,
        } => Does::Joins {
            stop: stop.as_deref(),
        },
        SendDecision::Wait { join: None, stop } => Does::Waits {
            stop: stop.as_deref(),
        },
        SendDecision::Superseded => Does::Superseded,
        SendDecision::QueueFull => Does::QueueFull,
        SendDecision::TimedOut => Does::TimedOut,
    }
}

/// The queue the decision's write stores (the claim's or the join's), by turn id.
fn queue_after(decision: &SendDecision) -> Option<Vec<String>> {
    let env = match decision {
        SendDecision::Claim(ClaimDecision::Claimed(env)) => env,
        SendDecision::Wait {
            join: Some(env), ..
        } => env,
        _ => return None,
    };
    Some(env.queued_turns.iter().map(|q| q.turn_id.clone()).collect())
}

use Joined::{No, Yes};
use SendPolicy::{Latest, Queue, Reject};

/// The turns in the session when a lost join was decided: t1 running, a waiting.
static OVER: std::sync::LazyLock<[String; 2]> =
    std::sync::LazyLock::new(|| ["t1".to_owned(), "a".to_owned()]);

fn over() -> Joined<'static> {
    Joined::Unknown { over: &*OVER }
}

#[test]
fn each_policy_decides_as_its_table_says() {
    #[rustfmt::skip]
    let rows: &[(&str, Option<&str>, &[&str], &[&str], &str, SendPolicy, Joined, Does, Option<&[&str]>)] = &[
        // (case, running, waiting, done, sender, policy, joined before, does, queue after)
        ("reject: free",                None,        &[],           &[],     "t2", Reject, No,    Does::Claims, Some(&[])),
        ("reject: busy",                Some("t1"),  &[],           &[],     "t2", Reject, No,    Does::Busy, None),
        ("reject: a finished id",       None,        &[],           &["t2"], "t2", Reject, No,    Does::Replayed, None),
        ("queue: free, nobody waits",   None,        &[],           &[],     "t2", Queue,  No,    Does::Claims, Some(&[])),
        ("queue: busy, joins",          Some("t1"),  &["a"],        &[],     "t2", Queue,  No,    Does::Joins { stop: None }, Some(&["a", "t2"])),
        ("queue: free, others wait",    None,        &["a"],        &[],     "t2", Queue,  No,    Does::Joins { stop: None }, Some(&["a", "t2"])),
        ("queue: free, first in line",  None,        &["t2", "b"],  &[],     "t2", Queue,  Yes,    Does::Claims, Some(&["b"])),
        ("queue: free, second in line", None,        &["a", "t2"],  &[],     "t2", Queue,  Yes,    Does::Waits { stop: None }, None),
        ("queue: the one ahead expired", None,       &["a~", "t2"], &[],     "t2", Queue,  Yes,    Does::Claims, Some(&[])),
        ("queue: a lapsed lease",       Some("t1~"), &["t2"],       &[],     "t2", Queue,  Yes,    Does::Claims, Some(&[])),
        ("queue: busy, first in line",  Some("t1"),  &["t2"],       &[],     "t2", Queue,  Yes,    Does::Waits { stop: None }, None),
        ("queue: the same id runs",     Some("t2"),  &[],           &[],     "t2", Queue,  No,    Does::Busy, None),
        ("queue: a finished id",        Some("t1"),  &[],           &["t2"], "t2", Queue,  No,    Does::Replayed, None),
        ("queue: its entry went early", Some("t1"), &["t2~"],      &[],     "t2", Queue,  Yes,   Does::Joins { stop: None }, Some(&["t2"])),
        ("queue: retried while waiting", Some("t1"), &["t2"],       &[],     "t2", Queue,  No,    Does::Waits { stop: None }, None),
        ("latest: busy, joins, stops",  Some("t1"),  &[],           &[],     "t2", Latest, No,    Does::Joins { stop: Some("t1") }, Some(&["t2"])),
        ("latest: replaces a waiter",   Some("t1"),  &["a"],        &[],     "t2", Latest, No,    Does::Joins { stop: Some("t1") }, Some(&["t2"])),
        ("latest: waits, stops again",  Some("t1"),  &["t2"],       &[],     "t2", Latest, Yes,   Does::Waits { stop: Some("t1") }, None),
        ("latest: replaced",            Some("t1"),  &["b"],        &[],     "t2", Latest, Yes,   Does::Superseded, None),
        ("latest: free, claims",        None,        &["t2"],       &[],     "t2", Latest, Yes,   Does::Claims, Some(&[])),
        ("latest: free, newest claims", None,        &["a"],        &[],     "t2", Latest, No,    Does::Claims, Some(&[])),
        ("latest: a finished id",       Some("t1"),  &[],           &["t2"], "t2", Latest, No,    Does::Replayed, None),
        // A join whose acknowledgement was lost, decided over t1 running and a waiting:
        ("lost ack: it landed",         Some("t1"),  &["t2"],       &[],     "t2", Latest, over(), Does::Waits { stop: Some("t1") }, None),
        ("lost ack: did not land",      Some("t1"),  &["a"],        &[],     "t2", Latest, over(), Does::Joins { stop: Some("t1") }, Some(&["t2"])),
        ("lost ack: a newer one is in", Some("t1"),  &["b"],        &[],     "t2", Latest, over(), Does::Superseded, None),
        ("lost ack: a newer one runs",  Some("b"),   &[],           &[],     "t2", Latest, over(), Does::Superseded, None),
        ("lost ack: the older one runs", Some("a"),  &[],           &[],     "t2", Latest, over(), Does::Joins { stop: Some("a") }, Some(&["t2"])),
        ("lost ack, queue: join again", Some("t1"),  &["a", "b"],   &[],     "t2", Queue,  over(), Does::Joins { stop: None }, Some(&["a", "b", "t2"])),
    ];
    for (case, running, waiting, done, sender, policy, joined, expected, queue) in rows {
        let joined = *joined;
        let env = session(*running, waiting, done);
        let decision = decide(&env, sender, *policy, joined);
        assert_eq!(does(&decision), *expected, "{case}");
        let queue = queue.map(|q| q.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(queue_after(&decision), queue, "{case}: the queue written");
        if let Some(
            SendDecision::Claim(ClaimDecision::Claimed(next))
            | SendDecision::Wait {
                join: Some(next), ..
            },
        ) = Some(&decision)
        {
            assert_eq!(next.cursor, env.cursor + 1, "{case}: one cursor step");
            if let SendDecision::Wait { .. } = decision {
                assert_eq!(
                    next.active_turn, env.active_turn,
                    "{case}: a join leaves the lease alone"
                );
            }
        }
    }
}

#[test]
fn the_queue_is_bounded_and_a_waiter_past_its_wait_times_out() {
    let ids: Vec<String> = (0..SEND_QUEUE_TURNS_MAX).map(|i| format!("w{i}")).collect();
    let waiting: Vec<&str> = ids.iter().map(String::as_str).collect();
    let env = session(Some("t1"), &waiting, &[]);
    assert_eq!(does(&decide(&env, "t2", Queue, No)), Does::QueueFull);
    // `latest` keeps one place, so it is never full.
    assert!(matches!(
        does(&decide(&env, "t2", Latest, No)),
        Does::Joins { .. }
    ));
    let env = session(Some("t1"), &["t2"], &[]);
    let late = decide_send(
        &env,
        &SendRequest {
            turn_id: "t2",
            policy: Queue,
            now_ms: WAIT_UNTIL_MS,
            lease_ms: LEASE_MS,
            wait_until_ms: WAIT_UNTIL_MS,
            joined: Yes,
        },
    )
    .expect("decides");
    assert_eq!(late, SendDecision::TimedOut);
}

#[test]
fn a_waiter_that_leaves_takes_only_its_own_entry() {
    let env = session(Some("t1"), &["a", "t2", "b~"], &[]);
    let left = leave_queue(&env, "t2", NOW_MS)
        .expect("leaves")
        .expect("was queued");
    let ids: Vec<&str> = left
        .queued_turns
        .iter()
        .map(|q| q.turn_id.as_str())
        .collect();
    assert_eq!(ids, ["a"], "its entry and the expired one go");
    assert_eq!(left.active_turn, env.active_turn);
    assert_eq!(left.cursor, env.cursor + 1);
    assert_eq!(leave_queue(&env, "zz", NOW_MS).expect("decides"), None);
}

#[test]
fn queued_turns_are_additive_optional_and_checked() {
    // Empty: omitted, so the envelope is exactly what AgentsKit writes.
    let plain = session(Some("t1"), &[], &[]);
    assert!(plain.to_value().get("queuedTurns").is_none());
    // Present: last, round-trips.
    let env = session(Some("t1"), &["a", "b"], &[]);
    let value = env.to_value();
    let keys: Vec<&String> = value.as_object().expect("object").keys().collect();
    assert_eq!(keys.last().map(|k| k.as_str()), Some("queuedTurns"));
    assert_eq!(decode_session_snapshot(&value).expect("decodes"), env);
    // Bad entries are a corrupt record, like any other field's.
    let bad = |queued: serde_json::Value| {
        let mut value = env.to_value();
        value["queuedTurns"] = queued;
        decode_session_snapshot(&value).expect_err("refused").detail
    };
    let entry = |id: &str| json!({ "turnId": id, "expiresAt": 1 });
    assert!(bad(json!([entry("a"), entry("a")])).contains("queuedTurns"));
    assert!(bad(json!([{ "turnId": "a" }])).contains("expiresAt"));
    assert!(bad(json!([entry("not safe!")])).contains("turnId"));
    let too_many: Vec<_> = (0..=SEND_QUEUE_TURNS_MAX)
        .map(|i| entry(&format!("w{i}")))
        .collect();
    assert!(bad(json!(too_many)).contains("queuedTurns"));
}

#[test]
fn a_holder_moves_onto_writes_that_only_moved_the_queue() {
    use turnkeep::core::session::rebase_on_queue;
    let written = session(Some("t1"), &[], &[]);
    let later = |change: &dyn Fn(&mut SessionEnvelope)| {
        let mut stored = written.clone();
        stored.cursor += 2;
        stored.updated_at = "2026-07-11T03:00:09.000Z".into();
        change(&mut stored);
        stored
    };
    // Two sends joined meanwhile: the holder's release is decided on what they stored.
    let joined = later(&|s| s.queued_turns = session(None, &["a", "b"], &[]).queued_turns);
    assert_eq!(rebase_on_queue(&written, &joined), Some(joined.clone()));
    // Anything else changed: the holder's loss stands.
    let retaken = later(&|s| s.active_turn.as_mut().unwrap().expires_at += 1);
    assert_eq!(
        rebase_on_queue(&written, &retaken),
        None,
        "a newer claim of the same turn id"
    );
    let other = later(&|s| s.active_turn.as_mut().unwrap().turn_id = "t9".into());
    assert_eq!(
        rebase_on_queue(&written, &other),
        None,
        "another turn's claim"
    );
    let finished = later(&|s| s.terminal_turns = session(None, &[], &["t0"]).terminal_turns);
    assert_eq!(
        rebase_on_queue(&written, &finished),
        None,
        "the history moved"
    );
    assert_eq!(
        rebase_on_queue(&written, &written),
        None,
        "nothing was written since"
    );
}
