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

/// A turn event: valid, unless the generator draws flaws (see `Gen::flaw`).
pub fn event(g: &mut Gen<'_>) -> Value {
    let kind = g.one_of(
        &[
            "client.turn.submit",
            "server.turn.snapshot",
            "server.turn.diagnostic",
        ],
        &["client.turn.resume", "server.turn.snapshot "],
    );
    let payload = match kind.as_str() {
        Some("client.turn.submit") => {
            let blank = g.flaw();
            let input = if blank {
                g.pick(&["", " \u{feff}\n"]).to_owned()
            } else {
                format!("hi {}", g.string())
            };
            let fields = vec![("input", Value::String(input))];
            g.object(fields)
        }
        Some("server.turn.snapshot") => snapshot(g),
        _ => diagnostic(g),
    };
    let protocol = g.one_of(&["agentskit.chat.turn"], &["agentskit.chat.session", ""]);
    let version = if g.flaw() {
        g.pick(&[Value::from(2), Value::from("1"), Value::from(1.5)])
    } else {
        g.pick(&[Value::from(1), Value::from(1.0)])
    };
    let fields = vec![
        ("protocol", protocol),
        ("version", version),
        ("eventId", Value::String(g.safe_id())),
        ("sessionId", Value::String(g.safe_id())),
        ("turnId", Value::String(g.safe_id())),
        ("sequence", g.uint_value()),
        ("emittedAt", Value::String(g.timestamp())),
        ("event", kind),
        ("payload", payload),
    ];
    g.object(fields)
}

fn snapshot(g: &mut Gen<'_>) -> Value {
    let usage = {
        let fields = vec![
            ("promptTokens", g.uint_value()),
            ("completionTokens", g.uint_value()),
            ("totalTokens", g.uint_value()),
        ];
        g.object(fields)
    };
    let mut fields = vec![
        ("messages", g.list(3, message)),
        (
            "status",
            g.one_of(
                &["idle", "streaming", "complete", "error"],
                &["done", "Idle"],
            ),
        ),
        ("usage", usage),
    ];
    if g.chance(30) {
        fields.push(("error", diagnostic(g)));
    }
    if g.chance(30) {
        let operation = g.one_of(&["submit", "retry", "edit", "regenerate"], &["fork", ""]);
        let lineage = vec![
            ("operation", operation),
            ("parentTurnId", Value::String(g.safe_id())),
            ("sourceMessageId", Value::String(g.safe_id())),
        ];
        let lineage = g.object(lineage);
        fields.push(("lineage", lineage));
    }
    g.object(fields)
}

fn diagnostic(g: &mut Gen<'_>) -> Value {
    let code = g.one_of(&["TURN_FAILED", "A", "SERVER_1"], &["bad-code", "", "Ab"]);
    let message = if g.flaw() {
        String::new()
    } else {
        format!("failed: {}", g.string())
    };
    let fields = vec![
        ("version", Value::from(1)),
        ("code", code),
        ("message", Value::String(message)),
        ("retryable", Value::Bool(g.chance(50))),
    ];
    g.object(fields)
}

/// A chat message as snapshots carry it.
fn message(g: &mut Gen<'_>) -> Value {
    let created_at = if g.flaw() {
        g.timestamp()
    } else {
        g.iso_millis()
    };
    let id = if g.flaw() {
        String::new()
    } else {
        format!("msg-{}", g.string())
    };
    let mut fields = vec![
        ("id", Value::String(id)),
        (
            "role",
            g.one_of(&["user", "assistant", "system", "tool"], &["bot", "User"]),
        ),
        ("content", Value::String(g.string())),
        (
            "status",
            g.one_of(&["pending", "streaming", "complete", "error"], &["done"]),
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
        let metadata = Value::Object([("k".to_owned(), g.any_value(3))].into_iter().collect());
        let metadata = g.perturb(metadata);
        fields.push(("metadata", metadata));
    }
    g.object(fields)
}

fn part(g: &mut Gen<'_>) -> Value {
    let kind = g.one_of(&["text", "image", "audio", "video", "file"], &["gif", ""]);
    let mut fields = vec![("type", kind.clone())];
    if kind == "text" {
        fields.push(("text", Value::String(g.string())));
        return g.object(fields);
    }
    fields.push(("source", Value::String(g.string())));
    if g.chance(50) {
        fields.push(("mimeType", Value::String(g.string())));
    }
    if g.chance(40) {
        fields.push(("detail", g.one_of(&["low", "high", "auto"], &["max"])));
    }
    if g.chance(40) {
        let duration = if g.flaw() {
            g.number()
        } else {
            Value::from(g.u64_in(0, 10_000))
        };
        fields.push(("durationSec", duration));
    }
    if g.chance(40) {
        fields.push(("filename", Value::String(g.string())));
    }
    g.object(fields)
}

fn tool_call(g: &mut Gen<'_>) -> Value {
    let status = g.one_of(
        &[
            "pending",
            "running",
            "complete",
            "error",
            "requires_confirmation",
        ],
        &["waiting"],
    );
    let args = Value::Object([("q".to_owned(), g.any_value(2))].into_iter().collect());
    let args = g.perturb(args);
    let mut fields = vec![
        ("id", Value::String(g.safe_id())),
        ("name", g.one_of(&["lookup", "get_weather"], &[""])),
        ("args", args),
        ("status", status),
    ];
    if g.chance(30) {
        fields.push(("result", Value::String(g.string())));
    }
    if g.chance(20) {
        fields.push(("error", Value::String(g.string())));
    }
    g.object(fields)
}
