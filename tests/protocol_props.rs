//! Property tests of the turn codec: decode(encode(e)) == e for arbitrary valid events, and the
//! decoders never panic, whatever bytes or JSON values they are given.
//! Host only: proptest is a host dev-dependency (the wasm lane runs the golden fixtures).
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use serde_json::{Map, Number, Value};
use turnkeep::core::checks::{format_iso_millis, is_safe_id};
use turnkeep::core::protocol::*;

// ------------------------------------------------------------------------- valid events

fn safe_id() -> impl Strategy<Value = String> + Clone {
    "[A-Za-z0-9][A-Za-z0-9._:-]{0,127}"
}

fn safe_uint() -> impl Strategy<Value = u64> + Clone {
    prop_oneof![0u64..1000, 0u64..=9_007_199_254_740_991]
}

/// Offset timestamps in every shape zod's `datetime({offset: true})` accepts.
fn offset_timestamp() -> impl Strategy<Value = String> + Clone {
    let date = (0u32..=9999, 1u32..=12, 1u32..=28);
    let time = (
        0u32..24,
        0u32..60,
        proptest::option::of((0u32..60, proptest::option::of("[0-9]{1,9}"))),
    );
    let offset = prop_oneof![
        Just("Z".to_owned()),
        ("[+-]", 0u32..24, 0u32..60).prop_map(|(s, h, m)| format!("{s}{h:02}:{m:02}"))
    ];
    (date, time, offset).prop_map(|((y, mo, d), (h, mi, sec), off)| {
        let sec = match sec {
            None => String::new(),
            Some((s, None)) => format!(":{s:02}"),
            Some((s, Some(frac))) => format!(":{s:02}.{frac}"),
        };
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}{sec}{off}")
    })
}

fn created_at() -> impl Strategy<Value = String> + Clone {
    (-62_167_219_200_000i64..=253_402_300_799_999).prop_map(format_iso_millis)
}

fn finite_number() -> impl Strategy<Value = Number> + Clone {
    prop_oneof![
        any::<i64>().prop_map(Number::from),
        any::<u64>().prop_map(Number::from),
        any::<f64>().prop_filter_map("finite", Number::from_f64),
    ]
}

/// Arbitrary JSON values (finite numbers; JSON text cannot say anything else).
fn json_value() -> impl Strategy<Value = Value> + Clone {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        finite_number().prop_map(Value::Number),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((".{0,8}", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = Map<String, Value>> + Clone {
    proptest::collection::vec((".{0,8}", json_value()), 0..4)
        .prop_map(|kv| kv.into_iter().collect())
}

fn opt_string() -> impl Strategy<Value = Option<String>> + Clone {
    proptest::option::of(".{0,16}")
}

fn part() -> impl Strategy<Value = Part> + Clone {
    let duration = proptest::option::of((0f64..1e9).prop_filter_map("finite", Number::from_f64));
    let media =
        (".{0,16}", opt_string(), duration).prop_map(|(source, mime_type, duration_sec)| {
            MediaPart {
                source,
                mime_type,
                duration_sec,
            }
        });
    let detail = proptest::option::of(prop_oneof![
        Just(ImageDetail::Low),
        Just(ImageDetail::High),
        Just(ImageDetail::Auto)
    ]);
    prop_oneof![
        ".{0,16}".prop_map(|text| Part::Text { text }),
        (".{0,16}", opt_string(), detail).prop_map(|(source, mime_type, detail)| Part::Image(
            ImagePart {
                source,
                mime_type,
                detail
            }
        )),
        media.clone().prop_map(Part::Audio),
        media.prop_map(Part::Video),
        (".{0,16}", opt_string(), opt_string()).prop_map(|(source, mime_type, filename)| {
            Part::File(FilePart {
                source,
                mime_type,
                filename,
            })
        }),
    ]
}

fn tool_call() -> impl Strategy<Value = ToolCall> + Clone {
    use ToolCallStatus::*;
    let status = prop_oneof![
        Just(Pending),
        Just(Running),
        Just(Complete),
        Just(Error),
        Just(RequiresConfirmation)
    ];
    (
        ".{1,16}",
        ".{1,16}",
        json_object(),
        status,
        opt_string(),
        opt_string(),
    )
        .prop_map(|(id, name, args, status, result, error)| ToolCall {
            id,
            name,
            args,
            status,
            result,
            error,
        })
}

fn message() -> impl Strategy<Value = Message> + Clone {
    let role = prop_oneof![
        Just(Role::User),
        Just(Role::Assistant),
        Just(Role::System),
        Just(Role::Tool)
    ];
    let status = prop_oneof![
        Just(MessageStatus::Pending),
        Just(MessageStatus::Streaming),
        Just(MessageStatus::Complete),
        Just(MessageStatus::Error)
    ];
    let parts = proptest::option::of(proptest::collection::vec(part(), 0..4));
    let calls = proptest::option::of(proptest::collection::vec(tool_call(), 0..3));
    let meta = proptest::option::of(json_object());
    (
        (".{1,24}", role, ".{0,32}", status, created_at()),
        (parts, calls, opt_string(), meta),
    )
        .prop_map(
            |(
                (id, role, content, status, created_at),
                (parts, tool_calls, tool_call_id, metadata),
            )| Message {
                id,
                role,
                content,
                status,
                created_at,
                parts,
                tool_calls,
                tool_call_id,
                metadata,
            },
        )
}

fn diagnostic() -> impl Strategy<Value = TurnDiagnostic> + Clone {
    ("[A-Z][A-Z0-9_]{0,24}", ".{1,40}", any::<bool>()).prop_map(|(code, message, retryable)| {
        TurnDiagnostic {
            code,
            message,
            retryable,
        }
    })
}

fn lineage() -> impl Strategy<Value = Lineage> + Clone {
    let source =
        (safe_id(), safe_id()).prop_map(|(parent_turn_id, source_message_id)| LineageSource {
            parent_turn_id,
            source_message_id,
        });
    prop_oneof![
        Just(Lineage::Submit),
        source.clone().prop_map(Lineage::Retry),
        source.clone().prop_map(Lineage::Edit),
        source.prop_map(Lineage::Regenerate),
    ]
}

fn snapshot() -> impl Strategy<Value = SnapshotPayload> + Clone {
    let status = prop_oneof![
        Just(TurnStatus::Idle),
        Just(TurnStatus::Streaming),
        Just(TurnStatus::Complete),
        Just(TurnStatus::Error)
    ];
    let usage = (safe_uint(), safe_uint(), safe_uint()).prop_map(
        |(prompt_tokens, completion_tokens, total_tokens)| Usage {
            prompt_tokens,
            completion_tokens,
            total_tokens,
        },
    );
    (
        proptest::collection::vec(message(), 0..4),
        status,
        usage,
        proptest::option::of(diagnostic()),
        proptest::option::of(lineage()),
    )
        .prop_map(
            |(messages, status, usage, error, lineage)| SnapshotPayload {
                confirmations: Vec::new(),
                messages,
                status,
                usage,
                error,
                lineage,
            },
        )
}

fn body() -> impl Strategy<Value = EventBody> + Clone {
    prop_oneof![
        ".*[^\\s].*".prop_map(|input| EventBody::Submit { input }),
        snapshot().prop_map(EventBody::Snapshot),
        diagnostic().prop_map(EventBody::Diagnostic),
    ]
}

fn turn_event() -> impl Strategy<Value = TurnEvent> + Clone {
    let envelope = (
        safe_id(),
        safe_id(),
        safe_id(),
        safe_uint(),
        offset_timestamp(),
    )
        .prop_map(
            |(event_id, session_id, turn_id, sequence, emitted_at)| Envelope {
                event_id,
                session_id,
                turn_id,
                sequence,
                emitted_at,
            },
        );
    (envelope, body()).prop_map(|(envelope, body)| TurnEvent { envelope, body })
}

// ------------------------------------------------------------------------- properties

/// Paths into a valid event where a mutation lands, so arbitrary values reach deep decoders.
const MUTATION_PATHS: &[&[&str]] = &[
    &["protocol"],
    &["version"],
    &["eventId"],
    &["sessionId"],
    &["sequence"],
    &["emittedAt"],
    &["event"],
    &["payload"],
    &["payload", "input"],
    &["payload", "messages"],
    &["payload", "status"],
    &["payload", "usage"],
    &["payload", "usage", "totalTokens"],
    &["payload", "error"],
    &["payload", "lineage"],
    &["payload", "code"],
    &["payload", "retryable"],
];

fn set_path(v: &mut Value, path: &[&str], new: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut at = v;
    for key in parents {
        match at.get_mut(*key) {
            Some(next) => at = next,
            None => return,
        }
    }
    if let Some(obj) = at.as_object_mut() {
        obj.insert((*last).to_owned(), new);
    }
}

/// Whatever the decoder says about `v`, it says it coherently.
fn assert_coherent(v: &Value) -> Result<(), TestCaseError> {
    match decode_turn_event(v) {
        Ok(event) => {
            let wire = encode_turn_event(&event);
            let again = decode_turn_event_text(&wire);
            prop_assert_eq!(again.as_ref(), Ok(&event));
        }
        Err(d) => {
            prop_assert!(!d.retryable());
            prop_assert!(!d.message.is_empty());
            if let Some(id) = &d.event_id {
                prop_assert!(is_safe_id(id));
                prop_assert_eq!(v.get("eventId").and_then(Value::as_str), Some(id.as_str()));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn decode_inverts_encode(event in turn_event()) {
        let wire = encode_turn_event(&event);
        prop_assert!(!wire.contains('\n'), "NDJSON lines must be single lines");
        prop_assert_eq!(decode_turn_event_text(&wire), Ok(event.clone()));
        let line = encode_turn_event_line(&event);
        prop_assert_eq!(decode_turn_event_text(&line), Ok(event));
    }

    #[test]
    fn text_decoding_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let text = String::from_utf8_lossy(&bytes);
        if let Err(d) = decode_turn_event_text(&text) {
            prop_assert!(!d.retryable());
        }
    }

    #[test]
    fn value_decoding_never_panics(v in json_value()) {
        assert_coherent(&v)?;
    }

    #[test]
    fn mutated_valid_events_decode_coherently(
        event in turn_event(),
        path in proptest::sample::select(MUTATION_PATHS),
        new in json_value(),
    ) {
        let mut v: Value = serde_json::from_str(&encode_turn_event(&event)).expect("own output parses");
        set_path(&mut v, path, new);
        assert_coherent(&v)?;
    }

    #[test]
    fn messages_round_trip(messages in proptest::collection::vec(message(), 0..5)) {
        let value = messages_to_value(&messages);
        prop_assert_eq!(decode_messages(&value), Ok(messages));
    }
}
