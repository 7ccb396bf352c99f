//! `decode_session_snapshot`: storage value -> `SessionEnvelope`, with the v0 -> v1 migration.
//!
//! Checks run in the order AgentsKit's decoder runs them, so that the same stored value yields the same code
//! as the reference implementation: bad JSON text, then an unsupported numeric version, then the
//! v1 schema, then the v0 schema. Unknown fields are dropped. Every failure carries a detail that
//! names the field, for logs; the codes are never put on the wire.

use crate::hash::FixedHashSet;

use serde_json::{Map, Value};

use super::envelope::*;
use crate::checks::{
    is_offset_timestamp, is_safe_id, safe_uint, utf16_len, within_bounds, BOUNDED_JSON,
};
use crate::limits;

/// Why a stored value is not a usable session envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionDecodeError {
    pub code: SessionDecodeCode,
    /// Developer-readable, names the offending field. For logs only.
    pub detail: String,
    /// The stored value was text that does not parse as JSON (a `SESSION_INVALID_SNAPSHOT`
    /// with its own reference text).
    pub not_json: bool,
}

impl SessionDecodeError {
    /// The reference decoder's literal text (AgentsKit Chat's `decodeSessionSnapshot`), which
    /// the JS export returns as `message`; it quotes nothing of the stored value.
    pub const fn reference_message(&self) -> &'static str {
        match (self.not_json, self.code) {
            (true, _) => "Session snapshot is not valid JSON.",
            (false, SessionDecodeCode::UnsupportedVersion) => {
                "Session snapshot uses an unsupported version."
            }
            (false, SessionDecodeCode::InvalidSnapshot) => "Session snapshot payload is invalid.",
        }
    }
}

/// The decoder's diagnostic codes (all `retryable: false`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionDecodeCode {
    /// `SESSION_INVALID_SNAPSHOT`
    InvalidSnapshot,
    /// `SESSION_UNSUPPORTED_VERSION`
    UnsupportedVersion,
}

impl SessionDecodeCode {
    /// The diagnostic code literal.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidSnapshot => "SESSION_INVALID_SNAPSHOT",
            Self::UnsupportedVersion => "SESSION_UNSUPPORTED_VERSION",
        }
    }
}

impl std::fmt::Display for SessionDecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.detail)
    }
}

impl std::error::Error for SessionDecodeError {}

/// Decodes what a `SessionStorage::load` returned: an envelope object, or the same as JSON text.
/// A v0 envelope comes back migrated to v1.
pub fn decode_session_snapshot(v: &Value) -> Result<SessionEnvelope, SessionDecodeError> {
    let parsed;
    let value = match v {
        Value::String(text) => {
            parsed = serde_json::from_str::<Value>(text).map_err(|e| SessionDecodeError {
                not_json: true,
                ..invalid(format!("snapshot text is not JSON ({e})"))
            })?;
            &parsed
        }
        other => other,
    };
    let Value::Object(obj) = value else {
        return Err(invalid(format!(
            "snapshot must be an object, got {}",
            kind_of(value)
        )));
    };
    let version = obj.get("version").and_then(Value::as_f64);
    if let Some(n) = version.filter(|n| *n != 0.0 && *n != 1.0) {
        return Err(SessionDecodeError {
            code: SessionDecodeCode::UnsupportedVersion,
            detail: format!("version {n} is not supported (expected 0 or 1)"),
            not_json: false,
        });
    }
    let v1 = decode_v1(obj);
    let v1_detail = match v1 {
        Ok(envelope) => return Ok(envelope),
        Err(detail) => detail,
    };
    decode_v0(obj).map_err(|v0_detail| {
        // Report the schema the value claims to follow; v1 when it claims neither.
        let detail = if version == Some(0.0) {
            v0_detail
        } else {
            v1_detail
        };
        invalid(detail)
    })
}

/// A field check's failure: the path and what is wrong.
type Check<T> = Result<T, String>;

fn decode_v1(obj: &Map<String, Value>) -> Check<SessionEnvelope> {
    match obj.get("protocol") {
        Some(Value::String(p)) if p == SESSION_PROTOCOL => {}
        _ => return Err(format!("v1: protocol must be \"{SESSION_PROTOCOL}\"")),
    }
    expect_version(obj, 1.0).map_err(|d| format!("v1: {d}"))?;
    decode_body(obj).map_err(|d| format!("v1: {d}"))
}

/// v0 is v1 without `protocol` and with `version: 0`; migrating it changes nothing else.
fn decode_v0(obj: &Map<String, Value>) -> Check<SessionEnvelope> {
    expect_version(obj, 0.0).map_err(|d| format!("v0: {d}"))?;
    decode_body(obj).map_err(|d| format!("v0: {d}"))
}

fn expect_version(obj: &Map<String, Value>, expected: f64) -> Check<()> {
    match obj.get("version") {
        Some(Value::Number(n)) if n.as_f64() == Some(expected) => Ok(()),
        Some(other) => Err(format!(
            "version must be the number {expected}, got {}",
            kind_of(other)
        )),
        None => Err("version: required".into()),
    }
}

fn decode_body(obj: &Map<String, Value>) -> Check<SessionEnvelope> {
    let definition_revision = uint(required(obj, "definitionRevision")?, "definitionRevision")?;
    if definition_revision == 0 {
        return Err("definitionRevision: must be > 0".into());
    }
    let updated_at = string(required(obj, "updatedAt")?, "updatedAt")?;
    if !is_offset_timestamp(&updated_at) {
        return Err(format!(
            "updatedAt: {updated_at:?} is not a timestamp with offset"
        ));
    }
    Ok(SessionEnvelope {
        session_id: safe_id(required(obj, "sessionId")?, "sessionId")?,
        definition_id: safe_id(required(obj, "definitionId")?, "definitionId")?,
        definition_revision,
        updated_at,
        cursor: uint(required(obj, "cursor")?, "cursor")?,
        active_turn: optional(obj, "activeTurn").map(active_turn).transpose()?,
        terminal_turns: optional(obj, "terminalTurns")
            .map(terminal_turns)
            .transpose()?
            .unwrap_or_default(),
        conversation: optional(obj, "conversation")
            .map(conversation)
            .transpose()?,
        confirmations: confirmations(required(obj, "confirmations")?)?,
        turn_journal: optional(obj, "turnJournal")
            .map(turn_journal)
            .transpose()?,
    })
}

fn turn_journal(v: &Value) -> Check<super::journal::TurnJournal> {
    let obj = object(v, "turnJournal")?;
    let messages = field(obj, "messages", "turnJournal")?;
    let bytes = serde_json::to_string(messages).map_or(usize::MAX, |t| t.len());
    if bytes > limits::TURN_JOURNAL_BYTES_MAX {
        return Err(format!(
            "turnJournal.messages: {bytes} bytes, over {}",
            limits::TURN_JOURNAL_BYTES_MAX
        ));
    }
    Ok(super::journal::TurnJournal {
        turn_id: safe_id(field(obj, "turnId", "turnJournal")?, "turnJournal.turnId")?,
        history_len: uint(
            field(obj, "historyLen", "turnJournal")?,
            "turnJournal.historyLen",
        )?,
        messages: crate::protocol::decode_messages(messages)
            .map_err(|e| format!("turnJournal.{e}"))?,
    })
}

fn active_turn(v: &Value) -> Check<ActiveTurn> {
    let obj = object(v, "activeTurn")?;
    Ok(ActiveTurn {
        turn_id: safe_id(field(obj, "turnId", "activeTurn")?, "activeTurn.turnId")?,
        expires_at: uint(
            field(obj, "expiresAt", "activeTurn")?,
            "activeTurn.expiresAt",
        )?,
    })
}

fn terminal_turns(v: &Value) -> Check<Vec<TerminalTurn>> {
    let items = array(v, "terminalTurns", limits::TERMINAL_TURNS_MAX)?;
    let turns = items
        .iter()
        .enumerate()
        .map(|(i, item)| terminal_turn(item, &format!("terminalTurns[{i}]")))
        .collect::<Check<Vec<_>>>()?;
    unique(
        turns.iter().map(|t| t.turn_id.as_str()),
        "terminalTurns",
        "turnId",
    )?;
    Ok(turns)
}

fn terminal_turn(v: &Value, path: &str) -> Check<TerminalTurn> {
    let obj = object(v, path)?;
    let outcome = match string(field(obj, "outcome", path)?, &format!("{path}.outcome"))?.as_str() {
        "completed" => TurnOutcome::Completed,
        "indeterminate" => TurnOutcome::Indeterminate,
        other => {
            return Err(format!(
                "{path}.outcome: {other:?} is not completed|indeterminate"
            ))
        }
    };
    Ok(TerminalTurn {
        turn_id: safe_id(field(obj, "turnId", path)?, &format!("{path}.turnId"))?,
        outcome,
    })
}

fn conversation(v: &Value) -> Check<Conversation> {
    let obj = object(v, "conversation")?;
    let state = state_name(field(obj, "state", "conversation")?, "conversation.state")?;
    let items = array(
        field(obj, "decisions", "conversation")?,
        "conversation.decisions",
        limits::DECISIONS_MAX,
    )?;
    let decisions = items
        .iter()
        .enumerate()
        .map(|(i, item)| decision(item, &format!("conversation.decisions[{i}]")))
        .collect::<Check<Vec<_>>>()?;
    unique(
        decisions.iter().map(|d| d.message_id.as_str()),
        "conversation.decisions",
        "messageId",
    )?;
    Ok(Conversation { state, decisions })
}

fn decision(v: &Value, path: &str) -> Check<Decision> {
    let obj = object(v, path)?;
    let at = |name: &str| format!("{path}.{name}");
    let kind = match string(field(obj, "kind", path)?, &at("kind"))?.as_str() {
        "deterministic" => DecisionKind::Deterministic,
        "repaired" => DecisionKind::Repaired,
        "fallback" => DecisionKind::Fallback,
        other => {
            return Err(format!(
                "{}: {other:?} is not deterministic|repaired|fallback",
                at("kind")
            ))
        }
    };
    Ok(Decision {
        message_id: safe_id(field(obj, "messageId", path)?, &at("messageId"))?,
        input: bounded_string(
            field(obj, "input", path)?,
            &at("input"),
            0,
            limits::DECISION_INPUT_CHARS_MAX,
        )?,
        route_id: safe_id(field(obj, "routeId", path)?, &at("routeId"))?,
        kind,
        content: bounded_string(
            field(obj, "content", path)?,
            &at("content"),
            0,
            limits::DECISION_CONTENT_CHARS_MAX,
        )?,
        from_state: state_name(field(obj, "fromState", path)?, &at("fromState"))?,
        to_state: state_name(field(obj, "toState", path)?, &at("toState"))?,
    })
}

/// A list of confirmation records as the envelope holds them (also the additive
/// `payload.confirmations` of a turn snapshot). `Err` names the offending field.
pub fn decode_confirmations(v: &Value) -> Result<Vec<Confirmation>, String> {
    confirmations(v)
}

fn confirmations(v: &Value) -> Check<Vec<Confirmation>> {
    let items = array(v, "confirmations", limits::CONFIRMATIONS_MAX)?;
    let records = items
        .iter()
        .enumerate()
        .map(|(i, item)| confirmation(item, &format!("confirmations[{i}]")))
        .collect::<Check<Vec<_>>>()?;
    unique(
        records.iter().map(|c| c.token.as_str()),
        "confirmations",
        "token",
    )?;
    unique(
        records.iter().map(|c| c.tool_call_id.as_str()),
        "confirmations",
        "toolCallId",
    )?;
    Ok(records)
}

fn confirmation(v: &Value, path: &str) -> Check<Confirmation> {
    let obj = object(v, path)?;
    let at = |name: &str| format!("{path}.{name}");
    let input_value = field(obj, "input", path)?;
    let input = object(input_value, &at("input"))?;
    if !within_bounds(input_value, &BOUNDED_JSON) {
        return Err(format!("{}: exceeds the bounded-JSON limits", at("input")));
    }
    Ok(Confirmation {
        token: safe_id(field(obj, "token", path)?, &at("token"))?,
        action: safe_id(field(obj, "action", path)?, &at("action"))?,
        input: input.clone(),
        tool_call_id: safe_id(field(obj, "toolCallId", path)?, &at("toolCallId"))?,
        expires_at: uint(field(obj, "expiresAt", path)?, &at("expiresAt"))?,
        status: confirmation_status(field(obj, "status", path)?, &at("status"))?,
    })
}

fn confirmation_status(v: &Value, path: &str) -> Check<ConfirmationStatus> {
    use ConfirmationStatus::*;
    let text = string(v, path)?;
    [
        Pending, Approving, Rejecting, Expiring, Approved, Rejected, Expired,
    ]
    .into_iter()
    .find(|s| s.as_str() == text)
    .ok_or_else(|| format!("{path}: {text:?} is not a confirmation status"))
}

// ---- Field readers. Each names the path in its error.

fn required<'a>(obj: &'a Map<String, Value>, name: &str) -> Check<&'a Value> {
    obj.get(name).ok_or_else(|| format!("{name}: required"))
}

fn field<'a>(obj: &'a Map<String, Value>, name: &str, parent: &str) -> Check<&'a Value> {
    obj.get(name)
        .ok_or_else(|| format!("{parent}.{name}: required"))
}

/// An optional field; `null` is not "absent" (the reference schema rejects it).
fn optional<'a>(obj: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    obj.get(name)
}

fn object<'a>(v: &'a Value, path: &str) -> Check<&'a Map<String, Value>> {
    v.as_object()
        .ok_or_else(|| format!("{path}: expected an object, got {}", kind_of(v)))
}

fn array<'a>(v: &'a Value, path: &str, items_max: usize) -> Check<&'a Vec<Value>> {
    let items = v
        .as_array()
        .ok_or_else(|| format!("{path}: expected an array, got {}", kind_of(v)))?;
    if items.len() > items_max {
        return Err(format!(
            "{path}: {} entries, at most {items_max} allowed",
            items.len()
        ));
    }
    Ok(items)
}

fn string(v: &Value, path: &str) -> Check<String> {
    v.as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("{path}: expected a string, got {}", kind_of(v)))
}

fn bounded_string(v: &Value, path: &str, units_min: usize, units_max: usize) -> Check<String> {
    let s = string(v, path)?;
    let units = utf16_len(&s);
    if units < units_min || units > units_max {
        return Err(format!(
            "{path}: length {units}, expected {units_min} to {units_max}"
        ));
    }
    Ok(s)
}

fn state_name(v: &Value, path: &str) -> Check<String> {
    bounded_string(v, path, 1, limits::CONVERSATION_STATE_CHARS_MAX)
}

fn safe_id(v: &Value, path: &str) -> Check<String> {
    let s = string(v, path)?;
    if !is_safe_id(&s) {
        return Err(format!("{path}: {:?} is not a SafeId", truncate(&s)));
    }
    Ok(s)
}

fn uint(v: &Value, path: &str) -> Check<u64> {
    safe_uint(v).ok_or_else(|| {
        format!(
            "{path}: expected a safe integer >= 0, got {}",
            truncate(&v.to_string())
        )
    })
}

fn unique<'a>(ids: impl Iterator<Item = &'a str>, path: &str, key: &str) -> Check<()> {
    let mut seen = FixedHashSet::default();
    for id in ids {
        if !seen.insert(id) {
            return Err(format!("{path}: duplicate {key} {id:?}"));
        }
    }
    Ok(())
}

fn invalid(detail: String) -> SessionDecodeError {
    SessionDecodeError {
        code: SessionDecodeCode::InvalidSnapshot,
        detail,
        not_json: false,
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Keeps details short when a field holds a huge value.
fn truncate(s: &str) -> String {
    match s.char_indices().nth(limits::SESSION_DETAIL_VALUE_CHARS_MAX) {
        Some((end, _)) => format!("{}…", &s[..end]),
        None => s.to_owned(),
    }
}
