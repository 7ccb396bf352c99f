//! What a client may post to the chat endpoint: a turn submission (AgentsKit v1), and turnkeep's
//! additive v1 events (README.md, "Durable chat: the session log" and "Tool confirmations"):
//! - `client.turn.stop`: stop the running turn `turnId` of `sessionId` (any authenticated client
//!   of the session may send it; payload `{}`).
//! - `client.confirmation.resolve`: approve or reject a pending tool confirmation, payload
//!   `{ token, decision: 'approve' | 'reject', reason? }`.
//!
//! - on `client.turn.submit`, `payload.message`: the user's whole message (`super::submit`).
//!
//! `decodeTurnEvent` (the AgentsKit-compatible decoder) knows neither: to it they are unknown
//! events, as v1 says unknown events are inert. Only the chat endpoint reads them, here.

use serde_json::Value;

use super::decode::{decode_envelope, decode_turn_event};
use super::event::{Envelope, EventBody};
use super::field::{FieldError, Obj};
use super::submit::{read_submit_message, SubmitMessage};
use crate::limits::CONFIRMATION_REASON_CHARS_MAX;
use crate::session::Confirmation;

pub(crate) const STOP_EVENT: &str = "client.turn.stop";
pub(crate) const RESOLVE_EVENT: &str = "client.confirmation.resolve";

/// A decoded request to the chat endpoint.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientRequest {
    pub envelope: Envelope,
    pub kind: RequestKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum RequestKind {
    Submit {
        input: String,
        /// The user's whole message (`payload.message`, turnkeep's additive field): what the
        /// stored message keeps beyond `input`. Default when the body has none.
        message: SubmitMessage,
    },
    Stop,
    Resolve {
        token: String,
        approve: bool,
        reason: Option<String>,
    },
}

const DECISION_RULE: &str = "must be approve or reject";
const REASON_RULE: &str = "must be a string of at most 1024 characters";

/// Decodes a request body; `None` when it is not one of the three (the handler answers 400).
pub fn decode_client_request(v: &Value) -> Option<ClientRequest> {
    match v.get("event").and_then(Value::as_str) {
        Some(STOP_EVENT) => decode_additive(v, |_| Ok(RequestKind::Stop)).ok(),
        Some(RESOLVE_EVENT) => decode_additive(v, decode_resolve).ok(),
        _ => {
            let event = decode_turn_event(v).ok()?;
            let EventBody::Submit { input } = event.body else {
                return None;
            };
            // AgentsKit's decoder drops the field; ours reads it (a broken one is a 400 as any
            // broken event is).
            let message = match v.pointer("/payload/message") {
                None => SubmitMessage::default(),
                Some(message) => read_submit_message(message).ok()?,
            };
            Some(ClientRequest {
                envelope: event.envelope,
                kind: RequestKind::Submit { input, message },
            })
        }
    }
}

fn decode_additive(
    v: &Value,
    payload: impl FnOnce(&Obj<'_>) -> Result<RequestKind, FieldError>,
) -> Result<ClientRequest, FieldError> {
    let o = Obj::new(v, "")?;
    let envelope = decode_envelope(&o)?;
    let body = o.required("payload", super::field::MUST_BE_OBJECT, |v| {
        v.is_object().then_some(v)
    })?;
    let kind = payload(&Obj::new(body, "payload")?)?;
    Ok(ClientRequest { envelope, kind })
}

fn decode_resolve(o: &Obj<'_>) -> Result<RequestKind, FieldError> {
    let token = o.safe_id("token")?;
    let approve = o.required("decision", DECISION_RULE, |v| match v.as_str() {
        Some("approve") => Some(true),
        Some("reject") => Some(false),
        _ => None,
    })?;
    let reason = o.optional("reason", REASON_RULE, |v| {
        v.as_str()
            .filter(|s| s.chars().count() <= CONFIRMATION_REASON_CHARS_MAX)
            .map(str::to_owned)
    })?;
    Ok(RequestKind::Resolve {
        token,
        approve,
        reason,
    })
}

/// The JSON answer to a `client.confirmation.resolve` that runs nothing (the record was not
/// pending: another request claimed it, or it is final): `{"confirmation": {"version": 1,
/// ...record}}` with status 200 for a final record and 202 for one still being processed (the
/// request that claimed it has not finished; the session log and the next snapshot will say).
pub fn resolve_answer(record: &Confirmation) -> (u16, String) {
    #[derive(serde::Serialize)]
    struct Answer<'a> {
        confirmation: Versioned<'a>,
    }
    #[derive(serde::Serialize)]
    struct Versioned<'a> {
        version: u32,
        #[serde(flatten)]
        record: &'a Confirmation,
    }
    let status = if record.status.is_final() { 200 } else { 202 };
    let body = super::encode::to_json(&Answer {
        confirmation: Versioned { version: 1, record },
    });
    (status, body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(name: &str, payload: Value) -> Value {
        json!({
            "protocol": "agentskit.chat.turn", "version": 1, "eventId": "e1", "sessionId": "s1",
            "turnId": "t1", "sequence": 0, "emittedAt": "2026-07-11T03:00:00.000Z",
            "event": name, "payload": payload,
        })
    }

    #[test]
    fn each_request_kind_decodes_and_bad_ones_do_not() {
        let check = |v: Value, expected: Option<RequestKind>| {
            assert_eq!(decode_client_request(&v).map(|r| r.kind), expected, "{v}");
        };
        let submit = |input: &str, message: SubmitMessage| RequestKind::Submit {
            input: input.into(),
            message,
        };
        check(
            event("client.turn.submit", json!({"input": "hi"})),
            Some(submit("hi", SubmitMessage::default())),
        );
        check(
            event(
                "client.turn.submit",
                json!({"input": "hi", "message": {"id": "m1", "metadata": {"k": 1}}}),
            ),
            Some(submit(
                "hi",
                SubmitMessage {
                    id: Some("m1".into()),
                    files: vec![],
                    metadata: json!({"k": 1}).as_object().cloned(),
                },
            )),
        );
        check(
            event("client.turn.submit", json!({"input": "hi", "message": {"role": "tool"}})),
            None,
        );
        check(event(STOP_EVENT, json!({})), Some(RequestKind::Stop));
        check(event(STOP_EVENT, json!(null)), None);
        check(
            event(
                RESOLVE_EVENT,
                json!({"token": "confirm-1", "decision": "reject", "reason": "no"}),
            ),
            Some(RequestKind::Resolve {
                token: "confirm-1".into(),
                approve: false,
                reason: Some("no".into()),
            }),
        );
        check(
            event(
                RESOLVE_EVENT,
                json!({"token": "confirm-1", "decision": "maybe"}),
            ),
            None,
        );
        check(
            event(
                RESOLVE_EVENT,
                json!({"token": "not safe!", "decision": "approve"}),
            ),
            None,
        );
        check(
            event(
                "server.turn.diagnostic",
                json!({"version": 1, "code": "X", "message": "m", "retryable": true}),
            ),
            None,
        );
        check(
            event(
                RESOLVE_EVENT,
                json!({"token": "confirm-1", "decision": "approve", "reason": "x".repeat(1025)}),
            ),
            None,
        );
        let mut no_session = event(STOP_EVENT, json!({}));
        no_session.as_object_mut().unwrap().remove("sessionId");
        check(no_session, None);
    }
}

#[cfg(test)]
mod answer_tests {
    use super::*;
    use crate::session::ConfirmationStatus;
    use serde_json::{json, Map};

    #[test]
    fn the_answer_is_the_versioned_record_202_while_processing() {
        let mut record = Confirmation {
            token: "confirm-c1".into(),
            action: "transfer".into(),
            input: Map::from_iter([("amount".to_string(), json!(5))]),
            tool_call_id: "c1".into(),
            expires_at: 10,
            status: ConfirmationStatus::Approved,
        };
        let (status, body) = resolve_answer(&record);
        assert_eq!(status, 200);
        assert_eq!(
            body,
            r#"{"confirmation":{"version":1,"token":"confirm-c1","action":"transfer","input":{"amount":5},"toolCallId":"c1","expiresAt":10,"status":"approved"}}"#
        );
        record.status = ConfirmationStatus::Approving;
        assert_eq!(resolve_answer(&record).0, 202);
    }
}
