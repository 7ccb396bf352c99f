//! Checks shared by `wasm_node.rs` and `wasm_browser.rs`; each file runs all of them in its own
//! host through `wasm_tests!()`. Inputs are real JS values (`JSON.parse`, objects with cycles,
//! BigInt, undefined); results are read back with `Reflect`, as a JS caller would.
#![allow(dead_code)]

use js_sys::{Object, Reflect, JSON};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use turnkeep::web;

/// Declares one `#[wasm_bindgen_test]` per shared check.
macro_rules! wasm_tests {
    ($($name:ident),* $(,)?) => {
        $( #[wasm_bindgen_test::wasm_bindgen_test] fn $name() { wasm_common::$name(); } )*
    };
    (async $($name:ident),* $(,)?) => {
        $( #[wasm_bindgen_test::wasm_bindgen_test] async fn $name() { wasm_common::$name().await; } )*
    };
}

/// Every check of this module, as tests of the including file (Node or Chromium).
macro_rules! all_export_tests {
    () => {
        wasm_tests!(
            version_is_the_crate_version,
            decode_turn_event_table,
            decode_returns_the_canonical_event,
            encode_turn_event_round_trips,
            encode_turn_event_throws_a_clear_error,
            snapshot_cursor_accepts_only_newer_snapshots_of_its_session,
            snapshot_cursor_rejects_a_bad_session_id,
            decode_session_snapshot_table,
        );
        wasm_tests!(
            async memory_session_storage_is_compare_and_set,
            memory_session_storage_rejects_bad_calls,
            resume_chat_session_claims_and_releases_by_compare_and_set,
            resume_chat_session_rejects_what_it_cannot_resume
        );
    };
}

pub const SUBMIT: &str = r#"{"protocol":"agentskit.chat.turn","version":1,"eventId":"e1","sessionId":"s1","turnId":"t1","sequence":0,"emittedAt":"2026-07-11T03:00:00.000Z","event":"client.turn.submit","payload":{"input":"hello"}}"#;

/// A snapshot of session `s1` with `sequence` (one complete user message).
pub fn snapshot(session_id: &str, sequence: u64) -> String {
    format!(
        r#"{{"protocol":"agentskit.chat.turn","version":1,"eventId":"e{sequence}","sessionId":"{session_id}","turnId":"t1","sequence":{sequence},"emittedAt":"2026-07-11T03:00:00.000Z","event":"server.turn.snapshot","payload":{{"messages":[{{"id":"m1","role":"user","content":"hello","status":"complete","createdAt":"2026-07-11T03:00:00.000Z"}}],"status":"streaming","usage":{{"promptTokens":1,"completionTokens":0,"totalTokens":1}}}}}}"#
    )
}

pub const DIAGNOSTIC: &str = r#"{"protocol":"agentskit.chat.turn","version":1,"eventId":"e9","sessionId":"s1","turnId":"t1","sequence":99,"emittedAt":"2026-07-11T03:00:00.000Z","event":"server.turn.diagnostic","payload":{"version":1,"code":"SESSION_BUSY","message":"busy","retryable":true}}"#;

pub const SESSION_V1: &str = r#"{"protocol":"agentskit.chat.session","version":1,"sessionId":"s1","definitionId":"demo","definitionRevision":1,"updatedAt":"2026-07-11T03:00:00.000Z","cursor":3,"confirmations":[]}"#;
pub const SESSION_V0: &str = r#"{"version":0,"sessionId":"s1","definitionId":"demo","definitionRevision":1,"updatedAt":"2026-07-11T03:00:00.000Z","cursor":2,"confirmations":[]}"#;

fn parse(text: &str) -> JsValue {
    JSON::parse(text).unwrap_or_else(|_| panic!("test fixture is not JSON: {text}"))
}

fn get(value: &JsValue, path: &str) -> JsValue {
    path.split('.').fold(value.clone(), |v, key| {
        if v.is_object() {
            Reflect::get(&v, &key.into()).unwrap_or(JsValue::UNDEFINED)
        } else {
            JsValue::UNDEFINED
        }
    })
}

fn text(value: &JsValue) -> String {
    JSON::stringify(value)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_else(|| "undefined".into())
}

fn error_message(error: &JsValue) -> String {
    assert!(
        error.is_instance_of::<js_sys::Error>(),
        "expected a JS Error, got {}",
        text(error)
    );
    String::from(error.unchecked_ref::<js_sys::Error>().message())
}

/// `object` with `key` set to `value`.
fn with(object: JsValue, key: &str, value: JsValue) -> JsValue {
    Reflect::set(&object, &key.into(), &value).unwrap();
    object
}

/// A JS object that contains itself (JSON.stringify throws on it).
fn cyclic() -> JsValue {
    let o = Object::new();
    Reflect::set(&o, &"self".into(), &o).unwrap();
    o.into()
}

pub fn version_is_the_crate_version() {
    assert_eq!(web::version(), env!("CARGO_PKG_VERSION"));
}

/// The reference decoder's texts (AgentsKit Chat's `decodeTurnEvent`).
const REFERENCE_MESSAGES: [&str; 4] = [
    "Turn event is not valid JSON.",
    "Turn event uses an unsupported protocol version.",
    "Turn event kind is unknown.",
    "Turn event payload is invalid.",
];

/// `Ok(event kind)` or `Err((code, echoed eventId))`.
type DecodeExpected<'a> = Result<&'a str, (&'a str, Option<&'a str>)>;

/// `decodeTurnEvent` on one input: `Ok(kind)` for a decoded event of that kind, `Err(code)`
/// for a diagnostic (with `retryable: false`, and the echoed `eventId` when given).
fn check_decode(name: &str, input: JsValue, expected: DecodeExpected) {
    let out = web::decode_turn_event(input);
    match expected {
        Ok(kind) => {
            assert_eq!(get(&out, "ok"), JsValue::TRUE, "{name}: {}", text(&out));
            assert_eq!(
                get(&out, "event.event").as_string().as_deref(),
                Some(kind),
                "{name}"
            );
        }
        Err((code, event_id)) => {
            assert_eq!(get(&out, "ok"), JsValue::FALSE, "{name}: {}", text(&out));
            assert_eq!(
                get(&out, "diagnostic.code").as_string().as_deref(),
                Some(code),
                "{name}: {}",
                text(&out)
            );
            assert_eq!(get(&out, "diagnostic.retryable"), JsValue::FALSE, "{name}");
            let message = get(&out, "diagnostic.message")
                .as_string()
                .unwrap_or_default();
            assert!(
                REFERENCE_MESSAGES.contains(&message.as_str()),
                "{name}: {message}"
            );
            assert_eq!(
                get(&out, "diagnostic.eventId").as_string().as_deref(),
                event_id,
                "{name}"
            );
        }
    }
}

pub fn decode_turn_event_table() {
    let submit = "client.turn.submit";
    let invalid = "PROTOCOL_INVALID_PAYLOAD";
    let v2 = SUBMIT.replace(r#""version":1"#, r#""version":2"#);
    let unknown = SUBMIT.replace("client.turn.submit", "client.turn.resume");
    let v_string = SUBMIT.replace(r#""version":1"#, r#""version":"1""#);
    let blank = SUBMIT.replace(r#""input":"hello""#, r#""input":"   ""#);
    let cases: Vec<(&str, JsValue, DecodeExpected)> = vec![
        ("submit as text", SUBMIT.into(), Ok(submit)),
        ("submit as object", parse(SUBMIT), Ok(submit)),
        (
            "snapshot as object",
            parse(&snapshot("s1", 4)),
            Ok("server.turn.snapshot"),
        ),
        (
            "diagnostic as text",
            DIAGNOSTIC.into(),
            Ok("server.turn.diagnostic"),
        ),
        (
            "text that is not JSON",
            "{not json".into(),
            Err((invalid, None)),
        ),
        (
            "version 2",
            parse(&v2),
            Err(("PROTOCOL_UNSUPPORTED_VERSION", Some("e1"))),
        ),
        (
            "unknown event",
            unknown.as_str().into(),
            Err(("PROTOCOL_UNKNOWN_EVENT", Some("e1"))),
        ),
        (
            "version as string",
            parse(&v_string),
            Err((invalid, Some("e1"))),
        ),
        ("blank input", parse(&blank), Err((invalid, Some("e1")))),
        ("null", JsValue::NULL, Err((invalid, None))),
        ("undefined", JsValue::UNDEFINED, Err((invalid, None))),
        ("a number", JsValue::from_f64(7.0), Err((invalid, None))),
        ("a cyclic object", cyclic(), Err((invalid, None))),
        (
            "a BigInt",
            js_sys::BigInt::from(5u32).into(),
            Err((invalid, None)),
        ),
        (
            "NaN inside (refused, not turned into null)",
            with(parse(SUBMIT), "extra", JsValue::from_f64(f64::NAN)),
            Err((invalid, None)),
        ),
        (
            "a function inside (refused, not dropped)",
            with(
                parse(SUBMIT),
                "extra",
                js_sys::Function::new_no_args("").into(),
            ),
            Err((invalid, None)),
        ),
    ];
    for (name, input, expected) in cases {
        check_decode(name, input, expected);
    }
}

pub fn decode_returns_the_canonical_event() {
    let with_extra = SUBMIT.replace(r#""payload":"#, r#""extra":true,"payload":"#);
    let out = web::decode_turn_event(parse(&with_extra));
    let event = get(&out, "event");
    assert_eq!(
        get(&event, "extra"),
        JsValue::UNDEFINED,
        "unknown fields are dropped"
    );
    assert_eq!(
        get(&event, "payload.input").as_string().as_deref(),
        Some("hello")
    );
    assert_eq!(
        text(&event),
        SUBMIT,
        "decoded event is the canonical wire form"
    );
}

pub fn encode_turn_event_round_trips() {
    // Keys in a non-schema order still encode in schema order.
    let shuffled = parse(
        r#"{"payload":{"input":"hello"},"event":"client.turn.submit","emittedAt":"2026-07-11T03:00:00.000Z","sequence":0,"turnId":"t1","sessionId":"s1","eventId":"e1","version":1,"protocol":"agentskit.chat.turn"}"#,
    );
    assert_eq!(web::encode_turn_event(shuffled).unwrap(), SUBMIT);
    let snap = snapshot("s1", 8);
    assert_eq!(web::encode_turn_event(parse(&snap)).unwrap(), snap);
    assert_eq!(
        web::encode_turn_event(DIAGNOSTIC.into()).unwrap(),
        DIAGNOSTIC
    );
    let decoded = get(&web::decode_turn_event(snap.as_str().into()), "event");
    assert_eq!(
        web::encode_turn_event(decoded).unwrap(),
        snap,
        "decode then encode is the identity"
    );
}

pub fn encode_turn_event_throws_a_clear_error() {
    let cases: Vec<(JsValue, &str)> = vec![
        (
            parse(&SUBMIT.replace(r#""sessionId":"s1""#, r#""sessionId":"bad id""#)),
            "sessionId",
        ),
        (JsValue::NULL, "PROTOCOL_INVALID_PAYLOAD"),
        (
            parse(&SUBMIT.replace(r#""version":1"#, r#""version":3"#)),
            "PROTOCOL_UNSUPPORTED_VERSION",
        ),
    ];
    for (input, needle) in cases {
        let err = web::encode_turn_event(input).expect_err("invalid event must throw");
        let message = error_message(&err);
        assert!(message.starts_with("encodeTurnEvent:"), "{message}");
        assert!(
            message.contains(needle),
            "{message} should mention {needle}"
        );
    }
}

pub fn snapshot_cursor_accepts_only_newer_snapshots_of_its_session() {
    let mut cursor = web::create_turn_snapshot_cursor("s1".into()).unwrap();
    assert_eq!(cursor.get_snapshot(), JsValue::UNDEFINED);
    // (input, accepted?, sequence of getSnapshot() afterwards)
    let steps: Vec<(JsValue, bool, Option<f64>)> = vec![
        (DIAGNOSTIC.into(), false, None),
        (parse(&snapshot("s1", 5)), true, Some(5.0)),
        (snapshot("s1", 5).into(), false, Some(5.0)),
        (parse(&snapshot("s1", 3)), false, Some(5.0)),
        (parse(&snapshot("s2", 9)), false, Some(5.0)),
        ("{oops".into(), false, Some(5.0)),
        (JsValue::UNDEFINED, false, Some(5.0)),
        (snapshot("s1", 7).into(), true, Some(7.0)),
    ];
    for (i, (input, accepted, last)) in steps.into_iter().enumerate() {
        assert_eq!(cursor.apply(input), accepted, "step {i}");
        let current = cursor.get_snapshot();
        assert_eq!(get(&current, "sequence").as_f64(), last, "step {i}");
        if last.is_some() {
            assert!(
                Object::is_frozen(current.unchecked_ref::<Object>()),
                "step {i}: frozen"
            );
            assert!(Object::is_frozen(
                get(&current, "payload.messages").unchecked_ref::<Object>()
            ));
        }
    }
}

pub fn snapshot_cursor_rejects_a_bad_session_id() {
    for bad in [
        JsValue::from_str("no spaces allowed"),
        JsValue::from_str(""),
        JsValue::from_f64(1.0),
    ] {
        let err = web::create_turn_snapshot_cursor(bad)
            .err()
            .expect("must throw");
        assert!(error_message(&err).contains("sessionId"));
    }
}

pub fn decode_session_snapshot_table() {
    let v2 = SESSION_V1.replace(r#""version":1"#, r#""version":2"#);
    let cases: Vec<(&str, JsValue, Result<u64, &str>)> = vec![
        ("v1 object", parse(SESSION_V1), Ok(3)),
        ("v1 text", SESSION_V1.into(), Ok(3)),
        ("v0 migrated", parse(SESSION_V0), Ok(2)),
        ("version 2", parse(&v2), Err("SESSION_UNSUPPORTED_VERSION")),
        ("bad text", "{".into(), Err("SESSION_INVALID_SNAPSHOT")),
        (
            "missing cursor",
            parse(r#"{"protocol":"agentskit.chat.session","version":1}"#),
            Err("SESSION_INVALID_SNAPSHOT"),
        ),
        ("cyclic", cyclic(), Err("SESSION_INVALID_SNAPSHOT")),
    ];
    for (name, input, expected) in cases {
        let out = web::decode_session_snapshot(input);
        match expected {
            Ok(cursor) => {
                assert_eq!(get(&out, "ok"), JsValue::TRUE, "{name}: {}", text(&out));
                assert_eq!(
                    get(&out, "snapshot.cursor").as_f64(),
                    Some(cursor as f64),
                    "{name}"
                );
                assert_eq!(
                    get(&out, "snapshot.version").as_f64(),
                    Some(1.0),
                    "{name}: always v1"
                );
                assert_eq!(
                    get(&out, "snapshot.protocol").as_string().as_deref(),
                    Some("agentskit.chat.session")
                );
            }
            Err(code) => {
                assert_eq!(get(&out, "ok"), JsValue::FALSE, "{name}: {}", text(&out));
                assert_eq!(
                    get(&out, "diagnostic.code").as_string().as_deref(),
                    Some(code),
                    "{name}"
                );
                assert_eq!(get(&out, "diagnostic.retryable"), JsValue::FALSE, "{name}");
            }
        }
    }
}

async fn settle(promise: js_sys::Promise) -> Result<JsValue, String> {
    JsFuture::from(promise).await.map_err(|e| error_message(&e))
}

fn envelope(cursor: u64) -> JsValue {
    parse(&SESSION_V1.replace(r#""cursor":3"#, &format!(r#""cursor":{cursor}"#)))
}

pub async fn memory_session_storage_is_compare_and_set() {
    let store = web::create_memory_session_storage();
    assert_eq!(
        settle(store.load("s1".into())).await,
        Ok(JsValue::UNDEFINED)
    );
    // (snapshot cursor, expectedCursor, written?)
    let steps: Vec<(u64, JsValue, bool)> = vec![
        (0, JsValue::UNDEFINED, true),
        (0, JsValue::UNDEFINED, false), // create-only: a record exists
        (1, JsValue::from_f64(0.0), true),
        (1, JsValue::from_f64(0.0), false), // stale expected cursor
        (2, JsValue::NULL, false),
        (2, JsValue::from_f64(1.0), true),
    ];
    for (i, (cursor, expected, written)) in steps.into_iter().enumerate() {
        let out = settle(store.save(envelope(cursor), expected)).await;
        assert_eq!(out, Ok(JsValue::from_bool(written)), "step {i}");
    }
    let loaded = settle(store.load("s1".into())).await.unwrap();
    assert_eq!(get(&loaded, "cursor").as_f64(), Some(2.0));
    assert_eq!(settle(store.delete("s1".into())).await, Ok(JsValue::TRUE));
    assert_eq!(
        settle(store.load("s1".into())).await,
        Ok(JsValue::UNDEFINED)
    );
}

pub async fn memory_session_storage_rejects_bad_calls() {
    let store = web::create_memory_session_storage();
    let no_id = parse(r#"{"cursor":0}"#);
    let cases: Vec<(js_sys::Promise, &str)> = vec![
        (store.save(no_id, JsValue::UNDEFINED), "sessionId"),
        (
            store.save(envelope(1), JsValue::from_f64(-1.0)),
            "expectedCursor",
        ),
        (store.save(cyclic(), JsValue::UNDEFINED), "save"),
        (store.load(JsValue::from_f64(1.0)), "sessionId"),
    ];
    for (promise, needle) in cases {
        let err = settle(promise).await.expect_err("must reject");
        assert!(
            err.starts_with("MemorySessionStorage.") && err.contains(needle),
            "{err}"
        );
    }
}

/// Calls `object[method](args...)` as a JS caller would and awaits the promise it returns.
async fn call(object: &JsValue, method: &str, args: &[JsValue]) -> Result<JsValue, JsValue> {
    let f: js_sys::Function = Reflect::get(object, &method.into())
        .unwrap()
        .unchecked_into();
    let array: js_sys::Array = args.iter().collect();
    let promise: js_sys::Promise = f.apply(object, &array)?.unchecked_into();
    JsFuture::from(promise).await
}

fn resume_options(session_id: &str, storage: &JsValue) -> JsValue {
    let options = Object::new();
    Reflect::set(&options, &"sessionId".into(), &session_id.into()).unwrap();
    Reflect::set(&options, &"storage".into(), storage).unwrap();
    options.into()
}

pub async fn resume_chat_session_claims_and_releases_by_compare_and_set() {
    let storage: JsValue = web::create_memory_session_storage().into();
    let definition = parse(r#"{"id":"demo"}"#);
    let session = JsFuture::from(web::resume_chat_session(
        definition.clone(),
        resume_options("s1", &storage),
    ))
    .await
    .expect("a new session resumes");
    let cursor = |s: &JsValue| {
        let f: js_sys::Function = Reflect::get(s, &"getCursor".into())
            .unwrap()
            .unchecked_into();
        f.call0(s).unwrap().as_f64()
    };
    assert_eq!(cursor(&session), Some(0.0));
    let lease = JsValue::from_f64(45_000.0);
    // (method, turn, expected result, cursor afterwards)
    let steps: Vec<(&str, &str, JsValue, f64)> = vec![
        ("claimTurn", "t1", JsValue::TRUE, 1.0),
        ("claimTurn", "t2", JsValue::FALSE, 1.0), // busy
        ("releaseTurn", "t1", JsValue::UNDEFINED, 2.0),
        ("claimTurn", "t1", JsValue::FALSE, 2.0), // replayed
        ("claimTurn", "t2", JsValue::TRUE, 3.0),
    ];
    for (method, turn, expected, after) in steps {
        let second = if method == "claimTurn" {
            lease.clone()
        } else {
            "completed".into()
        };
        let got = call(&session, method, &[turn.into(), second])
            .await
            .expect(method);
        assert_eq!(got, expected, "{method} {turn}");
        assert_eq!(cursor(&session), Some(after), "{method} {turn}");
    }
    let stored = settle(web::create_memory_session_storage().load("s1".into())).await;
    assert_eq!(stored, Ok(JsValue::UNDEFINED), "stores are independent");
    let other = JsFuture::from(web::resume_chat_session(
        definition,
        resume_options("s1", &storage),
    ))
    .await
    .unwrap();
    assert_eq!(
        cursor(&other),
        Some(3.0),
        "a second client resumes from the stored cursor"
    );
}

pub async fn resume_chat_session_rejects_what_it_cannot_resume() {
    let storage = web::create_memory_session_storage();
    settle(storage.save(parse(SESSION_V1), JsValue::UNDEFINED))
        .await
        .unwrap();
    let storage: JsValue = storage.into();
    let cases = [
        (
            r#"{"id":"other"}"#,
            "s1",
            "Session snapshot is incompatible with this chat definition.",
        ),
        (
            r#"{"id":"demo","revision":2}"#,
            "s1",
            "Session snapshot is incompatible with this chat definition.",
        ),
        (
            r#"{"id":"demo"}"#,
            "bad id",
            "Chat session identity is invalid.",
        ),
        (
            r#"{"id":"demo","revision":0}"#,
            "s1",
            "Chat definition revision is invalid.",
        ),
    ];
    for (definition, session_id, message) in cases {
        let err = JsFuture::from(web::resume_chat_session(
            parse(definition),
            resume_options(session_id, &storage),
        ))
        .await
        .expect_err("must reject");
        assert_eq!(error_message(&err), message, "{definition}");
        assert_eq!(
            get(&err, "code").as_string().as_deref(),
            Some("AK_CONFIG_INVALID")
        );
        assert_eq!(
            get(&err, "name").as_string().as_deref(),
            Some("ConfigError")
        );
    }
}
