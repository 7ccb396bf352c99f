//! The optional Ask session record: canonical history stored by the host under a trusted
//! `(siteId, subjectId, sessionId)` key and written by compare-and-set on its `revision`.
//!
//! A resumed session trusts only its stored history; of the submitted messages only the latest
//! user question is appended (so a client cannot rewrite what was said).

use serde_json::{json, Value};

use super::fields::strict;
use super::request::{decode_messages, messages_value, AskMessage, AskRole};
use crate::checks::safe_uint;
use crate::limits::ASK_MESSAGES_MAX;
use crate::protocol::field::{FieldError, MUST_BE_SAFE_UINT};

/// `{ revision, messages }` (strict).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRecord {
    pub revision: u64,
    pub messages: Vec<AskMessage>,
}

impl SessionRecord {
    pub fn to_value(&self) -> Value {
        json!({ "revision": self.revision, "messages": messages_value(&self.messages) })
    }
}

pub fn decode_record(v: &Value) -> Result<SessionRecord, FieldError> {
    let o = strict(v, "", &["revision", "messages"])?;
    let revision = o.required("revision", MUST_BE_SAFE_UINT, safe_uint)?;
    let messages = decode_messages(o.get("messages").unwrap_or(&Value::Null), "messages", 0)?;
    Ok(SessionRecord { revision, messages })
}

/// The conversation a turn runs on: the submitted messages for a new session, else the stored
/// history plus the latest submitted question (unless it is already the stored last message).
pub fn conversation(stored: Option<&SessionRecord>, submitted: &[AskMessage]) -> Vec<AskMessage> {
    let Some(stored) = stored else {
        return submitted.to_vec();
    };
    let Some(question) = submitted.iter().rev().find(|m| m.role == AskRole::User) else {
        return stored.messages.clone();
    };
    if stored.messages.last() == Some(question) {
        return stored.messages.clone();
    }
    let mut messages = stored.messages.clone();
    messages.push(question.clone());
    keep_last(messages)
}

/// The record to save after an answer, and the revision the save expects to replace (0 for a
/// session never saved).
pub fn next_record(
    stored: Option<&SessionRecord>,
    conversation: &[AskMessage],
    answer: &str,
) -> (SessionRecord, u64) {
    let expected = stored.map_or(0, |r| r.revision);
    let mut messages = conversation.to_vec();
    messages.push(AskMessage {
        role: AskRole::Assistant,
        content: answer.to_owned(),
    });
    let record = SessionRecord {
        revision: expected.saturating_add(1),
        messages: keep_last(messages),
    };
    (record, expected)
}

fn keep_last(mut messages: Vec<AskMessage>) -> Vec<AskMessage> {
    let excess = messages.len().saturating_sub(ASK_MESSAGES_MAX);
    messages.drain(..excess);
    messages
}
