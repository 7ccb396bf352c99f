//! The turn event decoder (`core::protocol`): NDJSON lines and request bodies from clients.
//!
//! Properties, for any input text:
//! - decoding never panics, and the text and value entry points agree;
//! - a diagnostic echoes `eventId` only when the input's `eventId` is a valid SafeId;
//! - a decoded event encodes to one NDJSON line (a single `\n`, at the end) that decodes to an
//!   equal event, and re-encoding that is byte-identical (the encoding is canonical).

use serde_json::Value;
use turnkeep::core::checks::is_safe_id;
use turnkeep::core::protocol::{
    decode_turn_event, decode_turn_event_text, encode_turn_event, encode_turn_event_line,
};

use super::gen::{input, Gen, Input};

pub fn run(data: &[u8]) {
    let text = match input(data) {
        Input::Raw(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        Input::Structured(mut g) => {
            let event = event(&mut g);
            g.json_text(&event)
        }
    };
    check(&text);
}

fn check(text: &str) {
    let decoded = decode_turn_event_text(text);
    let value = serde_json::from_str::<Value>(text);
    if let Ok(value) = &value {
        assert_eq!(
            decode_turn_event(value),
            decoded,
            "text and value decoders disagree"
        );
    }
    let event = match decoded {
        Err(diagnostic) => {
            assert!(!diagnostic.message.is_empty());
            let echoed_ok = value
                .ok()
                .and_then(|v| v.get("eventId").and_then(Value::as_str).map(str::to_owned))
                .filter(|id| is_safe_id(id));
            assert_eq!(diagnostic.event_id, echoed_ok, "eventId echo");
            return;
        }
        Ok(event) => event,
    };
    let line = encode_turn_event_line(&event);
    let body = line.strip_suffix('\n').expect("a line ends with \\n");
    assert!(
        !body.contains('\n'),
        "an NDJSON line holds one newline: {line:?}"
    );
    let again = decode_turn_event_text(body).expect("an encoded event decodes");
    assert_eq!(again, event, "decode(encode(event)) == event");
    assert_eq!(encode_turn_event(&again), body, "the encoding is canonical");
}

/// A turn event, mostly well-formed.
fn event(g: &mut Gen<'_>) -> Value {
    let kind = g.pick(&[
        "client.turn.submit",
        "server.turn.snapshot",
        "server.turn.diagnostic",
        "client.turn.resume",
    ]);
    let payload = match kind {
        "client.turn.submit" => {
            let input = if g.chance(70) {
                "hello".to_owned()
            } else {
                g.string()
            };
            {
                let fields = vec![("input", Value::String(input))];
                g.object(fields)
            }
        }
        "server.turn.snapshot" => snapshot(g),
        _ => diagnostic(g),
    };
    let protocol = if g.chance(95) {
        "agentskit.chat.turn".to_owned()
    } else {
        g.string()
    };
    let version = if g.chance(90) {
        Value::from(1)
    } else {
        g.pick(&[Value::from(2), Value::from(1.0), Value::from("1")])
    };
    {
        let fields = vec![
            ("protocol", Value::String(protocol)),
            ("version", version),
            ("eventId", Value::String(g.safe_id())),
            ("sessionId", Value::String(g.safe_id())),
            ("turnId", Value::String(g.safe_id())),
            ("sequence", g.uint_value()),
            ("emittedAt", Value::String(g.timestamp())),
            ("event", Value::String(kind.to_owned())),
            ("payload", payload),
        ];
        g.object(fields)
    }
}

fn snapshot(g: &mut Gen<'_>) -> Value {
    let mut fields = vec![
        ("messages", g.list(3, message)),
        (
            "status",
            Value::String(
                g.pick(&["idle", "streaming", "complete", "error", "done"])
                    .to_owned(),
            ),
        ),
        ("usage", {
            let fields = vec![
                ("promptTokens", g.uint_value()),
                ("completionTokens", g.uint_value()),
                ("totalTokens", g.uint_value()),
            ];
            g.object(fields)
        }),
    ];
    if g.chance(30) {
        fields.push(("error", diagnostic(g)));
    }
    if g.chance(30) {
        let operation = g.pick(&["submit", "retry", "edit", "regenerate", "fork"]);
        let lineage = {
            let fields = vec![
                ("operation", Value::String(operation.to_owned())),
                ("parentTurnId", Value::String(g.safe_id())),
                ("sourceMessageId", Value::String(g.safe_id())),
            ];
            g.object(fields)
        };
        fields.push(("lineage", lineage));
    }
    g.object(fields)
}

fn diagnostic(g: &mut Gen<'_>) -> Value {
    let code = g.pick(&["TURN_FAILED", "A", "SERVER_1", "bad-code", "", "Ab"]);
    let message = if g.chance(80) {
        "it failed".to_owned()
    } else {
        g.string()
    };
    {
        let fields = vec![
            ("version", Value::from(1)),
            ("code", Value::String(code.to_owned())),
            ("message", Value::String(message)),
            ("retryable", Value::Bool(g.chance(50))),
        ];
        g.object(fields)
    }
}

/// A chat message as snapshots carry it.
pub(super) fn message(g: &mut Gen<'_>) -> Value {
    let created_at = if g.chance(85) {
        turnkeep::core::checks::format_iso_millis(g.epoch_ms())
    } else {
        g.timestamp()
    };
    let mut fields = vec![
        (
            "id",
            Value::String(if g.chance(90) {
                g.safe_id()
            } else {
                g.string()
            }),
        ),
        (
            "role",
            Value::String(
                g.pick(&["user", "assistant", "system", "tool", "bot"])
                    .to_owned(),
            ),
        ),
        ("content", Value::String(g.string())),
        (
            "status",
            Value::String(
                g.pick(&["pending", "streaming", "complete", "error"])
                    .to_owned(),
            ),
        ),
        ("createdAt", Value::String(created_at)),
    ];
    if g.chance(30) {
        fields.push(("parts", g.list(3, part)));
    }
    if g.chance(30) {
        fields.push(("toolCalls", g.list(2, tool_call)));
    }
    if g.chance(20) {
        fields.push(("toolCallId", Value::String(g.string())));
    }
    if g.chance(20) {
        let metadata = g.any_value(3);
        fields.push(("metadata", metadata));
    }
    g.object(fields)
}

fn part(g: &mut Gen<'_>) -> Value {
    let kind = g.pick(&["text", "image", "audio", "video", "file", "gif"]);
    let mut fields = vec![("type", Value::String(kind.to_owned()))];
    match kind {
        "text" => fields.push(("text", Value::String(g.string()))),
        _ => {
            fields.push(("source", Value::String(g.string())));
            if g.chance(50) {
                fields.push(("mimeType", Value::String(g.string())));
            }
            if g.chance(40) {
                fields.push((
                    "detail",
                    Value::String(g.pick(&["low", "high", "auto", "max"]).to_owned()),
                ));
            }
            if g.chance(40) {
                fields.push(("durationSec", g.number()));
            }
            if g.chance(40) {
                fields.push(("filename", Value::String(g.string())));
            }
        }
    }
    g.object(fields)
}

fn tool_call(g: &mut Gen<'_>) -> Value {
    let status = g.pick(&[
        "pending",
        "running",
        "complete",
        "error",
        "requires_confirmation",
    ]);
    let args = if g.chance(85) {
        Value::Object(Default::default())
    } else {
        g.any_value(3)
    };
    let mut fields = vec![
        ("id", Value::String(g.safe_id())),
        (
            "name",
            Value::String(g.pick(&["lookup", "", "get_weather"]).to_owned()),
        ),
        ("args", args),
        ("status", Value::String(status.to_owned())),
    ];
    if g.chance(30) {
        fields.push(("result", Value::String(g.string())));
    }
    if g.chance(20) {
        fields.push(("error", Value::String(g.string())));
    }
    g.object(fields)
}
