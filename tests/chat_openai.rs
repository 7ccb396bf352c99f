//! OpenAI-compatible streaming: the event stream to model chunks (golden fixtures, split at
//! every byte), single-chunk translation rules, stream errors, and the request body.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

mod chat_support;

use chat_support::{counter_ids, summary, NOW_MS};
use serde_json::{json, Value};
use turnkeep::core::chat::openai::{
    request_body, translate_chunk, OpenAiError, OpenAiRequestOptions, OpenAiStream, SseError,
};
use turnkeep::core::chat::{
    Action, ChatConfig, ChatController, FinishReason, ModelChunk, ModelRequest, ToolSpec, Usage,
};
use turnkeep::core::limits::SSE_LINE_BYTES_MAX;
use turnkeep::core::protocol::decode_messages;

/// The recorded fixtures, embedded so the test also runs where there is no file system.
fn fixture(name: &str) -> &'static [u8] {
    match name {
        "openai_tool_calls.sse" => include_bytes!("fixtures/chat/openai_tool_calls.sse"),
        "openai_tool_calls.chunks.json" => {
            include_bytes!("fixtures/chat/openai_tool_calls.chunks.json")
        }
        "openai_text.sse" => include_bytes!("fixtures/chat/openai_text.sse"),
        "openai_text.chunks.json" => include_bytes!("fixtures/chat/openai_text.chunks.json"),
        other => panic!("no fixture {other}"),
    }
}

fn chunk_json(c: &ModelChunk) -> Value {
    match c {
        ModelChunk::Text(t) => json!({ "text": t }),
        ModelChunk::Reasoning(t) => json!({ "reasoning": t }),
        ModelChunk::ToolCall {
            index,
            id,
            name,
            args_delta,
        } => {
            json!({ "toolCall": { "index": index, "id": id, "name": name, "argsDelta": args_delta } })
        }
        ModelChunk::Finish { reason, usage } => json!({ "finish": {
            "reason": match reason {
                FinishReason::Stop => "stop",
                FinishReason::Length => "length",
                FinishReason::ToolCalls => "tool_calls",
                FinishReason::ContentFilter => "content_filter",
                FinishReason::Other => "other",
            },
            "usage": usage.map(|u| json!({
                "promptTokens": u.prompt_tokens, "completionTokens": u.completion_tokens, "totalTokens": u.total_tokens,
            })),
        }}),
    }
}

/// Feeds `parts` in order, then ends the body; returns every chunk as JSON.
fn translate(parts: &[&[u8]]) -> Result<Vec<Value>, OpenAiError> {
    let mut stream = OpenAiStream::new();
    let mut out = Vec::new();
    for part in parts {
        out.extend(stream.push(part)?);
    }
    out.extend(stream.end()?);
    Ok(out.iter().map(chunk_json).collect())
}

/// The recorded stream must give the golden chunks whole, split at every byte position, and
/// fed one byte at a time.
fn check_fixture(sse: &str, golden: &str) {
    let bytes = fixture(sse);
    let expected: Value = serde_json::from_slice(fixture(golden)).expect("golden JSON");
    let expected = expected.as_array().expect("golden array").clone();
    assert_eq!(translate(&[bytes]), Ok(expected.clone()), "{sse} whole");
    for cut in 0..=bytes.len() {
        assert_eq!(
            translate(&[&bytes[..cut], &bytes[cut..]]),
            Ok(expected.clone()),
            "{sse} split at {cut}"
        );
    }
    let singles: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(translate(&singles), Ok(expected), "{sse} byte by byte");
}

#[test]
fn recorded_streams_match_their_golden_chunks_at_every_split() {
    check_fixture("openai_tool_calls.sse", "openai_tool_calls.chunks.json");
    check_fixture("openai_text.sse", "openai_text.chunks.json");
}

#[test]
fn a_recorded_tool_call_stream_drives_the_controller_to_one_call() {
    let lookup = ToolSpec {
        name: "lookup".into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        requires_confirmation: false,
        host_validates: false,
    };
    let mut c = ChatController::new(
        ChatConfig {
            tools: vec![lookup],
            ..ChatConfig::default()
        },
        Vec::new(),
    );
    let mut ids = counter_ids();
    c.send("weather?", NOW_MS, &mut ids).expect("send");
    let mut stream = OpenAiStream::new();
    for chunk in stream
        .push(fixture("openai_tool_calls.sse"))
        .expect("stream")
    {
        assert_eq!(c.on_chunk(chunk), Action::Continue);
    }
    let Action::RunTools(invocations) = c.on_model_end(NOW_MS, &mut ids) else {
        panic!("RunTools")
    };
    assert_eq!(invocations.len(), 1);
    assert_eq!(invocations[0].id, "call__0_lookup_cmpl-4f0c2a7e");
    assert_eq!(
        Value::Object(invocations[0].args.clone()),
        json!({"query": "weather in Zürich"})
    );
    assert_eq!(
        summary(c.state())[2],
        r#"  call call__0_lookup_cmpl-4f0c2a7e lookup {"query":"weather in Zürich"} pending"#
    );
}

/// Expected chunks (as JSON), finish reason and usage of one translated chunk.
type Translated<'a> = (Vec<Value>, Option<&'a str>, Option<Usage>);

fn check(chunk: Value, expected: Result<Translated<'_>, OpenAiError>) {
    let got = translate_chunk(&chunk).map(|t| {
        let reason = t.finish_reason.map(|r| {
            chunk_json(&ModelChunk::Finish {
                reason: r,
                usage: None,
            })["finish"]["reason"]
                .clone()
        });
        (
            t.chunks.iter().map(chunk_json).collect::<Vec<_>>(),
            reason,
            t.usage,
        )
    });
    let expected =
        expected.map(|(chunks, reason, usage)| (chunks, reason.map(|r| json!(r)), usage));
    assert_eq!(got, expected, "chunk {chunk}");
}

#[test]
fn chunk_translation_rules() {
    let choice = |delta: Value, finish: Value| json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    check(
        choice(json!({"content": "hi"}), Value::Null),
        Ok((vec![json!({"text": "hi"})], None, None)),
    );
    check(
        choice(json!({"content": ""}), Value::Null),
        Ok((vec![], None, None)),
    );
    check(
        choice(json!({"content": null, "role": "assistant"}), Value::Null),
        Ok((vec![], None, None)),
    );
    check(
        choice(json!({}), json!("length")),
        Ok((vec![], Some("length"), None)),
    );
    check(
        choice(json!({}), json!("content_filter")),
        Ok((vec![], Some("content_filter"), None)),
    );
    check(
        choice(json!({}), json!("function_call")),
        Ok((vec![], Some("tool_calls"), None)),
    );
    check(
        choice(json!({}), json!("eos")),
        Ok((vec![], Some("other"), None)),
    );
    check(json!({"choices": []}), Ok((vec![], None, None)));
    check(json!({}), Ok((vec![], None, None)));
    check(
        json!({"choices": [], "usage": {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5}}),
        Ok((vec![], None, Some(Usage::new(2, 3)))),
    );
    check(
        json!({"usage": {"prompt_tokens": 2, "completion_tokens": 3}}),
        Ok((vec![], None, Some(Usage::new(2, 3)))),
    );
    check(
        choice(
            json!({"tool_calls": [
                {"index": 1, "function": {"arguments": "{}"}},
                {"id": "c", "function": {"name": "f"}},
            ]}),
            Value::Null,
        ),
        Ok((
            vec![
                json!({"toolCall": {"index": 1, "id": null, "name": null, "argsDelta": "{}"}}),
                json!({"toolCall": {"index": 1, "id": "c", "name": "f", "argsDelta": ""}}),
            ],
            None,
            None,
        )),
    );
    check(
        choice(
            json!({"content": "a", "tool_calls": [{"index": 0, "id": "", "function": {"name": "", "arguments": "x"}}]}),
            Value::Null,
        ),
        Ok((
            vec![
                json!({"text": "a"}),
                json!({"toolCall": {"index": 0, "id": null, "name": null, "argsDelta": "x"}}),
            ],
            None,
            None,
        )),
    );
    // Wrong shapes are rejected, never guessed at.
    for bad in [
        json!([]),
        json!("x"),
        json!({"choices": {}}),
        json!({"choices": [1]}),
        choice(json!([]), Value::Null),
        choice(json!({"content": 5}), Value::Null),
        choice(json!({}), json!(1)),
        choice(json!({"tool_calls": {}}), Value::Null),
        choice(json!({"tool_calls": [{"index": -1}]}), Value::Null),
        choice(
            json!({"tool_calls": [{"index": 4_294_967_296u64}]}),
            Value::Null,
        ),
        choice(
            json!({"tool_calls": [{"index": 0, "function": "f"}]}),
            Value::Null,
        ),
        choice(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": {}}}]}),
            Value::Null,
        ),
        json!({"usage": {"prompt_tokens": -1}}),
        json!({"usage": {"prompt_tokens": 9_007_199_254_740_992u64}}),
        json!({"usage": 3}),
    ] {
        check(bad, Err(OpenAiError::InvalidChunk));
    }
    check(
        json!({"error": {"message": "secret upstream detail"}}),
        Err(OpenAiError::Provider),
    );
}

#[test]
fn stream_endings_and_errors() {
    let text = br#"data: {"choices":[{"delta":{"content":"a"}}]}"#;
    let stop = br#"data: {"choices":[{"delta":{},"finish_reason":"stop"}]}"#;
    let join = |parts: &[&[u8]]| {
        parts
            .iter()
            .flat_map(|p| p.iter().chain(b"\n\n"))
            .copied()
            .collect::<Vec<u8>>()
    };
    // [DONE] without a finish reason means stop.
    assert_eq!(
        translate(&[&join(&[text, b"data: [DONE]"])]),
        Ok(vec![
            json!({"text": "a"}),
            json!({"finish": {"reason": "stop", "usage": null}})
        ])
    );
    // A finish reason without [DONE]: the finish comes when the body ends.
    let mut s = OpenAiStream::new();
    assert_eq!(s.push(&join(&[text, stop])).map(|c| c.len()), Ok(1));
    assert!(!s.is_finished());
    assert_eq!(
        s.end(),
        Ok(vec![ModelChunk::Finish {
            reason: FinishReason::Stop,
            usage: None
        }])
    );
    assert!(s.is_finished());
    // Neither: truncated.
    assert_eq!(translate(&[&join(&[text])]), Err(OpenAiError::Truncated));
    assert_eq!(
        translate(&[b"data: {\"choices\":[]"]),
        Err(OpenAiError::Truncated)
    );
    // After [DONE] nothing more is read, not even garbage.
    assert_eq!(
        translate(&[&join(&[b"data: [DONE]", b"data: not json"])]).map(|c| c.len()),
        Ok(1)
    );
    // Broken data, provider errors, oversized lines.
    assert_eq!(
        translate(&[&join(&[b"data: {not json"])]),
        Err(OpenAiError::InvalidChunk)
    );
    assert_eq!(
        translate(&[&join(&[b"event: error\ndata: {}"])]),
        Err(OpenAiError::Provider)
    );
    let long = vec![b'a'; SSE_LINE_BYTES_MAX + 1];
    assert_eq!(
        translate(&[&long]),
        Err(OpenAiError::Sse(SseError::LineTooLong))
    );
    // Error messages are fixed texts.
    assert!(!OpenAiError::Provider.message().contains("secret"));
}

#[test]
fn request_body_maps_roles_tool_calls_and_tools() {
    let messages = decode_messages(&json!([
        {"id": "s", "role": "system", "content": "be brief", "status": "complete", "createdAt": "2026-07-11T03:00:00.000Z"},
        {"id": "u", "role": "user", "content": "hi", "status": "complete", "createdAt": "2026-07-11T03:00:00.000Z"},
        {"id": "a", "role": "assistant", "content": "", "status": "complete", "createdAt": "2026-07-11T03:00:00.000Z",
         "toolCalls": [
            {"id": "c1", "name": "lookup", "args": {"query": "x"}, "status": "complete", "result": "r"},
            {"id": "c2", "name": "transfer", "args": {"amount": 5}, "status": "requires_confirmation"}
         ]},
        {"id": "t", "role": "tool", "content": "r", "status": "complete", "createdAt": "2026-07-11T03:00:00.000Z", "toolCallId": "c1"},
        {"id": "t2", "role": "tool", "content": "orphan", "status": "complete", "createdAt": "2026-07-11T03:00:00.000Z"},
        {"id": "w", "role": "assistant", "content": "", "status": "complete", "createdAt": "2026-07-11T03:00:00.000Z",
         "toolCalls": [{"id": "c3", "name": "transfer", "args": {}, "status": "requires_confirmation"}]},
        {"id": "b", "role": "assistant", "content": "found r", "status": "complete", "createdAt": "2026-07-11T03:00:00.000Z"}
    ]))
    .expect("messages");
    let tools = vec![ToolSpec {
        name: "lookup".into(),
        description: "Looks up.".into(),
        parameters: json!({"type": "object", "properties": {"query": {"type": "string"}}}),
        requires_confirmation: false,
        host_validates: false,
    }];
    let request = ModelRequest::new(messages, tools);
    let options = OpenAiRequestOptions {
        model: "m-1".into(),
        include_usage: true,
    };
    let expected = json!({
        "model": "m-1",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{\"query\":\"x\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": "r"},
            {"role": "assistant", "content": "found r"}
        ],
        "stream": true,
        "tools": [{"type": "function", "function": {
            "name": "lookup", "description": "Looks up.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}
        }}],
        "stream_options": {"include_usage": true}
    });
    let body = request_body(&request, &options);
    assert_eq!(body.to_string(), expected.to_string());
    // Without tools or usage, those keys are absent.
    let bare = request_body(
        &ModelRequest::new(vec![], vec![]),
        &OpenAiRequestOptions {
            model: "m".into(),
            include_usage: false,
        },
    );
    assert_eq!(bare, json!({"model": "m", "messages": [], "stream": true}));
}

/// Found by fuzzing (fuzz/regressions/openai_stream/): a read whose second event is invalid
/// dropped the text of its first event, so the chunks depended on how the network cut the body.
#[test]
fn a_failure_inside_one_read_keeps_the_chunks_before_it() {
    let body = b"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {not json\n\n";
    let mut whole = OpenAiStream::new();
    assert_eq!(whole.push(body), Ok(vec![ModelChunk::Text("a".into())]));
    assert_eq!(whole.failure(), Some(OpenAiError::InvalidChunk));
    assert_eq!(
        whole.push(b"data: [DONE]\n\n"),
        Err(OpenAiError::InvalidChunk)
    );
    assert_eq!(whole.end(), Err(OpenAiError::InvalidChunk));
    // Cut between the two events: the same chunk, then the same failure.
    let cut = body.iter().position(|b| *b == b'\n').expect("newline") + 2;
    let mut split = OpenAiStream::new();
    assert_eq!(
        split.push(&body[..cut]),
        Ok(vec![ModelChunk::Text("a".into())])
    );
    assert_eq!(split.failure(), None);
    assert_eq!(split.push(&body[cut..]), Err(OpenAiError::InvalidChunk));
    assert_eq!(split.failure(), Some(OpenAiError::InvalidChunk));
}

#[test]
fn request_body_carries_the_settings_the_wire_has() {
    use turnkeep::core::chat::{CallSettings, Setting};
    let messages = decode_messages(&json!([
        {"id": "u", "role": "user", "content": "hi", "status": "complete", "createdAt": "2026-07-11T03:00:00.000Z"}
    ]))
    .expect("valid");
    let tools = vec![ToolSpec {
        name: "lookup".into(),
        description: "Looks up.".into(),
        parameters: json!({"type": "object"}),
        requires_confirmation: false,
        host_validates: false,
    }];
    let mut settings = CallSettings::default();
    for (setting, value) in [
        (Setting::Instructions, json!("Be brief.")),
        (Setting::Temperature, json!(0.25)),
        (Setting::MaxOutputTokens, json!(64)),
        (Setting::TopP, json!(0.5)),
        (Setting::StopSequences, json!(["END", "STOP"])),
        (
            Setting::ToolChoice,
            json!({"type": "tool", "toolName": "lookup"}),
        ),
        (
            Setting::ProviderOptions,
            json!({"openai": {"store": false}}),
        ),
    ] {
        settings.set(setting, "x", &value).expect("valid");
    }
    let request = ModelRequest {
        messages,
        tools,
        settings,
    };
    let options = OpenAiRequestOptions {
        model: "m".into(),
        include_usage: false,
    };
    let body = request_body(&request, &options);
    assert_eq!(
        body.to_string(),
        json!({
            "model": "m",
            "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
            "stream": true,
            "tools": [{"type": "function", "function": {"name": "lookup", "description": "Looks up.", "parameters": {"type": "object"}}}],
            "tool_choice": {"type": "function", "function": {"name": "lookup"}},
            "temperature": 0.25,
            "max_tokens": 64,
            "top_p": 0.5,
            "stop": ["END", "STOP"]
        })
        .to_string(),
        "providerOptions have no place on this wire"
    );
}
