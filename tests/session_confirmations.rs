//! Confirmation records (wire facts §6): two-step transitions, idempotent replays, typed errors.

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
