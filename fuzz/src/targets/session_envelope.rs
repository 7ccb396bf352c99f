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

/// A session envelope: v1 or v0, valid unless the generator draws flaws (see `Gen::flaw`).
pub fn envelope(g: &mut Gen<'_>) -> Value {
    let v0 = g.chance(20);
    let mut fields = Vec::new();
    if !v0 || g.flaw() {
        fields.push(("protocol", Value::String("agentskit.chat.session".into())));
    }
    let version = match (g.flaw(), v0) {
        (true, _) => g.number(),
        (false, true) => Value::from(0),
        (false, false) => g.pick(&[Value::from(1), Value::from(1.0)]),
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
        let active = vec![
            ("turnId", Value::String(g.safe_id())),
            ("expiresAt", g.uint_value()),
        ];
        let active = g.object(active);
        fields.push(("activeTurn", active));
    }
    if g.chance(50) {
        // Ids unique and at most 64 of them, unless this input breaks the rules.
        let (max, pool) = if g.flaw() { (70, 40) } else { (64, usize::MAX) };
        let len = g.below(max + 1);
        let turns = (0..len).map(|i| terminal_turn(g, i, pool)).collect();
        fields.push(("terminalTurns", Value::Array(turns)));
    }
    if g.chance(30) {
        let state = g.one_of(&["start", "triage"], &[""]);
        let decisions = (0..g.below(4)).map(|i| decision(g, i)).collect();
        let conversation = vec![("state", state), ("decisions", Value::Array(decisions))];
        let conversation = g.object(conversation);
        fields.push(("conversation", conversation));
    }
    let confirmations = (0..g.below(4)).map(|i| confirmation(g, i)).collect();
    fields.push(("confirmations", Value::Array(confirmations)));
    g.object(fields)
}

/// The `i`th terminal turn; its id is drawn from `pool` ids (duplicates are refused) when the
/// pool is small, else unique.
fn terminal_turn(g: &mut Gen<'_>, i: usize, pool: usize) -> Value {
    let turn_id = if pool < usize::MAX {
        format!("t{}", g.below(pool))
    } else {
        format!("t{i}")
    };
    let fields = vec![
        ("turnId", Value::String(turn_id)),
        (
            "outcome",
            g.one_of(&["completed", "indeterminate"], &["failed"]),
        ),
    ];
    g.object(fields)
}

fn decision(g: &mut Gen<'_>, i: usize) -> Value {
    let message_id = if g.flaw() {
        "m0".to_owned()
    } else {
        format!("m{i}")
    };
    let fields = vec![
        ("messageId", Value::String(message_id)),
        ("input", Value::String(g.string())),
        ("routeId", Value::String(g.safe_id())),
        (
            "kind",
            g.one_of(&["deterministic", "repaired", "fallback"], &["guess"]),
        ),
        ("content", Value::String(g.string())),
        ("fromState", g.one_of(&["start", "triage"], &[""])),
        ("toState", g.one_of(&["start", "triage"], &[""])),
    ];
    g.object(fields)
}

fn confirmation(g: &mut Gen<'_>, i: usize) -> Value {
    let status = g.one_of(
        &[
            "pending",
            "approving",
            "rejecting",
            "expiring",
            "approved",
            "rejected",
            "expired",
        ],
        &["open"],
    );
    let input = Value::Object([("value".to_owned(), g.any_value(3))].into_iter().collect());
    let input = g.perturb(input);
    // Tokens and tool call ids unique, unless this input breaks the rules.
    let n = if g.flaw() { 0 } else { i };
    let fields = vec![
        ("token", Value::String(format!("confirm-{n}"))),
        ("action", Value::String(g.safe_id())),
        ("input", input),
        ("toolCallId", Value::String(format!("call-{n}"))),
        ("expiresAt", g.uint_value()),
        ("status", status),
    ];
    g.object(fields)
}
