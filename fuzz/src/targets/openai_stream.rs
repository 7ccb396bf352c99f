//! The OpenAI-compatible stream translator (`core::chat::openai::stream`): response bytes of a
//! `chat/completions` stream in, model chunks out.
//!
//! Properties, for any response body cut into any pieces:
//! - translating never panics, and the chunks and the outcome (finished, failed with which
//!   error, truncated) do not depend on where the body was cut;
//! - exactly one `Finish` ends a successful stream, nothing follows it, and later bytes and a
//!   second `end()` add nothing;
//! - text chunks are never empty;
//! - a stream past an event-stream size limit stays failed.

use serde_json::{json, Value};
use turnkeep::core::chat::model::ModelChunk;
use turnkeep::core::chat::openai::{translate_chunk, OpenAiError, OpenAiStream};

use super::gen::{input, Gen, Input};

pub fn run(data: &[u8]) {
    match input(data) {
        Input::Raw(bytes) => {
            check(bytes, &[bytes.len() / 2]);
            if let Ok(value) = serde_json::from_slice::<Value>(bytes) {
                let _ = translate_chunk(&value);
            }
        }
        Input::Structured(mut g) => {
            let body = body(&mut g);
            let cuts: Vec<usize> = (0..g.below(6)).map(|_| g.below(body.len() + 1)).collect();
            check(&body, &cuts);
        }
    }
}

/// What one run of the translator produced.
#[derive(Debug, PartialEq)]
struct Outcome {
    chunks: Vec<ModelChunk>,
    error: Option<OpenAiError>,
}

fn translate(body: &[u8], cuts: &[usize]) -> Outcome {
    let mut cuts = cuts.to_vec();
    cuts.sort_unstable();
    let mut stream = OpenAiStream::new();
    let mut chunks = Vec::new();
    let mut at = 0;
    for cut in cuts.into_iter().chain([body.len()]) {
        match stream.push(&body[at..cut]) {
            Ok(more) => chunks.extend(more),
            Err(e) => {
                if let OpenAiError::Sse(_) = e {
                    let again = stream.push(b"data: [DONE]\n\n");
                    assert_eq!(again, Err(e), "a stream past a size limit stays failed");
                }
                return Outcome {
                    chunks,
                    error: Some(e),
                };
            }
        }
        at = cut;
    }
    match stream.end() {
        Ok(more) => chunks.extend(more),
        Err(e) => {
            return Outcome {
                chunks,
                error: Some(e),
            }
        }
    }
    assert!(stream.is_finished());
    assert_eq!(stream.end(), Ok(Vec::new()), "a second end adds nothing");
    assert_eq!(
        stream.push(b"data: {}\n\n"),
        Ok(Vec::new()),
        "nothing after the finish"
    );
    Outcome {
        chunks,
        error: None,
    }
}

fn check(body: &[u8], cuts: &[usize]) {
    let whole = translate(body, &[]);
    let pieces = translate(body, cuts);
    assert_eq!(
        pieces, whole,
        "the outcome depends on where the body was cut"
    );
    let finishes = whole
        .chunks
        .iter()
        .filter(|c| matches!(c, ModelChunk::Finish { .. }))
        .count();
    match whole.error {
        None => {
            assert_eq!(finishes, 1, "one Finish ends a stream");
            assert!(
                matches!(whole.chunks.last(), Some(ModelChunk::Finish { .. })),
                "Finish is last"
            );
        }
        Some(_) => assert_eq!(finishes, 0, "a failed stream never finished"),
    }
    for chunk in &whole.chunks {
        if let ModelChunk::Text(text) = chunk {
            assert!(!text.is_empty(), "empty text chunk");
        }
    }
}

/// A response body: `data:` events carrying chunks (mostly well-formed), comments, provider
/// errors, `[DONE]`, sometimes cut short.
fn body(g: &mut Gen<'_>) -> Vec<u8> {
    let mut out = String::new();
    for _ in 0..g.below(8) {
        let event = match g.below(12) {
            0 => ": OPENROUTER PROCESSING\n\n".to_owned(),
            1 => "data: [DONE]\n\n".to_owned(),
            2 => "event: error\ndata: {\"message\":\"overloaded\"}\n\n".to_owned(),
            3 => format!("data: {}\n\n", g.string().replace(['\r', '\n'], "")),
            _ => {
                let chunk = chunk(g);
                format!("data: {}\n\n", chunk)
            }
        };
        out.push_str(&event);
    }
    let mut bytes = out.into_bytes();
    if g.chance(20) {
        let keep = g.below(bytes.len() + 1);
        bytes.truncate(keep);
    }
    bytes
}

/// A `chat.completion.chunk`, mostly well-formed.
fn chunk(g: &mut Gen<'_>) -> Value {
    let mut delta = Vec::new();
    if g.chance(60) {
        delta.push((
            "content",
            if g.chance(90) {
                Value::String(g.string())
            } else {
                Value::Null
            },
        ));
    }
    if g.chance(30) {
        delta.push(("tool_calls", g.list(2, tool_call)));
    }
    let delta = g.object(delta);
    let finish = g.pick(&[
        Value::Null,
        Value::Null,
        json!("stop"),
        json!("tool_calls"),
        json!("length"),
        json!("weird"),
    ]);
    let choice = {
        let fields = vec![
            ("index", json!(0)),
            ("delta", delta),
            ("finish_reason", finish),
        ];
        g.object(fields)
    };
    let mut fields = vec![
        ("id", json!("chatcmpl-1")),
        ("object", json!("chat.completion.chunk")),
        (
            "choices",
            if g.chance(85) {
                Value::Array(vec![choice])
            } else {
                json!([])
            },
        ),
    ];
    if g.chance(20) {
        let usage = {
            let fields = vec![
                ("prompt_tokens", g.uint_value()),
                ("completion_tokens", g.uint_value()),
                ("total_tokens", g.uint_value()),
            ];
            g.object(fields)
        };
        fields.push(("usage", usage));
    }
    if g.chance(5) {
        fields.push(("error", json!({"message": "rate limited"})));
    }
    g.object(fields)
}

fn tool_call(g: &mut Gen<'_>) -> Value {
    let function = {
        let fields = vec![
            ("name", json!(g.pick(&["lookup", "", "get_weather"]))),
            (
                "arguments",
                Value::String(g.pick(&["{\"q\":", "\"x\"}", "", "{}"]).to_owned()),
            ),
        ];
        g.object(fields)
    };
    let index = if g.chance(80) {
        json!(g.below(3))
    } else {
        g.uint_value()
    };
    {
        let fields = vec![
            ("index", index),
            ("id", json!(g.pick(&["call_1", "", "call_2"]))),
            ("type", json!("function")),
            ("function", function),
        ];
        g.object(fields)
    }
}
