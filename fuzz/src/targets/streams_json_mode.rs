//! JSON mode (`core::streams::json_mode`): splitting a JSON-stream append into messages.
//!
//! Properties, for any body:
//! - splitting never panics; a body that is not JSON is refused;
//! - a valid array body splits into exactly its items, each stored message parsing to the
//!   same JSON value as the item (number spellings and key order kept), and no whitespace
//!   outside strings is kept;
//! - any other valid body is one message equal to the body's value;
//! - the read body built from the messages (`json_array_body`) parses to the array of all of
//!   them, so a read returns what was appended;
//! - `[]` creates an empty stream on PUT and is refused on POST.

use serde_json::Value;
use turnkeep::core::limits::STREAM_JSON_DEPTH_MAX;
use turnkeep::core::streams::append::{data_len, AppendData};
use turnkeep::core::streams::json_mode::{
    flatten_json_body, json_array_body, JsonBodyError, JsonWrite,
};

use super::gen::{input, Gen, Input};

pub fn run(data: &[u8]) {
    match input(data) {
        Input::Raw(bytes) => check(bytes),
        Input::Structured(mut g) => {
            let body = body(&mut g);
            check(body.as_bytes());
        }
    }
}

fn check(body: &[u8]) {
    let parsed = serde_json::from_slice::<Value>(body);
    for write in [JsonWrite::Create, JsonWrite::Append] {
        let split = flatten_json_body(body, write);
        let Ok(value) = &parsed else {
            assert_eq!(split, Err(JsonBodyError::Invalid), "not JSON, yet accepted");
            continue;
        };
        let expected: Vec<&Value> = match value {
            Value::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        let messages = match split {
            Err(JsonBodyError::Invalid) => {
                assert!(depth(value) > STREAM_JSON_DEPTH_MAX, "valid JSON refused");
                continue;
            }
            Err(JsonBodyError::EmptyArray) => {
                assert_eq!((write, expected.len()), (JsonWrite::Append, 0));
                continue;
            }
            Ok(messages) => messages,
        };
        assert_eq!(messages.len(), expected.len(), "one message per array item");
        for (message, item) in messages.iter().zip(&expected) {
            let stored: Value = serde_json::from_str(message).expect("a stored message is JSON");
            assert_eq!(&stored, *item, "a message keeps its item's value");
            assert!(
                !has_whitespace_outside_strings(message),
                "{message:?} is not compact"
            );
        }
        let read_body = json_array_body(&messages);
        let expected_read = Value::Array(expected.into_iter().cloned().collect());
        if depth(&expected_read) <= STREAM_JSON_DEPTH_MAX {
            let read: Value = serde_json::from_str(&read_body).expect("read body");
            assert_eq!(read, expected_read, "a read returns what was appended");
        } else {
            // One level deeper than serde_json parses: check the framing instead.
            assert_eq!(read_body, format!("[{}]", messages.join(",")));
        }
        let stored_bytes = data_len(&AppendData::Json(messages.clone()));
        assert!(stored_bytes <= body.len() as u64);
    }
}

/// Nesting depth of a value (a scalar is 0, `[]` is 1).
fn depth(v: &Value) -> usize {
    match v {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// True when the text, read as serde_json writes strings, has JSON whitespace between tokens.
/// Independent of the splitter's own scanner: it walks the re-serialized tokens instead.
fn has_whitespace_outside_strings(text: &str) -> bool {
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (true, false, '"') => in_string = false,
            (true, false, _) => {}
            (false, _, '"') => in_string = true,
            (false, _, ' ' | '\t' | '\n' | '\r') => return true,
            (false, _, _) => {}
        }
    }
    false
}

/// A JSON body: an array (usually) of generated values, written with assorted whitespace,
/// sometimes nested to the depth limit, sometimes broken.
fn body(g: &mut Gen<'_>) -> String {
    let value = match g.below(8) {
        0 => g.any_value(3),
        1 => {
            let levels = g.pick(&[
                STREAM_JSON_DEPTH_MAX - 1,
                STREAM_JSON_DEPTH_MAX,
                STREAM_JSON_DEPTH_MAX + 1,
            ]);
            (0..levels).fold(Value::from(1), |acc, _| Value::Array(vec![acc]))
        }
        _ => g.list(5, |g| g.any_value(3)),
    };
    let text = spaced(g, &value);
    match g.below(10) {
        0 => g.mutate_text(&text),
        1 => format!("{text}{}", g.pick(&[",", "]", "[", " x", "\u{feff}"])),
        _ => text,
    }
}

/// The value's JSON text with random legal whitespace between tokens.
fn spaced(g: &mut Gen<'_>, v: &Value) -> String {
    match v {
        Value::Array(items) => {
            let inner: Vec<String> = items
                .iter()
                .map(|item| format!("{}{}{}", pad(g), spaced(g, item), pad(g)))
                .collect();
            format!("[{}{}]", inner.join(","), pad(g))
        }
        Value::Object(map) => {
            let inner: Vec<String> = map
                .iter()
                .map(|(k, item)| {
                    format!(
                        "{}{}{}:{}{}",
                        pad(g),
                        Value::String(k.clone()),
                        pad(g),
                        pad(g),
                        spaced(g, item)
                    )
                })
                .collect();
            format!("{{{}{}}}", inner.join(","), pad(g))
        }
        scalar => scalar.to_string(),
    }
}

fn pad(g: &mut Gen<'_>) -> &'static str {
    g.pick(&["", "", " ", "\n", "\t", "\r\n  "])
}
