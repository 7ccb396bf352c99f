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

/// The parts of a snapshot's payload after its messages: what [`write_snapshot_tail`] writes.
/// A line is [`SnapshotHead::write`], the messages, then the tail: byte for byte what
/// [`encode_turn_event_line`] writes for the same event (`tests/snapshot_lines.rs`), while the
/// sender re-encodes only the messages that changed since its last line.
#[derive(Clone, Copy, Debug)]
pub struct SnapshotParts<'a> {
    pub status: super::event::TurnStatus,
    pub usage: &'a super::event::Usage,
    pub error: Option<&'a TurnDiagnostic>,
    pub lineage: Option<&'a super::event::Lineage>,
    pub confirmations: &'a [crate::session::Confirmation],
}

/// The bytes of a snapshot line's start that one turn repeats on every line (the protocol, its
/// session and turn), encoded once: a line then writes only its event id, sequence and time.
#[derive(Clone, Debug)]
pub struct SnapshotHead {
    /// `{"protocol":…,"version":…,"eventId":`
    before_event_id: Vec<u8>,
    /// `,"sessionId":…,"turnId":…,"sequence":`
    before_sequence: Vec<u8>,
    /// `,"event":"server.turn.snapshot","payload":{"messages":[`
    after_emitted_at: Vec<u8>,
}

impl SnapshotHead {
    pub fn new(session_id: &str, turn_id: &str) -> Self {
        let mut before_event_id = b"{\"protocol\":".to_vec();
        write_json(&mut before_event_id, TURN_PROTOCOL);
        before_event_id.extend_from_slice(b",\"version\":");
        write_json(&mut before_event_id, &TURN_PROTOCOL_VERSION);
        before_event_id.extend_from_slice(b",\"eventId\":");
        let mut before_sequence = b",\"sessionId\":".to_vec();
        write_json(&mut before_sequence, session_id);
        before_sequence.extend_from_slice(b",\"turnId\":");
        write_json(&mut before_sequence, turn_id);
        before_sequence.extend_from_slice(b",\"sequence\":");
        let mut after_emitted_at = b",\"event\":".to_vec();
        write_json(
            &mut after_emitted_at,
            super::event::EventKind::Snapshot.as_str(),
        );
        after_emitted_at.extend_from_slice(b",\"payload\":{\"messages\":[");
        Self {
            before_event_id,
            before_sequence,
            after_emitted_at,
        }
    }

    /// Appends the head of the line with these fields.
    pub fn write(&self, out: &mut Vec<u8>, event_id: &str, sequence: u64, emitted_at: &str) {
        out.extend_from_slice(&self.before_event_id);
        write_json(out, event_id);
        out.extend_from_slice(&self.before_sequence);
        write_json(out, &sequence);
        out.extend_from_slice(b",\"emittedAt\":");
        write_json(out, emitted_at);
        out.extend_from_slice(&self.after_emitted_at);
    }
}

/// The end of a snapshot line after its messages (`],"status":…}}` and the newline): a sender
/// whose status, usage, error, lineage and confirmations did not change since its last line
/// may keep these bytes (the streaming case: only the text grows).
pub fn write_snapshot_tail(out: &mut Vec<u8>, parts: &SnapshotParts<'_>) {
    out.extend_from_slice(b"],\"status\":");
    write_json(out, &parts.status);
    out.extend_from_slice(b",\"usage\":");
    write_json(out, parts.usage);
    if let Some(error) = parts.error {
        out.extend_from_slice(b",\"error\":");
        write_json(out, error);
    }
    if let Some(lineage) = parts.lineage {
        out.extend_from_slice(b",\"lineage\":");
        write_json(out, lineage);
    }
    if !parts.confirmations.is_empty() {
        out.extend_from_slice(b",\"confirmations\":");
        write_json(out, parts.confirmations);
    }
    out.extend_from_slice(b"}}\n");
}

/// Appends the compact JSON of a value whose serialization cannot fail (see [`to_json`]).
pub fn write_json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    serde_json::to_writer(out, value).expect("protocol serialization is infallible");
}
