//! Encoding turn events as compact JSON in schema key order, and NDJSON framing.

use serde::Serialize;

use super::diagnostic::TurnDiagnostic;
use super::event::{EventBody, SnapshotPayload, TurnEvent, TURN_PROTOCOL, TURN_PROTOCOL_VERSION};

/// Compact JSON, keys in order: protocol, version, eventId, sessionId, turnId, sequence,
/// emittedAt, event, payload.
pub fn encode_turn_event(event: &TurnEvent) -> String {
    to_json(&Wire::of(event))
}

/// One NDJSON line: the encoded event followed by `\n` (every line ends with one, the last too).
pub fn encode_turn_event_line(event: &TurnEvent) -> String {
    let mut line = encode_turn_event(event);
    line.push('\n');
    line
}

/// Compact JSON of a value whose serialization cannot fail.
pub(crate) fn to_json<T: Serialize + ?Sized>(value: &T) -> String {
    // Infallible for this module's types: every map key is a string, numbers are integers or
    // already-valid JSON numbers, and no Serialize impl here returns an error.
    serde_json::to_string(value).expect("protocol serialization is infallible")
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Wire<'a> {
    protocol: &'static str,
    version: u32,
    event_id: &'a str,
    session_id: &'a str,
    turn_id: &'a str,
    sequence: u64,
    emitted_at: &'a str,
    event: &'static str,
    payload: Payload<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Payload<'a> {
    Submit { input: &'a str },
    Snapshot(&'a SnapshotPayload),
    Diagnostic(&'a TurnDiagnostic),
}

impl<'a> Wire<'a> {
    fn of(event: &'a TurnEvent) -> Self {
        let e = &event.envelope;
        Wire {
            protocol: TURN_PROTOCOL,
            version: TURN_PROTOCOL_VERSION,
            event_id: &e.event_id,
            session_id: &e.session_id,
            turn_id: &e.turn_id,
            sequence: e.sequence,
            emitted_at: &e.emitted_at,
            event: event.body.kind().as_str(),
            payload: match &event.body {
                EventBody::Submit { input } => Payload::Submit { input },
                EventBody::Snapshot(s) => Payload::Snapshot(s),
                EventBody::Diagnostic(d) => Payload::Diagnostic(d),
            },
        }
    }
}
