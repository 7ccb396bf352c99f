//! AgentsKit adapter chunks (`StreamChunk`) -> model chunks: a table of chunk sequences and the
//! model chunks they become, including the failures.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use serde_json::{json, Value};
use turnkeep::core::chat::agentskit::{AgentsKitChunkError, AgentsKitStream};
use turnkeep::core::chat::{FinishReason, ModelChunk, Usage};

fn text(s: &str) -> ModelChunk {
    ModelChunk::Text(s.into())
}

fn call(index: u32, id: &str, name: &str, args: &str) -> ModelChunk {
    ModelChunk::ToolCall {
        index,
        id: Some(id.into()),
        name: Some(name.into()),
        args_delta: args.into(),
    }
}

fn finish(reason: FinishReason, usage: Option<Usage>) -> ModelChunk {
    ModelChunk::Finish { reason, usage }
}

/// Pushes every chunk, then ends the stream; the model chunks, or the first error.
fn run(chunks: &[Value]) -> Result<Vec<ModelChunk>, AgentsKitChunkError> {
    let mut stream = AgentsKitStream::new();
    let mut out = Vec::new();
    for chunk in chunks {
        out.extend(stream.push(chunk)?);
    }
    out.extend(stream.end());
    Ok(out)
}

fn check(name: &str, chunks: &[Value], expected: Result<Vec<ModelChunk>, AgentsKitChunkError>) {
    assert_eq!(run(chunks), expected, "{name}");
}

#[test]
fn chunks_translate_as_the_table_says() {
    let usage = Usage {
        prompt_tokens: 3,
        completion_tokens: 4,
        total_tokens: 7,
    };
    check(
        "text, usage, done",
        &[
            json!({ "type": "text", "content": "Hel" }),
            json!({ "type": "text", "content": "lo" }),
            json!({ "type": "usage", "usage": { "promptTokens": 3, "completionTokens": 4, "totalTokens": 7 } }),
            json!({ "type": "done" }),
        ],
        Ok(vec![
            text("Hel"),
            text("lo"),
            finish(FinishReason::Stop, Some(usage)),
        ]),
    );
    check(
        "no done: the end of the stream finishes",
        &[json!({ "type": "text", "content": "a" })],
        Ok(vec![text("a"), finish(FinishReason::Stop, None)]),
    );
    check(
        "whole tool calls, indexed in order; the finish says tool-calls",
        &[
            json!({ "type": "tool_call", "toolCall": { "id": "c1", "name": "lookup", "args": "{\"q\":\"x\"}" } }),
            json!({ "type": "tool_call", "toolCall": { "id": "c2", "name": "lookup" } }),
            json!({ "type": "done" }),
        ],
        Ok(vec![
            call(0, "c1", "lookup", "{\"q\":\"x\"}"),
            call(1, "c2", "lookup", "{}"),
            finish(FinishReason::ToolCalls, None),
        ]),
    );
    check(
        "tool results, unknown types and empty text or reasoning add nothing",
        &[
            json!({ "type": "tool_result", "toolCall": { "id": "c1" } }),
            json!({ "type": "future-thing" }),
            json!({ "type": "text", "content": "" }),
            json!({ "type": "text" }),
            json!({ "type": "reasoning", "content": "" }),
        ],
        Ok(vec![finish(FinishReason::Stop, None)]),
    );
    check(
        "reasoning is reasoning text, beside the text",
        &[
            json!({ "type": "reasoning", "content": "hmm, " }),
            json!({ "type": "reasoning", "content": "cats" }),
            json!({ "type": "text", "content": "Cats." }),
        ],
        Ok(vec![
            ModelChunk::Reasoning("hmm, ".into()),
            ModelChunk::Reasoning("cats".into()),
            text("Cats."),
            finish(FinishReason::Stop, None),
        ]),
    );
    check(
        "a reasoning chunk whose content is not a string fails",
        &[json!({ "type": "reasoning", "content": 3 })],
        Err(AgentsKitChunkError::Invalid(
            "a text or reasoning chunk's content must be a string",
        )),
    );
    check(
        "nothing after done is read",
        &[
            json!({ "type": "done" }),
            json!({ "type": "text", "content": "late" }),
            json!(42),
        ],
        Ok(vec![finish(FinishReason::Stop, None)]),
    );
}

#[test]
fn bad_chunks_fail_the_call_without_quoting_them() {
    let secret = "SECRET-4711";
    let cases = [
        json!(secret),
        json!({ "content": secret }),
        json!({ "type": "text", "content": [secret] }),
        json!({ "type": "tool_call", "toolCall": { "id": "", "name": secret } }),
        json!({ "type": "tool_call", "toolCall": { "id": "c1", "name": "n", "args": { "q": secret } } }),
        json!({ "type": "usage", "usage": { "promptTokens": -1, "completionTokens": 0 } }),
        json!({ "type": "error", "content": secret }),
    ];
    for chunk in cases {
        let error = run(&[json!({ "type": "text", "content": "ok" }), chunk.clone()])
            .expect_err(&format!("{chunk} must fail"));
        assert!(
            !error.message().contains(secret),
            "{chunk}: {}",
            error.message()
        );
    }
    assert_eq!(
        run(&[json!({ "type": "error", "content": "upstream said no" })]),
        Err(AgentsKitChunkError::Reported)
    );
}
