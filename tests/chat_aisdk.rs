//! AI SDK language models, the pure half: stream parts (as the shell reads them) → model
//! chunks, and a model request → `doStream`'s call options, V2 / V3 / V4. Tables of cases.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use serde_json::{json, Value};
use turnkeep::core::chat::aisdk::{call_options, AiSdkError, AiSdkStream, SpecVersion, StreamPart};
use turnkeep::core::chat::{
    CallSettings, FinishReason, ModelChunk, ModelRequest, Setting, ToolSpec, Usage,
};
use turnkeep::core::protocol::{decode_messages, Message};

fn part(kind: &str) -> StreamPart {
    StreamPart::of(kind)
}

fn delta(kind: &str, text: &str) -> StreamPart {
    StreamPart {
        delta: Some(text.into()),
        ..part(kind)
    }
}

fn tool_call(id: &str, name: &str, input: &str) -> StreamPart {
    StreamPart {
        tool_call_id: Some(id.into()),
        tool_name: Some(name.into()),
        input: Some(input.into()),
        ..part("tool-call")
    }
}

fn finish(reason: &str, input: Option<f64>, output: Option<f64>, total: Option<f64>) -> StreamPart {
    StreamPart {
        finish_reason: Some(reason.into()),
        input_tokens: input,
        output_tokens: output,
        total_tokens: total,
        ..part("finish")
    }
}

fn usage(prompt: u64, completion: u64, total: u64) -> Option<Usage> {
    Some(Usage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: total,
    })
}

/// Pushes every part, then ends the stream: the chunks, or the first failure.
fn run(parts: &[StreamPart]) -> Result<Vec<ModelChunk>, AiSdkError> {
    let mut stream = AiSdkStream::new();
    let mut out = Vec::new();
    for p in parts {
        out.extend(stream.push(p)?);
    }
    stream.end()?;
    Ok(out)
}

#[test]
fn stream_parts_translate_as_the_table_says() {
    let text = |t: &str| ModelChunk::Text(t.into());
    let stop = |u| ModelChunk::Finish {
        reason: FinishReason::Stop,
        usage: u,
    };
    let cases: Vec<(&str, Vec<StreamPart>, Result<Vec<ModelChunk>, AiSdkError>)> = vec![
        (
            "text of every block, reasoning beside it; the metadata parts say nothing",
            vec![
                part("stream-start"),
                part("response-metadata"),
                part("reasoning-start"),
                delta("reasoning-delta", "hmm"),
                delta("reasoning-delta", ""),
                part("reasoning-end"),
                part("text-start"),
                delta("text-delta", "Hel"),
                delta("text-delta", ""),
                delta("text-delta", "lo"),
                part("text-end"),
                part("source"),
                part("file"),
                part("custom"),
                part("raw"),
                part("ping"),
                part("something-new"),
                finish("stop", Some(7.0), Some(3.0), None),
            ],
            Ok(vec![
                ModelChunk::Reasoning("hmm".into()),
                text("Hel"),
                text("lo"),
                stop(usage(7, 3, 10)),
            ]),
        ),
        (
            "V2's flat usage keeps its own total",
            vec![delta("text-delta", "a"), finish("stop", Some(4.0), Some(2.0), Some(9.0))],
            Ok(vec![text("a"), stop(usage(4, 2, 9))]),
        ),
        (
            "no usage at all is no usage; one unknown count is 0",
            vec![finish("stop", None, None, None)],
            Ok(vec![stop(None)]),
        ),
        (
            "a count that is not an integer >= 0 is unknown",
            vec![finish("stop", Some(-1.0), Some(2.5), Some(f64::NAN))],
            Ok(vec![stop(None)]),
        ),
        (
            "tool calls whole from tool-call (its input is JSON text); tool-input parts are a preview",
            vec![
                part("tool-input-start"),
                delta("tool-input-delta", "{\"q\""),
                part("tool-input-end"),
                tool_call("c1", "lookup", "{\"q\":\"x\"}"),
                tool_call("c2", "lookup", ""),
                finish("tool-calls", None, Some(1.0), None),
            ],
            Ok(vec![
                ModelChunk::ToolCall { index: 0, id: Some("c1".into()), name: Some("lookup".into()), args_delta: "{\"q\":\"x\"}".into() },
                ModelChunk::ToolCall { index: 1, id: Some("c2".into()), name: Some("lookup".into()), args_delta: String::new() },
                ModelChunk::Finish { reason: FinishReason::ToolCalls, usage: usage(0, 1, 1) },
            ]),
        ),
        (
            "a tool the provider ran itself is not the host's to run",
            vec![
                StreamPart { provider_executed: true, ..tool_call("ws", "web_search", "{}") },
                part("tool-result"),
                part("tool-approval-request"),
                finish("stop", None, None, None),
            ],
            Ok(vec![stop(None)]),
        ),
        (
            "finish reasons: length, content-filter; other, unknown and new ones are other",
            vec![finish("length", None, None, None)],
            Ok(vec![ModelChunk::Finish { reason: FinishReason::Length, usage: None }]),
        ),
        (
            "content-filter",
            vec![finish("content-filter", None, None, None)],
            Ok(vec![ModelChunk::Finish { reason: FinishReason::ContentFilter, usage: None }]),
        ),
        (
            "unknown",
            vec![finish("unknown", None, None, None)],
            Ok(vec![ModelChunk::Finish { reason: FinishReason::Other, usage: None }]),
        ),
        (
            "nothing after the finish is read",
            vec![finish("stop", None, None, None), delta("text-delta", "late"), part("error")],
            Ok(vec![stop(None)]),
        ),
        ("an error part fails the call", vec![delta("text-delta", "par"), part("error")], Err(AiSdkError::Reported)),
        ("finish reason error", vec![finish("error", None, None, None)], Err(AiSdkError::FinishedInError)),
        ("finish reason interrupted (V4)", vec![finish("interrupted", None, None, None)], Err(AiSdkError::FinishedInError)),
        ("an end before the finish is truncation", vec![delta("text-delta", "par")], Err(AiSdkError::Truncated)),
        (
            "a delta without its text",
            vec![part("text-delta")],
            Err(AiSdkError::InvalidPart("a delta part needs a string delta")),
        ),
        (
            "a tool call without a name",
            vec![StreamPart { tool_name: None, ..tool_call("c", "x", "{}") }],
            Err(AiSdkError::InvalidPart("a tool-call part needs a toolCallId, a toolName and its input as JSON text")),
        ),
    ];
    for (name, parts, expected) in cases {
        assert_eq!(run(&parts), expected, "{name}");
    }
}

fn messages(value: Value) -> Vec<Message> {
    decode_messages(&value).expect("valid messages")
}

const AT: &str = "2026-07-11T03:00:00.000Z";

fn conversation() -> Vec<Message> {
    messages(json!([
        { "id": "s0", "role": "system", "content": "Known facts.", "status": "complete", "createdAt": AT },
        { "id": "u1", "role": "user", "content": "look", "status": "complete", "createdAt": AT, "parts": [
            { "type": "text", "text": "look at these" },
            { "type": "image", "source": "data:image/png;base64,AAAA" },
            { "type": "file", "source": "https://example.com/a.pdf", "mimeType": "application/pdf", "filename": "a.pdf" },
            { "type": "audio", "source": "data:,hi%21" },
            { "type": "video", "source": "QkJC", "mimeType": "video/mp4" }
        ] },
        { "id": "a1", "role": "assistant", "content": "Looking.", "status": "complete", "createdAt": AT,
          "metadata": { "reasoning": "not sent back" },
          "toolCalls": [
            { "id": "c1", "name": "lookup", "args": { "q": "x" }, "status": "complete", "result": "r1" },
            { "id": "c2", "name": "lookup", "args": { "q": "y" }, "status": "error", "error": "bad" },
            { "id": "c3", "name": "transfer", "args": { "amount": 5 }, "status": "requires_confirmation" }
          ] },
        { "id": "t1", "role": "tool", "content": "r1", "status": "complete", "createdAt": AT, "toolCallId": "c1" },
        { "id": "t2", "role": "tool", "content": "bad", "status": "error", "createdAt": AT, "toolCallId": "c2" },
        { "id": "t9", "role": "tool", "content": "orphan", "status": "complete", "createdAt": AT, "toolCallId": "nope" },
        { "id": "a2", "role": "assistant", "content": "", "status": "complete", "createdAt": AT },
        { "id": "u2", "role": "user", "content": "thanks", "status": "complete", "createdAt": AT }
    ]))
}

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "lookup".into(),
        description: "Looks up.".into(),
        parameters: json!({ "type": "object" }),
        requires_confirmation: false,
        host_validates: false,
    }]
}

fn settings() -> CallSettings {
    let mut s = CallSettings::default();
    for (setting, value) in [
        (Setting::Instructions, json!("Be brief.")),
        (Setting::Temperature, json!(0.5)),
        (Setting::MaxOutputTokens, json!(100)),
        (Setting::TopP, json!(0.9)),
        (Setting::StopSequences, json!(["END"])),
        (
            Setting::ToolChoice,
            json!({ "type": "tool", "toolName": "lookup" }),
        ),
        (
            Setting::ProviderOptions,
            json!({ "anthropic": { "cacheControl": { "type": "ephemeral" } } }),
        ),
    ] {
        s.set(setting, "x", &value).expect("valid");
    }
    s
}

#[test]
fn a_request_becomes_the_prompt_and_options_each_spec_version_takes() {
    let request = ModelRequest {
        messages: conversation(),
        tools: tools(),
        settings: settings(),
    };
    let user = |data_png: Value, data_pdf: Value, data_audio: Value, data_video: Value| {
        json!({ "role": "user", "content": [
            { "type": "text", "text": "look at these" },
            { "type": "file", "mediaType": "image/png", "data": data_png },
            { "type": "file", "mediaType": "application/pdf", "data": data_pdf, "filename": "a.pdf" },
            { "type": "file", "mediaType": "audio/*", "data": data_audio },
            { "type": "file", "mediaType": "video/mp4", "data": data_video }
        ] })
    };
    let rest = json!([
        { "role": "assistant", "content": [
            { "type": "text", "text": "Looking." },
            { "type": "tool-call", "toolCallId": "c1", "toolName": "lookup", "input": { "q": "x" } },
            { "type": "tool-call", "toolCallId": "c2", "toolName": "lookup", "input": { "q": "y" } }
        ] },
        { "role": "tool", "content": [
            { "type": "tool-result", "toolCallId": "c1", "toolName": "lookup", "output": { "type": "text", "value": "r1" } },
            { "type": "tool-result", "toolCallId": "c2", "toolName": "lookup", "output": { "type": "error-text", "value": "bad" } }
        ] },
        { "role": "user", "content": [{ "type": "text", "text": "thanks" }] }
    ]);
    let expected = |user: Value| {
        let mut prompt = vec![
            json!({ "role": "system", "content": "Be brief." }),
            json!({ "role": "system", "content": "Known facts." }),
            user,
        ];
        prompt.extend(rest.as_array().cloned().unwrap_or_default());
        json!({
            "prompt": prompt,
            "tools": [{ "type": "function", "name": "lookup", "description": "Looks up.", "inputSchema": { "type": "object" } }],
            "toolChoice": { "type": "tool", "toolName": "lookup" },
            "temperature": 0.5,
            "maxOutputTokens": 100,
            "topP": 0.9,
            "stopSequences": ["END"],
            "providerOptions": { "anthropic": { "cacheControl": { "type": "ephemeral" } } }
        })
    };
    // "hi!" as base64, from the percent-encoded data URL.
    let v4 = call_options(&request, SpecVersion::V4);
    assert_eq!(
        v4.value,
        expected(user(
            json!({ "type": "data", "data": "AAAA" }),
            json!({ "type": "url", "url": "https://example.com/a.pdf" }),
            json!({ "type": "data", "data": "aGkh" }),
            json!({ "type": "data", "data": "QkJC" }),
        ))
    );
    assert_eq!(v4.urls, vec!["/prompt/2/content/2/data/url".to_owned()]);
    for version in [SpecVersion::V3, SpecVersion::V2] {
        let options = call_options(&request, version);
        assert_eq!(
            options.value,
            expected(user(
                json!("AAAA"),
                json!("https://example.com/a.pdf"),
                json!("aGkh"),
                json!("QkJC")
            )),
            "{version:?}"
        );
        assert_eq!(
            options.urls,
            vec!["/prompt/2/content/2/data".to_owned()],
            "{version:?}"
        );
    }
}

#[test]
fn a_bare_request_has_only_its_prompt() {
    let request = ModelRequest::new(
        messages(
            json!([{ "id": "u", "role": "user", "content": "hi", "status": "complete", "createdAt": AT }]),
        ),
        Vec::new(),
    );
    let options = call_options(&request, SpecVersion::V4);
    assert_eq!(
        options.value,
        json!({ "prompt": [{ "role": "user", "content": [{ "type": "text", "text": "hi" }] }] })
    );
    // A tool choice without tools is not sent.
    let mut with_choice = request.clone();
    with_choice
        .settings
        .set(Setting::ToolChoice, "x", &json!("required"))
        .expect("valid");
    assert_eq!(
        call_options(&with_choice, SpecVersion::V4)
            .value
            .get("toolChoice"),
        None
    );
}
