//! Component frames and the assistant content envelope (AgentsKit Chat's protocol package):
//! tables of inputs with the reference decoder's codes and texts, and the encoder's output.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use serde_json::{json, Value};
use turnkeep::core::protocol::component::{
    decode_component_frame, interaction_event, is_component_frame_candidate, selection_event,
    ComponentDecodeError,
};
use turnkeep::core::protocol::content::{
    decode_assistant_content, is_assistant_content_candidate, AssistantContentEncoder,
    ContentDecodeError, ASSISTANT_CONTENT_PREFIX,
};

fn frame() -> Value {
    json!({
        "protocol": "agentskit.chat.component", "version": 1, "type": "render",
        "componentKey": "choice-list", "instanceId": "c1",
        "props": { "choices": [{ "id": "a", "label": "A" }] },
        "fallback": { "kind": "choices", "summary": "Pick A" },
    })
}

fn with(mut value: Value, key: &str, field: Value) -> Value {
    value[key] = field;
    value
}

#[test]
fn component_frames_decode_in_the_reference_order() {
    use ComponentDecodeError::*;
    let deep = (0..25).fold(json!(1), |inner, _| json!([inner]));
    let cases: Vec<(&str, Value, Result<Value, ComponentDecodeError>)> = vec![
        ("a render frame", frame(), Ok(frame())),
        ("as text", Value::String(frame().to_string()), Ok(frame())),
        (
            "unknown keys dropped",
            with(frame(), "extra", json!(1)),
            Ok(frame()),
        ),
        ("text that is not JSON", json!("{"), Err(NotJson)),
        (
            "version 2",
            with(frame(), "version", json!(2)),
            Err(UnsupportedVersion),
        ),
        (
            "a select event is not a frame",
            with(frame(), "type", json!("select")),
            Err(UnknownType),
        ),
        (
            "no type",
            with(frame(), "type", Value::Null),
            Err(UnknownType),
        ),
        (
            "version as text",
            with(frame(), "version", json!("1")),
            Err(Invalid),
        ),
        (
            "another protocol",
            with(frame(), "protocol", json!("other")),
            Err(Invalid),
        ),
        (
            "a bad component key",
            with(frame(), "componentKey", json!("Choice")),
            Err(Invalid),
        ),
        (
            "a bad instance id",
            with(frame(), "instanceId", json!("a b")),
            Err(Invalid),
        ),
        ("props too deep", with(frame(), "props", deep), Err(Invalid)),
        (
            "no props",
            frame()
                .as_object()
                .map(|o| {
                    let mut o = o.clone();
                    o.remove("props");
                    Value::Object(o)
                })
                .unwrap(),
            Err(Invalid),
        ),
        (
            "an empty fallback kind",
            with(frame(), "fallback", json!({ "kind": "", "summary": "s" })),
            Err(Invalid),
        ),
        (
            "a summary over 4096 units",
            with(
                frame(),
                "fallback",
                json!({ "kind": "k", "summary": "x".repeat(4_097) }),
            ),
            Err(Invalid),
        ),
        ("null", Value::Null, Err(Invalid)),
    ];
    for (name, input, expected) in cases {
        assert_eq!(decode_component_frame(&input), expected, "{name}");
    }
    assert_eq!(Invalid.code(), "COMPONENT_INVALID_FRAME");
    assert_eq!(NotJson.message(), "Component frame is not valid JSON.");
    assert_eq!(UnknownType.message(), "Component frame type is unknown.");
}

#[test]
fn candidates_selection_and_interaction_events() {
    assert!(is_component_frame_candidate(&with(
        frame(),
        "version",
        json!(9)
    )));
    assert!(is_component_frame_candidate(&Value::String(
        frame().to_string()
    )));
    assert!(!is_component_frame_candidate(&json!("{")));
    assert!(!is_component_frame_candidate(&json!({ "protocol": "x" })));

    assert_eq!(
        selection_event(&frame(), &json!("a")).unwrap(),
        json!({ "protocol": "agentskit.chat.component", "version": 1, "type": "select",
                "componentKey": "choice-list", "instanceId": "c1", "choiceId": "a" })
    );
    assert_eq!(
        selection_event(&frame(), &json!("not safe"))
            .unwrap_err()
            .path,
        "choiceId"
    );
    assert_eq!(
        selection_event(&json!({}), &json!("a")).unwrap_err().path,
        "frame.protocol"
    );
    assert_eq!(
        interaction_event(&frame(), &json!("submit"), Some(&json!({ "n": 1 }))).unwrap(),
        json!({ "protocol": "agentskit.chat.component", "version": 1, "type": "interact",
                "componentKey": "choice-list", "instanceId": "c1", "event": "submit", "value": { "n": 1 } })
    );
    let without = interaction_event(&frame(), &json!("open"), None).unwrap();
    assert!(without.get("value").is_none());
    assert_eq!(
        interaction_event(&frame(), &json!("Open"), None)
            .unwrap_err()
            .path,
        "event"
    );
    let too_many = Value::Array((0..1_001).map(|i| json!(i)).collect());
    assert_eq!(
        interaction_event(&frame(), &json!("open"), Some(&too_many))
            .unwrap_err()
            .path,
        "value"
    );
}

#[test]
fn the_encoder_writes_what_the_decoder_reads() {
    let mut encoder = AssistantContentEncoder::new();
    let first = encoder
        .encode(&json!({ "kind": "text", "text": "Pick one:", "extra": 1 }))
        .unwrap();
    let second = encoder
        .encode(&json!({ "kind": "component", "frame": frame() }))
        .unwrap();
    assert_eq!(
        first,
        format!("{ASSISTANT_CONTENT_PREFIX}{{\"kind\":\"text\",\"text\":\"Pick one:\"}}\n")
    );
    assert!(!second.starts_with('\u{1e}'), "the header is written once");
    let envelope = format!("{first}{second}");
    let decoded = decode_assistant_content(&envelope).unwrap();
    assert!(decoded.complete);
    assert_eq!(
        decoded.parts,
        vec![
            json!({ "kind": "text", "text": "Pick one:" }),
            json!({ "kind": "component", "frame": frame() })
        ]
    );
    assert_eq!(
        encoder
            .encode(&json!({ "kind": "text", "text": "" }))
            .unwrap_err()
            .path,
        "text"
    );
    assert_eq!(
        encoder
            .encode(&json!({ "kind": "component", "frame": {} }))
            .unwrap_err()
            .path,
        "frame.protocol"
    );
    assert_eq!(
        encoder
            .encode(&json!({ "kind": "image" }))
            .unwrap_err()
            .path,
        "kind"
    );
}

/// `Ok((parts read, complete))` or the decode error.
type ContentCase = Result<(usize, bool), ContentDecodeError>;

#[test]
fn envelopes_decode_while_streaming_and_fail_with_the_reference_codes() {
    use ContentDecodeError::*;
    let text = |t: &str| format!("{{\"kind\":\"text\",\"text\":\"{t}\"}}");
    let parts = |n: usize| {
        (0..n)
            .map(|i| json!({ "kind": "text", "text": format!("t{i}") }))
            .collect::<Vec<_>>()
    };
    let full = format!("{ASSISTANT_CONTENT_PREFIX}{}\n{}\n", text("t0"), text("t1"));
    let cases: Vec<(&str, String, ContentCase)> = vec![
        ("two whole records", full.clone(), Ok((2, true))),
        (
            "the last record still being written",
            full[..full.len() - 5].to_string(),
            Ok((1, false)),
        ),
        (
            "a prefix of the header",
            "\u{1e}agentskit.chat.con".into(),
            Ok((0, false)),
        ),
        (
            "the whole header only",
            ASSISTANT_CONTENT_PREFIX.into(),
            Ok((0, false)),
        ),
        ("the separator only", "\u{1e}".into(), Ok((0, false))),
        ("plain text", "hello".into(), Err(InvalidEnvelope)),
        (
            "another envelope",
            "\u{1e}other/1\n".into(),
            Err(InvalidEnvelope),
        ),
        (
            "version 2",
            "\u{1e}agentskit.chat.content/2\n{}\n".into(),
            Err(UnsupportedVersion),
        ),
        (
            "an empty record",
            format!("{ASSISTANT_CONTENT_PREFIX}\n"),
            Err(InvalidRecord),
        ),
        (
            "a record that is not JSON",
            format!("{ASSISTANT_CONTENT_PREFIX}{{\n"),
            Err(InvalidRecord),
        ),
        (
            "a record that is not a part",
            format!("{ASSISTANT_CONTENT_PREFIX}{{\"kind\":\"x\"}}\n"),
            Err(InvalidRecord),
        ),
        (
            "over 256 KiB",
            format!("{ASSISTANT_CONTENT_PREFIX}{}", "x".repeat(262_144)),
            Err(TooLarge),
        ),
        (
            "513 records",
            format!(
                "{ASSISTANT_CONTENT_PREFIX}{}",
                format!("{}\n", text("t")).repeat(513)
            ),
            Err(TooManyRecords),
        ),
        (
            "512 records",
            format!(
                "{ASSISTANT_CONTENT_PREFIX}{}",
                format!("{}\n", text("t")).repeat(512)
            ),
            Ok((512, true)),
        ),
    ];
    for (name, input, expected) in cases {
        let got = decode_assistant_content(&input).map(|c| (c.parts.len(), c.complete));
        assert_eq!(got, expected, "{name}");
    }
    assert_eq!(decode_assistant_content(&full).unwrap().parts, parts(2));
    assert!(is_assistant_content_candidate("\u{1e}x"));
    assert!(!is_assistant_content_candidate("x"));
    assert_eq!(TooLarge.code(), "ASSISTANT_CONTENT_LIMIT_EXCEEDED");
    assert_eq!(
        TooManyRecords.message(),
        "Assistant content envelope exceeds its record limit."
    );
    assert_eq!(
        InvalidEnvelope.message(),
        "Assistant content envelope is invalid."
    );
}
