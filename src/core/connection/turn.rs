//! The events a connection posts to the chat endpoint: `client.turn.submit` for `send()` and
//! `client.turn.stop` for `stopTurn()`. Ids and time come from the caller; the bodies are
//! checked by the same decoder the chat endpoint runs, so a body built here is one it accepts.

use serde_json::{json, Value};

use super::failure::ConnectionFailure;
use crate::checks::format_iso_millis_at;
use crate::protocol::diagnostic::decode_diagnostic_at;
use crate::protocol::submit::read_submit_message;
use crate::protocol::request::STOP_EVENT;
use crate::protocol::TurnDiagnostic;
use crate::protocol::{decode_client_request, EventKind, TURN_PROTOCOL, TURN_PROTOCOL_VERSION};

/// The envelope fields of one posted event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostIds<'a> {
    pub event_id: &'a str,
    pub session_id: &'a str,
    pub turn_id: &'a str,
    pub now_ms: u64,
}

/// Why a body could not be built (said to the caller as a thrown `Error`).
pub(crate) const NO_INPUT: &str =
    "send() takes a non-blank string, or messages whose last user message has text";
pub(crate) const BAD_IDS: &str = "the session id, turn id and event id must be SafeIds";

/// What `send(messages)` submits: `input`, the text, and the user's whole message when there is
/// one (posted as `payload.message`, `crate::protocol::submit`).
#[derive(Clone, Debug, PartialEq)]
pub struct SendInput {
    pub input: String,
    pub message: Option<Value>,
}

/// A string is the input as it is. In a list of messages (AI SDK or TanStack UI messages with
/// text `parts`, `{ role, content }` messages, AgentsKit's), the last user message is the one
/// sent: its text the input, the message itself posted whole, checked by the endpoint's own
/// reader so a body built here is one the endpoint accepts. Blank text is refused (the endpoint
/// would answer 400).
pub fn send_input_of(messages: &Value) -> Result<SendInput, String> {
    let (text, message) = match messages {
        Value::String(text) => (Some(text.clone()), None),
        Value::Array(list) => {
            let last = list
                .iter()
                .rev()
                .find(|m| m.get("role").and_then(Value::as_str) == Some("user"));
            (last.map(message_text), last.cloned())
        }
        _ => (None, None),
    };
    let input = text
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| NO_INPUT.to_owned())?;
    if let Some(message) = &message {
        read_submit_message(message).map_err(|e| e.message())?;
    }
    Ok(SendInput { input, message })
}

fn message_text(message: &Value) -> String {
    if let Some(content) = message.get("content").and_then(Value::as_str) {
        return content.to_owned();
    }
    let parts = message.get("parts").or_else(|| message.get("content"));
    parts
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|p| {
            p.get("content")
                .or_else(|| p.get("text"))
                .and_then(Value::as_str)
        })
        .collect()
}

/// The `client.turn.submit` body for `send`.
pub fn submit_body(ids: &PostIds<'_>, send: &SendInput) -> Result<String, &'static str> {
    let mut payload = json!({ "input": send.input });
    if let Some(message) = &send.message {
        payload["message"] = message.clone();
    }
    body(ids, EventKind::Submit.as_str(), payload)
}

/// The `client.turn.stop` body for the turn `ids.turn_id`.
pub fn stop_body(ids: &PostIds<'_>) -> Result<String, &'static str> {
    body(ids, STOP_EVENT, json!({}))
}

fn body(ids: &PostIds<'_>, event: &str, payload: Value) -> Result<String, &'static str> {
    let value = json!({
        "protocol": TURN_PROTOCOL,
        "version": TURN_PROTOCOL_VERSION,
        "eventId": ids.event_id,
        "sessionId": ids.session_id,
        "turnId": ids.turn_id,
        "sequence": 0,
        "emittedAt": format_iso_millis_at(ids.now_ms),
        "event": event,
        "payload": payload,
    });
    decode_client_request(&value).ok_or(BAD_IDS)?;
    Ok(value.to_string())
}

/// What a refused post (`status` not 2xx) says to the caller: the endpoint's own versioned
/// diagnostic when its body is `{"error": <diagnostic>}` (turnkeep's chat endpoint, and the
/// demo's auth), else `CHAT_POST_FAILED` with the status. Nothing else of the body is kept.
pub fn post_failure(status: u16, body: &str) -> (TurnDiagnostic, u16) {
    let own = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("error").cloned())
        .and_then(|e| decode_diagnostic_at(&e, "error").ok());
    let diagnostic = own.unwrap_or_else(|| ConnectionFailure::PostFailed { status }.diagnostic());
    (diagnostic, status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::RequestKind;

    const IDS: PostIds<'static> = PostIds {
        event_id: "evt-1",
        session_id: "s1",
        turn_id: "turn-1",
        now_ms: 1_783_738_800_000,
    };

    #[test]
    fn the_input_is_the_last_user_messages_text_and_the_message_goes_whole() {
        // (input, the index of the message posted whole) or the start of the error.
        let check = |messages: Value, expected: Result<(&str, Option<usize>), &str>| {
            let got = send_input_of(&messages);
            match expected {
                Ok((input, whole)) => {
                    let message = whole.map(|i| messages[i].clone());
                    let want = SendInput {
                        input: input.to_owned(),
                        message,
                    };
                    assert_eq!(got, Ok(want), "{messages}");
                }
                Err(start) => {
                    let error = got.expect_err(&messages.to_string());
                    assert!(error.starts_with(start), "{messages}: {error}");
                }
            }
        };
        check(json!("hello"), Ok(("hello", None)));
        check(json!("   "), Err(NO_INPUT));
        check(json!(7), Err(NO_INPUT));
        let picture = json!({ "type": "image", "source": { "type": "url", "value": "https://x/p.png" } });
        check(
            json!([
                { "id": "u1", "role": "user", "parts": [{ "type": "text", "content": "first" }] },
                { "id": "a1", "role": "assistant", "parts": [{ "type": "text", "content": "answer" }] },
                { "id": "u2", "role": "user", "metadata": { "k": 1 }, "parts": [{ "type": "text", "content": "new " }, picture, { "type": "text", "text": "question" }] },
            ]),
            Ok(("new question", Some(2))),
        );
        check(
            json!([{ "role": "user", "content": "plain" }, { "role": "assistant", "content": "x" }]),
            Ok(("plain", Some(0))),
        );
        check(
            json!([{ "role": "user", "content": [{ "type": "text", "content": "model form" }] }]),
            Ok(("model form", Some(0))),
        );
        check(
            json!([{ "role": "user", "parts": [{ "type": "text", "text": "hi" }, { "type": "image" }] }]),
            Err("payload.message.parts[1]"),
        );
        check(
            json!([{ "role": "assistant", "content": "only" }]),
            Err(NO_INPUT),
        );
        check(json!([]), Err(NO_INPUT));
    }

    #[test]
    fn a_refused_post_keeps_only_a_versioned_diagnostic() {
        let busy = r#"{"error":{"version":1,"code":"SESSION_BUSY","message":"The session is busy.","retryable":true,"extra":"x"}}"#;
        let (d, status) = post_failure(409, busy);
        assert_eq!(
            (d.code.as_str(), d.retryable, status),
            (crate::diagnostics::chat::SESSION_BUSY.code, true, 409)
        );
        for body in [
            "",
            "<html>stack trace</html>",
            r#"{"error":"boom"}"#,
            r#"{"error":{"code":"lower"}}"#,
        ] {
            let (d, status) = post_failure(502, body);
            assert_eq!(
                (d.code.as_str(), d.retryable, status),
                ("CHAT_POST_FAILED", true, 502),
                "{body}"
            );
        }
    }

    #[test]
    fn bodies_are_what_the_chat_endpoint_accepts() {
        let text = send_input_of(&json!("hi")).unwrap();
        let submit: Value = serde_json::from_str(&submit_body(&IDS, &text).unwrap()).unwrap();
        let request = decode_client_request(&submit).unwrap();
        assert_eq!(
            request.kind,
            RequestKind::Submit {
                input: "hi".into(),
                message: Default::default()
            }
        );
        let whole = json!([{ "id": "m1", "role": "user", "content": "hi", "metadata": { "k": 1 } }]);
        let whole = send_input_of(&whole).unwrap();
        let submit: Value = serde_json::from_str(&submit_body(&IDS, &whole).unwrap()).unwrap();
        let RequestKind::Submit { message, .. } = decode_client_request(&submit).unwrap().kind else {
            panic!("not a submit");
        };
        assert_eq!(
            (message.id.as_deref(), message.metadata),
            (Some("m1"), json!({ "k": 1 }).as_object().cloned())
        );
        assert_eq!(request.envelope.turn_id, "turn-1");
        assert_eq!(request.envelope.emitted_at, "2026-07-11T03:00:00.000Z");
        let stop: Value = serde_json::from_str(&stop_body(&IDS).unwrap()).unwrap();
        assert_eq!(
            decode_client_request(&stop).unwrap().kind,
            RequestKind::Stop
        );
        let bad = PostIds {
            session_id: "not safe",
            ..IDS
        };
        assert_eq!(submit_body(&bad, &text), Err(BAD_IDS));
        assert_eq!(stop_body(&PostIds { turn_id: "", ..IDS }), Err(BAD_IDS));
    }
}
