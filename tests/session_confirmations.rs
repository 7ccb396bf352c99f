//! Confirmation records (AgentsKit's two-step confirmations): two-step transitions, idempotent replays, typed errors.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use serde_json::{json, Map, Value};
use turnkeep::core::session::{
    begin_approve, begin_reject, decode_session_snapshot, finish_confirmation, new_session,
    propose_confirmation, upstream_action, ConfirmDecision, ConfirmError, Confirmation,
    ConfirmationProposal, ConfirmationStatus, SessionEnvelope, SessionIdentity, UpstreamAction,
};

use ConfirmationStatus::*;

const NOW_MS: u64 = 1_783_738_800_000;
const EXPIRES_AT_MS: u64 = NOW_MS + 1_000;

fn identity() -> SessionIdentity {
    SessionIdentity {
        session_id: "s1".into(),
        definition_id: "d1".into(),
        definition_revision: 1,
        conversation: None,
    }
}

fn record(token: &str, status: ConfirmationStatus) -> Confirmation {
    Confirmation {
        token: token.into(),
        action: "transfer".into(),
        input: Map::from_iter([("amount".to_string(), json!(10))]),
        tool_call_id: format!("call-{token}"),
        expires_at: EXPIRES_AT_MS,
        status,
    }
}

/// A session with the record under test (`c1`) between two bystanders.
fn session_with(status: ConfirmationStatus) -> SessionEnvelope {
    let mut env = new_session(&identity(), NOW_MS);
    env.cursor = 9;
    env.confirmations = vec![
        record("c0", Pending),
        record("c1", status),
        record("c2", Approving),
    ];
    env
}

type Step = fn(&SessionEnvelope, &str, &str, u64) -> Result<ConfirmDecision, ConfirmError>;
/// `Some(status)`: a transition to it; `None`: unchanged.
type Expected = Result<Option<ConfirmationStatus>, ConfirmError>;

fn check(label: &str, step: Step, from: ConfirmationStatus, now_ms: u64, expected: Expected) {
    let env = session_with(from);
    let got = step(&env, "s1", "c1", now_ms);
    match (got, expected) {
        (Ok(ConfirmDecision::Transition { envelope, record }), Ok(Some(to))) => {
            assert_eq!(record.status, to, "{label}");
            assert_eq!(envelope.cursor, env.cursor + 1, "{label}");
            assert_eq!(envelope.confirmations[1], record, "{label}");
            let mut rest = envelope.confirmations.clone();
            rest[1].status = from;
            assert_eq!(
                rest, env.confirmations,
                "{label}: other records and fields untouched"
            );
            assert!(
                decode_session_snapshot(&envelope.to_value()).is_ok(),
                "{label}: valid envelope"
            );
        }
        (Ok(ConfirmDecision::Unchanged { record }), Ok(None)) => {
            assert_eq!(record, env.confirmations[1], "{label}");
        }
        (Err(e), Err(expected)) => assert_eq!(e, expected, "{label}"),
        (got, expected) => panic!("{label}: got {got:?}, expected {expected:?}"),
    }
}

#[test]
fn transitions() {
    let late = EXPIRES_AT_MS;
    let not_claimed = || Err(ConfirmError::NotClaimed { token: "c1".into() });
    let cases: Vec<(&str, Step, ConfirmationStatus, u64, Expected)> = vec![
        (
            "approve pending",
            begin_approve,
            Pending,
            NOW_MS,
            Ok(Some(Approving)),
        ),
        (
            "approve at expiry",
            begin_approve,
            Pending,
            late,
            Ok(Some(Expiring)),
        ),
        (
            "approve after expiry",
            begin_approve,
            Pending,
            late + 1,
            Ok(Some(Expiring)),
        ),
        (
            "reject pending",
            begin_reject,
            Pending,
            NOW_MS,
            Ok(Some(Rejecting)),
        ),
        (
            "reject ignores expiry",
            begin_reject,
            Pending,
            late + 1,
            Ok(Some(Rejecting)),
        ),
        (
            "finish approving",
            finish_confirmation,
            Approving,
            NOW_MS,
            Ok(Some(Approved)),
        ),
        (
            "finish rejecting",
            finish_confirmation,
            Rejecting,
            NOW_MS,
            Ok(Some(Rejected)),
        ),
        (
            "finish expiring",
            finish_confirmation,
            Expiring,
            late + 1,
            Ok(Some(Expired)),
        ),
        (
            "finish pending",
            finish_confirmation,
            Pending,
            NOW_MS,
            not_claimed(),
        ),
    ];
    for (label, step, from, now_ms, expected) in cases {
        check(label, step, from, now_ms, expected);
    }
}

#[test]
fn non_pending_records_are_returned_unchanged() {
    for from in [Approving, Rejecting, Expiring, Approved, Rejected, Expired] {
        check("approve replay", begin_approve, from, NOW_MS, Ok(None));
        check("reject replay", begin_reject, from, NOW_MS, Ok(None));
    }
    for from in [Approved, Rejected, Expired] {
        check("finish replay", finish_confirmation, from, NOW_MS, Ok(None));
    }
}

#[test]
fn unknown_token_and_foreign_session_are_typed_errors() {
    let env = session_with(Pending);
    let steps: [Step; 3] = [begin_approve, begin_reject, finish_confirmation];
    for step in steps {
        assert_eq!(
            step(&env, "s1", "nope", NOW_MS),
            Err(ConfirmError::UnknownToken("nope".into()))
        );
        assert_eq!(
            step(&env, "s2", "c1", NOW_MS),
            Err(ConfirmError::ForeignSession {
                expected: "s2".into(),
                actual: "s1".into()
            })
        );
    }
    let mut exhausted = env.clone();
    exhausted.cursor = 9_007_199_254_740_991;
    assert_eq!(
        begin_approve(&exhausted, "s1", "c1", NOW_MS),
        Err(ConfirmError::CursorExhausted)
    );
}

#[test]
fn upstream_calls_follow_the_claimed_state() {
    assert_eq!(upstream_action(Approving), Some(UpstreamAction::Approve));
    assert_eq!(upstream_action(Rejecting), Some(UpstreamAction::Deny));
    assert_eq!(upstream_action(Expiring), Some(UpstreamAction::DenyExpired));
    for settled in [Pending, Approved, Rejected, Expired] {
        assert_eq!(upstream_action(settled), None);
    }
}

fn proposal(suffix: &str, input: Value) -> ConfirmationProposal {
    let Value::Object(input) = input else {
        panic!("test input must be an object")
    };
    ConfirmationProposal {
        suffix: suffix.into(),
        action: "transfer".into(),
        input,
    }
}

#[test]
fn proposals() {
    let env = new_session(&identity(), NOW_MS);
    let (next, rec) = propose_confirmation(
        &env,
        proposal("abc", json!({"amount": 5})),
        true,
        NOW_MS,
        300_000,
    )
    .expect("ok");
    assert_eq!(
        (rec.token.as_str(), rec.tool_call_id.as_str()),
        ("confirm-abc", "app-abc")
    );
    assert_eq!(
        (rec.status, rec.expires_at, next.cursor),
        (Pending, NOW_MS + 300_000, 1)
    );
    assert_eq!(next.confirmations, vec![rec.clone()]);
    let (_, rejected) =
        propose_confirmation(&env, proposal("abc", json!({})), false, NOW_MS, 1).expect("ok");
    assert_eq!(
        rejected.status, Rejected,
        "not requires_confirmation upstream → rejected"
    );

    let bad = |label: &str, env: &SessionEnvelope, p: ConfirmationProposal| {
        let got = propose_confirmation(env, p, true, NOW_MS, 300_000);
        assert!(
            matches!(got, Err(ConfirmError::InvalidProposal(_))),
            "{label}: {got:?}"
        );
    };
    bad("duplicate token", &next, proposal("abc", json!({})));
    bad("suffix of 121", &env, proposal(&"a".repeat(121), json!({})));
    bad("suffix not SafeId", &env, proposal("-a", json!({})));
    bad(
        "input beyond bounds",
        &env,
        proposal("a", json!({"s": "x".repeat(16_385)})),
    );
    let mut full = env.clone();
    full.confirmations = (0..1000)
        .map(|i| record(&format!("c{i}"), Expired))
        .collect();
    bad("a thousand records", &full, proposal("a", json!({})));
    assert!(
        propose_confirmation(&env, proposal(&"a".repeat(120), json!({})), true, NOW_MS, 1).is_ok()
    );
}

#[test]
fn a_full_approval_round_trips_through_storage_form() {
    // claim → (upstream) → finish, each result serialized and decoded as storage would.
    let env = session_with(Pending);
    let ConfirmDecision::Transition { envelope, .. } =
        begin_approve(&env, "s1", "c1", NOW_MS).expect("claim")
    else {
        panic!("expected a transition")
    };
    let stored =
        decode_session_snapshot(&Value::String(envelope.to_json_string())).expect("decode");
    let ConfirmDecision::Transition { envelope, record } =
        finish_confirmation(&stored, "s1", "c1", NOW_MS).expect("finish")
    else {
        panic!("expected a transition")
    };
    assert_eq!((record.status, envelope.cursor), (Approved, env.cursor + 2));
    assert!(matches!(
        begin_approve(&envelope, "s1", "c1", NOW_MS),
        Ok(ConfirmDecision::Unchanged { .. })
    ));
}

// ---- Confirmations of chat turns (`resolution.rs`): records at a turn's release, the
// resolution claim with the continuation's lease, settle, abandon, stuck, reconcile.

use turnkeep::core::protocol::{ToolCall, ToolCallStatus};
use turnkeep::core::session::{
    abandon_resolution, claim_resolution, confirmation_action, reconcile_confirmation,
    records_for_waiting_calls, settle_turn, stuck_confirmations, ActiveTurn, Reconciled,
    ResolutionClaim, TurnOutcome, TurnSettlement,
};

const LEASE_MS: u64 = 45_000;

fn waiting_call(id: &str, name: &str, args: Value) -> ToolCall {
    let Value::Object(args) = args else {
        panic!("args must be an object")
    };
    ToolCall {
        id: id.into(),
        name: name.into(),
        args,
        status: ToolCallStatus::RequiresConfirmation,
        result: None,
        error: None,
    }
}

#[test]
fn a_turn_proposes_one_pending_record_per_call_it_can_bind() {
    let env = session_with(Pending); // holds c0, c1, c2 (tool calls call-c0 ...)
    let calls = [
        waiting_call("k1", "transfer", json!({"amount": 1})),
        waiting_call("k1", "transfer", json!({"amount": 1})), // the same call twice
        waiting_call("call-c1", "transfer", json!({})),       // has a record already
        waiting_call("_odd", "-send_it", json!({})),          // id not a SafeId
        waiting_call("k2", "-send_it", json!({"s": "x".repeat(16_385)})), // input unbounded
        waiting_call("k3", "_wire", json!({})),
    ];
    let refs: Vec<&ToolCall> = calls.iter().collect();
    let records = records_for_waiting_calls(&env, &refs, NOW_MS, 60_000);
    let got: Vec<(&str, &str, &str, u64)> = records
        .iter()
        .map(|r| {
            (
                r.token.as_str(),
                r.tool_call_id.as_str(),
                r.action.as_str(),
                r.expires_at,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("confirm-k1", "k1", "transfer", NOW_MS + 60_000),
            ("confirm-k3", "k3", "tool:_wire", NOW_MS + 60_000),
        ]
    );
    assert!(records.iter().all(|r| r.status == Pending));
    assert_eq!(confirmation_action("send_money"), "send_money");
    assert_eq!(confirmation_action("-x"), "tool:-x");
    assert!(records_for_waiting_calls(&env, &refs, u64::MAX - 1, 60_000).is_empty());
}

/// (label, record status, approve, now, lease held, wanted: Some(claimed status) / Err(busy)).
type ClaimCase = (
    &'static str,
    ConfirmationStatus,
    bool,
    u64,
    Option<ActiveTurn>,
    Result<Option<ConfirmationStatus>, ()>,
);

#[test]
fn a_resolution_claims_the_record_and_the_continuation_lease_in_one_write() {
    let late = EXPIRES_AT_MS;
    let cases: Vec<ClaimCase> = vec![
        ("approve", Pending, true, NOW_MS, None, Ok(Some(Approving))),
        (
            "approve late",
            Pending,
            true,
            late,
            None,
            Ok(Some(Expiring)),
        ),
        (
            "reject late",
            Pending,
            false,
            late,
            None,
            Ok(Some(Rejecting)),
        ),
        (
            "lapsed lease",
            Pending,
            true,
            NOW_MS,
            Some(ActiveTurn {
                turn_id: "t9".into(),
                expires_at: NOW_MS,
            }),
            Ok(Some(Approving)),
        ),
        (
            "live lease",
            Pending,
            true,
            NOW_MS,
            Some(ActiveTurn {
                turn_id: "t9".into(),
                expires_at: NOW_MS + 1,
            }),
            Err(()),
        ),
    ];
    for (label, from, approve, now, active, want) in cases {
        let mut env = session_with(from);
        env.active_turn = active;
        match (claim_resolution(&env, "c1", approve, now, LEASE_MS), want) {
            (Ok(ResolutionClaim::Claimed { envelope, record }), Ok(Some(to))) => {
                assert_eq!(record.status, to, "{label}");
                assert_eq!(envelope.cursor, env.cursor + 1, "{label}: one write");
                let lease = envelope.active_turn.as_ref().expect("leased");
                assert_eq!(
                    (lease.turn_id.as_str(), lease.expires_at),
                    ("c1", now + LEASE_MS),
                    "{label}"
                );
                assert_eq!(envelope.confirmations[1], record, "{label}");
                assert_eq!(
                    envelope.confirmations[0], env.confirmations[0],
                    "{label}: others untouched"
                );
                assert!(
                    decode_session_snapshot(&envelope.to_value()).is_ok(),
                    "{label}"
                );
            }
            (Ok(ResolutionClaim::Busy), Err(())) => {}
            (got, want) => panic!("{label}: got {got:?}, want {want:?}"),
        }
    }
    for from in [Approving, Rejecting, Expiring, Approved, Rejected, Expired] {
        let env = session_with(from);
        assert_eq!(
            claim_resolution(&env, "c1", true, NOW_MS, LEASE_MS),
            Ok(ResolutionClaim::Settled {
                record: env.confirmations[1].clone()
            }),
            "{from:?} is answered as it is"
        );
    }
    assert_eq!(
        claim_resolution(&session_with(Pending), "nope", true, NOW_MS, LEASE_MS),
        Err(ConfirmError::UnknownToken("nope".into()))
    );
    // While a turn holds the session, an unknown token may be one it is about to store.
    let mut running = session_with(Pending);
    running.active_turn = Some(ActiveTurn {
        turn_id: "t9".into(),
        expires_at: NOW_MS + 1,
    });
    assert_eq!(
        claim_resolution(&running, "nope", true, NOW_MS, LEASE_MS),
        Ok(ResolutionClaim::Busy)
    );
}

#[test]
fn settling_a_turn_finishes_its_resolution_and_adds_its_proposals() {
    let env = session_with(Pending);
    let ResolutionClaim::Claimed {
        envelope: claimed, ..
    } = claim_resolution(&env, "c1", true, NOW_MS, LEASE_MS).unwrap()
    else {
        panic!("claimed")
    };
    let proposed = records_for_waiting_calls(
        &claimed,
        &[&waiting_call("k9", "transfer", json!({"amount": 9}))],
        NOW_MS,
        1_000,
    );
    let settlement = TurnSettlement {
        outcome: TurnOutcome::Completed,
        resolved: Some("c1"),
        proposed: &proposed,
    };
    let (next, refused) = settle_turn(&claimed, "c1", settlement, NOW_MS + 5).unwrap();
    assert!(refused.is_empty());
    assert_eq!(next.cursor, claimed.cursor + 1);
    assert_eq!(next.active_turn, None, "the lease is released");
    assert_eq!(
        next.terminal_turn("c1").map(|t| t.outcome),
        Some(TurnOutcome::Completed)
    );
    let statuses: Vec<(&str, ConfirmationStatus)> = next
        .confirmations
        .iter()
        .map(|c| (c.token.as_str(), c.status))
        .collect();
    assert_eq!(
        statuses,
        [
            ("c0", Pending),
            ("c1", Approved),
            ("c2", Approving),
            ("confirm-k9", Pending)
        ],
        "only the resolved record moves; c2 belongs to no turn of ours"
    );
    // A full session makes room by dropping its oldest final records; without any, it refuses.
    let mut full = new_session(&identity(), NOW_MS);
    full.active_turn = Some(ActiveTurn {
        turn_id: "t".into(),
        expires_at: NOW_MS + 1,
    });
    full.confirmations = (0..1000)
        .map(|i| record(&format!("f{i}"), if i < 2 { Expired } else { Pending }))
        .collect();
    let settlement = TurnSettlement {
        outcome: TurnOutcome::Completed,
        resolved: None,
        proposed: &proposed,
    };
    let (next, refused) = settle_turn(&full, "t", settlement, NOW_MS).unwrap();
    assert!(refused.is_empty());
    assert_eq!(next.confirmations.len(), 1000);
    assert_eq!(
        next.confirmations[0].token, "f1",
        "the oldest final record made room"
    );
    full.confirmations[0].status = Pending;
    full.confirmations[1].status = Pending;
    let (next, refused) = settle_turn(&full, "t", settlement, NOW_MS).unwrap();
    assert_eq!(refused, proposed);
    assert_eq!(next.confirmations.len(), 1000);
}

#[test]
fn an_abandoned_continuation_gives_the_decision_back_and_a_crashed_one_is_stuck_until_reconciled() {
    let env = session_with(Pending);
    let ResolutionClaim::Claimed {
        envelope: claimed, ..
    } = claim_resolution(&env, "c1", true, NOW_MS, LEASE_MS).unwrap()
    else {
        panic!("claimed")
    };
    let back = abandon_resolution(&claimed, "c1", NOW_MS).unwrap();
    assert_eq!(back.confirmations[1].status, Pending);
    assert_eq!(back.active_turn, None);
    assert!(
        back.terminal_turn("c1").is_none(),
        "the decision may be sent again"
    );
    // A crash after the claim: stuck only once its lease lapsed (c2 has no lease at all).
    let stuck_now: Vec<String> = stuck_confirmations(&claimed, NOW_MS)
        .into_iter()
        .map(|c| c.token)
        .collect();
    assert_eq!(stuck_now, ["c2"]);
    assert_eq!(
        reconcile_confirmation(&claimed, "c1", None, NOW_MS),
        Err(ConfirmError::NotStuck {
            token: "c1".into(),
            status: Approving
        })
    );
    let later = NOW_MS + LEASE_MS;
    let stuck_later: Vec<String> = stuck_confirmations(&claimed, later)
        .into_iter()
        .map(|c| c.token)
        .collect();
    assert_eq!(stuck_later, ["c1", "c2"]);
    let Ok(Reconciled::Transition { envelope, record }) =
        reconcile_confirmation(&claimed, "c1", None, later)
    else {
        panic!("reconciled")
    };
    assert_eq!(
        record.status, Approved,
        "approving finishes approved: the tool may have run"
    );
    assert_eq!(envelope.active_turn, None, "its lapsed lease is cleared");
    assert_eq!(envelope.cursor, claimed.cursor + 1);
    assert!(matches!(
        reconcile_confirmation(&envelope, "c1", None, later),
        Ok(Reconciled::Unchanged { .. })
    ));
    let Ok(Reconciled::Transition { record, envelope }) =
        reconcile_confirmation(&claimed, "c2", Some(Rejected), later)
    else {
        panic!("reconciled")
    };
    assert_eq!(record.status, Rejected);
    assert_eq!(
        envelope.active_turn, claimed.active_turn,
        "another turn's lease is not touched"
    );
    assert!(matches!(
        reconcile_confirmation(&claimed, "c2", Some(Pending), later),
        Err(ConfirmError::InvalidResolution(_))
    ));
    assert!(matches!(
        reconcile_confirmation(&claimed, "c0", None, later),
        Err(ConfirmError::NotStuck {
            status: Pending,
            ..
        })
    ));
}
