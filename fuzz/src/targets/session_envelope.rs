//! The session envelope decoder (`core::session`): whatever a storage adapter loads.
//!
//! Properties, for any stored value (an object, or the same as JSON text):
//! - decoding never panics, and the object and its JSON text decode the same way;
//! - a decoded envelope (v1, or v0 migrated) re-encodes to text and to a value that both decode
//!   to an equal envelope, and re-encoding that is byte-identical;
//! - the lease transitions applied to a decoded envelope produce envelopes that still decode
//!   (they keep every wire limit), and a released turn is then refused as a replay.

use serde_json::Value;
use turnkeep::core::session::{
    abandon_turn, advance_cursor, claim_turn, decode_session_snapshot, release_turn, ClaimDecision,
    SessionEnvelope, TurnOutcome,
};

use super::gen::{input, Gen, Input};

pub fn run(data: &[u8]) {
    match input(data) {
        Input::Raw(bytes) => {
            let text = String::from_utf8_lossy(bytes).into_owned();
            if let Ok(env) = decode_session_snapshot(&Value::String(text)) {
                check_envelope(&env, None);
            }
        }
        Input::Structured(mut g) => {
            let value = envelope(&mut g);
            check(&value, &mut g);
        }
    }
}

fn check(value: &Value, g: &mut Gen<'_>) {
    let decoded = decode_session_snapshot(value);
    let from_text = decode_session_snapshot(&Value::String(value.to_string()));
    assert_eq!(from_text, decoded, "value and JSON text decode differently");
    if let Ok(env) = decoded {
        check_envelope(&env, Some(g));
    }
}

fn check_envelope(env: &SessionEnvelope, g: Option<&mut Gen<'_>>) {
    let text = env.to_json_string();
    let again = decode_session_snapshot(&Value::String(text.clone())).expect("re-decode text");
    assert_eq!(&again, env, "decode(encode(envelope)) == envelope");
    assert_eq!(again.to_json_string(), text, "the encoding is canonical");
    let from_value = decode_session_snapshot(&env.to_value()).expect("re-decode value");
    assert_eq!(&from_value, env);
    if let Some(g) = g {
        lease_steps(env, g);
    }
}

/// Claim, advance, release (or abandon) a turn on the decoded envelope; every result must stay
/// decodable, and a released turn id must come back as a replay.
fn lease_steps(env: &SessionEnvelope, g: &mut Gen<'_>) {
    let turn_id = g.safe_id();
    let now_ms = g.u64_any();
    let lease_ms = g.u64_any();
    let Ok(ClaimDecision::Claimed(claimed)) = claim_turn(env, &turn_id, now_ms, lease_ms) else {
        return;
    };
    assert_decodes(&claimed);
    assert_eq!(claimed.cursor, env.cursor + 1);
    let later = now_ms.saturating_add(g.u64_in(0, 100_000));
    let Ok(advanced) = advance_cursor(&claimed, later) else {
        return;
    };
    assert_decodes(&advanced);
    if g.chance(20) {
        if let Ok(abandoned) = abandon_turn(&advanced, &turn_id, later) {
            assert_decodes(&abandoned);
            assert_eq!(abandoned.active_turn, None);
        }
        return;
    }
    let outcome = g.pick(&[TurnOutcome::Completed, TurnOutcome::Indeterminate]);
    let Ok(released) = release_turn(&advanced, &turn_id, outcome, later) else {
        return;
    };
    assert_decodes(&released);
    assert_eq!(released.active_turn, None);
    assert_eq!(
        released.terminal_turns.last().map(|t| t.turn_id.as_str()),
        Some(turn_id.as_str())
    );
    assert_eq!(
        claim_turn(&released, &turn_id, later, lease_ms),
        Ok(ClaimDecision::Replayed { outcome }),
        "a released turn is a replay"
    );
}

fn assert_decodes(env: &SessionEnvelope) {
    assert_eq!(
        decode_session_snapshot(&env.to_value()).as_ref(),
        Ok(env),
        "transition output decodes"
    );
}

/// A session envelope, mostly well-formed: v1, v0, or another version.
fn envelope(g: &mut Gen<'_>) -> Value {
    let v0 = g.chance(20);
    let mut fields = Vec::new();
    if !v0 || g.chance(10) {
        fields.push(("protocol", Value::String("agentskit.chat.session".into())));
    }
    let version = match g.below(12) {
        0 => g.number(),
        1 => Value::from(1.0),
        _ if v0 => Value::from(0),
        _ => Value::from(1),
    };
    fields.extend([
        ("version", version),
        ("sessionId", Value::String(g.safe_id())),
        ("definitionId", Value::String(g.safe_id())),
        ("definitionRevision", g.uint_value()),
        ("updatedAt", Value::String(g.timestamp())),
        ("cursor", g.uint_value()),
    ]);
    if g.chance(40) {
        let active = {
            let fields = vec![
                ("turnId", Value::String(g.safe_id())),
                ("expiresAt", g.uint_value()),
            ];
            g.object(fields)
        };
        fields.push(("activeTurn", active));
    }
    if g.chance(50) {
        let max = if g.chance(10) { 70 } else { 4 };
        fields.push(("terminalTurns", g.list(max, terminal_turn)));
    }
    if g.chance(30) {
        let conversation = {
            let fields = vec![
                (
                    "state",
                    Value::String(g.pick(&["start", "", "triage"]).to_owned()),
                ),
                ("decisions", g.list(3, decision)),
            ];
            g.object(fields)
        };
        fields.push(("conversation", conversation));
    }
    fields.push(("confirmations", g.list(3, confirmation)));
    g.object(fields)
}

fn terminal_turn(g: &mut Gen<'_>) -> Value {
    // A small id pool makes duplicate turn ids (refused) likely enough to be exercised.
    let turn_id = if g.chance(80) {
        format!("t{}", g.below(40))
    } else {
        g.safe_id()
    };
    let outcome = g.pick(&["completed", "indeterminate", "failed"]);
    {
        let fields = vec![
            ("turnId", Value::String(turn_id)),
            ("outcome", Value::String(outcome.to_owned())),
        ];
        g.object(fields)
    }
}

fn decision(g: &mut Gen<'_>) -> Value {
    let kind = g.pick(&["deterministic", "repaired", "fallback", "guess"]);
    {
        let fields = vec![
            ("messageId", Value::String(g.safe_id())),
            ("input", Value::String(g.string())),
            ("routeId", Value::String(g.safe_id())),
            ("kind", Value::String(kind.to_owned())),
            ("content", Value::String(g.string())),
            (
                "fromState",
                Value::String(g.pick(&["start", "triage", ""]).to_owned()),
            ),
            (
                "toState",
                Value::String(g.pick(&["start", "triage", ""]).to_owned()),
            ),
        ];
        g.object(fields)
    }
}

fn confirmation(g: &mut Gen<'_>) -> Value {
    let status = g.pick(&[
        "pending",
        "approving",
        "rejecting",
        "expiring",
        "approved",
        "rejected",
        "expired",
        "open",
    ]);
    let input = if g.chance(80) {
        let v = g.any_value(3);
        match v {
            Value::Object(_) => v,
            other => serde_json::json!({ "value": other }),
        }
    } else {
        g.any_value(2)
    };
    {
        let fields = vec![
            ("token", Value::String(format!("confirm-{}", g.below(8)))),
            ("action", Value::String(g.safe_id())),
            ("input", input),
            ("toolCallId", Value::String(format!("call-{}", g.below(8)))),
            ("expiresAt", g.uint_value()),
            ("status", Value::String(status.to_owned())),
        ];
        g.object(fields)
    }
}
