//! The client's request, AgentsKit's additive `agentskit.chat.ask` v1 (strict: a `siteId`,
//! `corpus` or any other unknown field is rejected, so a body can never carry authority).

use serde_json::{json, Value};

use super::fields::{array_of, one_of, strict};
use super::text::js_trim;
use crate::checks::utf16_len;
use crate::limits::{
    ASK_DETERMINISTIC_CANDIDATES_MAX, ASK_DETERMINISTIC_MESSAGE_UNITS_MAX,
    ASK_DETERMINISTIC_QUERY_UNITS_MAX, ASK_MESSAGES_MAX, ASK_MESSAGE_UNITS_MAX,
};
use crate::protocol::field::{as_safe_id, FieldError, Obj, MUST_BE_SAFE_ID};

pub(crate) const ASK_PROTOCOL: &str = "agentskit.chat.ask";
pub(crate) const ANSWER_PROTOCOL: &str = "agentskit.chat.answer";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AskRole {
    User,
    Assistant,
}

impl AskRole {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
        }
    }
}

/// `{ role: 'user' | 'assistant', content }` (content at most 16384 UTF-16 units).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AskMessage {
    pub role: AskRole,
    pub content: String,
}

/// A decoded request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AskRequest {
    pub session_id: Option<String>,
    /// 1 to 64 messages.
    pub messages: Vec<AskMessage>,
    /// A deterministic-plane escalation came along (only measured, never trusted).
    pub deterministic: bool,
}

/// Decodes the request body.
pub fn decode_request(v: &Value) -> Result<AskRequest, FieldError> {
    let o = strict(
        v,
        "",
        &[
            "protocol",
            "version",
            "sessionId",
            "messages",
            "deterministic",
        ],
    )?;
    o.optional("protocol", "must be \"agentskit.chat.ask\"", |v| {
        (v.as_str() == Some(ASK_PROTOCOL)).then_some(())
    })?;
    o.optional("version", "must be the number 1", |v| {
        v.as_f64().filter(|n| *n == 1.0)
    })?;
    let session_id = o.optional("sessionId", MUST_BE_SAFE_ID, as_safe_id)?;
    let messages = decode_messages(o.get("messages").unwrap_or(&Value::Null), "messages", 1)?;
    let deterministic = match o.get("deterministic") {
        None => false,
        Some(v) => {
            check_escalation(v)?;
            true
        }
    };
    Ok(AskRequest {
        session_id,
        messages,
        deterministic,
    })
}

/// An array of `min..=64` strict messages (a stored record allows none).
pub fn decode_messages(v: &Value, path: &str, min: usize) -> Result<Vec<AskMessage>, FieldError> {
    const RULE: &str = "must be an array of at most 64 messages";
    let messages = array_of(v, path, ASK_MESSAGES_MAX, RULE, decode_message)?;
    if messages.len() < min {
        return Err(FieldError::new(path, "must hold at least one message"));
    }
    Ok(messages)
}

fn decode_message(v: &Value, path: &str) -> Result<AskMessage, FieldError> {
    let o = strict(v, path, &["role", "content"])?;
    let role = o.required("role", "must be \"user\" or \"assistant\"", |v| {
        one_of(v, &["user", "assistant"])
    })?;
    let content = o.required(
        "content",
        "must be a string of at most 16384 UTF-16 units",
        |v| {
            v.as_str()
                .filter(|s| utf16_len(s) <= ASK_MESSAGE_UNITS_MAX)
                .map(str::to_owned)
        },
    )?;
    let role = if role == "user" {
        AskRole::User
    } else {
        AskRole::Assistant
    };
    Ok(AskMessage { role, content })
}

/// `[{ role, content }, ...]` as host callbacks see them.
pub fn messages_value(messages: &[AskMessage]) -> Value {
    Value::Array(
        messages
            .iter()
            .map(|m| json!({ "role": m.role.as_str(), "content": m.content }))
            .collect(),
    )
}

/// The deterministic plane's low-confidence escalation (`agentskit.chat.answer` v1 with
/// `outcome: 'escalation'`). Unknown keys are ignored, as the answer schema strips them.
///
/// Not checked: that `normalizedQuery` equals the NFKC normalization of `query` (that needs
/// Unicode normalization tables this build does not carry). The field is only measured, never
/// trusted, so accepting it is safe.
fn check_escalation(v: &Value) -> Result<(), FieldError> {
    let o = Obj::new(v, "deterministic")?;
    o.required("protocol", "must be \"agentskit.chat.answer\"", |v| {
        (v.as_str() == Some(ANSWER_PROTOCOL)).then_some(())
    })?;
    o.required("version", "must be the number 1", |v| {
        v.as_f64().filter(|n| *n == 1.0)
    })?;
    o.required("outcome", "must be \"escalation\"", |v| {
        (v.as_str() == Some("escalation")).then_some(())
    })?;
    for key in ["query", "normalizedQuery"] {
        o.required(key, "must be a string of at most 512 UTF-16 units", |v| {
            v.as_str()
                .filter(|s| utf16_len(s) <= ASK_DETERMINISTIC_QUERY_UNITS_MAX)
        })?;
    }
    o.required(
        "message",
        "must be a string of 1 to 4096 UTF-16 units",
        |v| {
            v.as_str()
                .filter(|s| (1..=ASK_DETERMINISTIC_MESSAGE_UNITS_MAX).contains(&utf16_len(s)))
        },
    )?;
    let reason = o.required("reason", "must be miss, stale, corrupt or offline", |v| {
        one_of(v, &["miss", "stale", "corrupt", "offline"])
    })?;
    if let Some(ids) = o.get("candidateEntryIds") {
        array_of(
            ids,
            "deterministic.candidateEntryIds",
            ASK_DETERMINISTIC_CANDIDATES_MAX,
            "must be an array of at most 8 SafeIds",
            |v, p| as_safe_id(v).ok_or_else(|| FieldError::new(p, MUST_BE_SAFE_ID)),
        )?;
    }
    let confidence = Obj::new(
        o.get("confidence").unwrap_or(&Value::Null),
        "deterministic.confidence",
    )?;
    confidence.required("level", "must be \"low\" for an escalation", |v| {
        (v.as_str() == Some("low")).then_some(())
    })?;
    confidence.required("basis", "must equal the escalation's reason", |v| {
        (v.as_str() == Some(reason)).then_some(())
    })?;
    Ok(())
}

/// The latest user question of `messages`, trimmed; `None` when there is none or it is blank.
pub fn latest_question(messages: &[AskMessage]) -> Option<String> {
    let question = messages.iter().rev().find(|m| m.role == AskRole::User)?;
    let trimmed = js_trim(&question.content);
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}
