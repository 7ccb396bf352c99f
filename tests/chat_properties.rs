//! Property: whatever a model or tool sends, in whatever order, the controller never panics,
//! its revision moves exactly when its state does, and every state is a valid wire snapshot.
//! Host only: proptest is a host dev-dependency.
#![cfg(not(target_arch = "wasm32"))]

mod chat_support;

use chat_support::{counter_ids, NOW_MS};
use proptest::prelude::*;
use serde_json::json;
use turnkeep::core::chat::openai::{OpenAiError, OpenAiStream};
use turnkeep::core::chat::{
    Action, ChatConfig, ChatController, ChatStatus, FinishReason, ModelChunk, ToolSpec, Usage,
};
use turnkeep::core::limits::INTEGER_SAFE_MAX;
use turnkeep::core::protocol::{decode_messages, messages_to_value};

#[derive(Clone, Debug)]
enum Input {
    Chunk(ModelChunk),
    ModelEnd,
    ModelError,
    ToolStarted(usize),
    ToolResult(usize, bool),
    Stop,
}

fn pick<T: Clone + std::fmt::Debug + 'static>(items: &'static [T]) -> impl Strategy<Value = T> {
    proptest::sample::select(items)
}

fn chunk() -> impl Strategy<Value = ModelChunk> {
    let text = pick(&["", "a", " word", "é漢", "\n"]).prop_map(|t| ModelChunk::Text(t.into()));
    let call = (
        0u32..40,
        proptest::option::of(pick(&["a", "b", ""])),
        proptest::option::of(pick(&["lookup", "transfer", "nope", ""])),
        pick(&["", "{", "}", "\"q\":", "\"x\"", "[1]", "{}", "null", "  "]),
    )
        .prop_map(|(index, id, name, args)| ModelChunk::ToolCall {
            index,
            id: id.map(Into::into),
            name: name.map(Into::into),
            args_delta: args.into(),
        });
    let finish = (
        pick(&[
            FinishReason::Stop,
            FinishReason::Length,
            FinishReason::ToolCalls,
            FinishReason::ContentFilter,
            FinishReason::Other,
        ]),
        proptest::option::of((0u64..5, prop_oneof![0u64..5, Just(u64::MAX)])),
    )
        .prop_map(|(reason, usage)| ModelChunk::Finish {
            reason,
            usage: usage.map(|(p, c)| Usage::new(p, c)),
        });
    prop_oneof![4 => text, 4 => call, 1 => finish]
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        8 => chunk().prop_map(Input::Chunk),
        3 => Just(Input::ModelEnd),
        1 => Just(Input::ModelError),
        2 => (0usize..8).prop_map(Input::ToolStarted),
        4 => ((0usize..8), any::<bool>()).prop_map(|(i, ok)| Input::ToolResult(i, ok)),
        1 => Just(Input::Stop),
    ]
}

fn tools() -> Vec<ToolSpec> {
    ["lookup", "transfer"]
        .iter()
        .map(|name| ToolSpec {
            name: (*name).into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
            requires_confirmation: *name == "transfer",
            host_validates: false,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_input_sequence_is_safe(max in 0u32..4, inputs in proptest::collection::vec(input(), 0..80)) {
        let mut ids = counter_ids();
        let mut c = ChatController::new(ChatConfig { tools: tools(), max_tool_iterations: max, ..Default::default() }, Vec::new());
        c.send("go", NOW_MS, &mut ids).expect("first send");
        let mut tool_ids: Vec<String> = vec!["a".into(), "zzz".into()];
        for input in inputs {
            let (before, revision_before, was_done) = (c.state().clone(), c.revision(), c.is_done());
            let action = match input {
                Input::Chunk(chunk) => c.on_chunk(chunk),
                Input::ModelEnd => c.on_model_end(NOW_MS, &mut ids),
                Input::ModelError => c.on_model_error(),
                Input::ToolStarted(i) => c.on_tool_started(&tool_ids[i % tool_ids.len()].clone()),
                Input::ToolResult(i, ok) => {
                    let id = tool_ids[i % tool_ids.len()].clone();
                    let outcome = if ok { Ok("r".to_owned()) } else { Err("e".to_owned()) };
                    c.on_tool_result(&id, outcome, NOW_MS, &mut ids)
                }
                Input::Stop => c.stop(),
            };
            if let Action::RunTools(invocations) = &action {
                tool_ids.extend(invocations.iter().map(|i| i.id.clone()));
            }
            let state = c.state();
            // The revision moves exactly when the state does.
            prop_assert_eq!(c.revision() > revision_before, *state != before);
            prop_assert!(c.revision() >= revision_before);
            // A finished turn is frozen and says so.
            if was_done {
                prop_assert_eq!(&action, &Action::Done);
                prop_assert_eq!(state, &before);
            }
            prop_assert_eq!(action == Action::Done, c.is_done());
            // Error status and error value go together.
            prop_assert_eq!(state.status == ChatStatus::Error, state.error.is_some());
            prop_assert!(state.usage.total_tokens <= INTEGER_SAFE_MAX);
            // Every state is a valid, canonical wire message array.
            let wire = messages_to_value(&state.messages);
            let decoded = decode_messages(&wire).map_err(|e| TestCaseError::fail(e.message()))?;
            prop_assert_eq!(&decoded, &state.messages);
            // "Only appended" is never said of a message that changed otherwise (the snapshot
            // encoder then escapes the new text alone).
            for (at, now) in state.messages.iter().enumerate() {
                if !c.only_appended_since(at, revision_before) {
                    continue;
                }
                let then = before.messages.get(at).ok_or_else(|| TestCaseError::fail("new message"))?;
                prop_assert!(now.content.starts_with(then.content.as_str()));
                let mut grown = then.clone();
                grown.content = now.content.clone();
                prop_assert_eq!(&grown, now);
            }
        }
    }

    /// And it is said of the streaming message, for every text chunk (else no reuse happens).
    #[test]
    fn text_chunks_are_appends(texts in proptest::collection::vec("[a-z é]{0,4}", 1..20)) {
        let mut ids = counter_ids();
        let mut c = ChatController::new(ChatConfig { tools: tools(), max_tool_iterations: 1, ..Default::default() }, Vec::new());
        c.send("go", NOW_MS, &mut ids).expect("first send");
        let last = c.state().messages.len() - 1;
        for text in texts {
            let revision = c.revision();
            c.on_chunk(ModelChunk::Text(text));
            prop_assert!(c.only_appended_since(last, revision));
            prop_assert!(!c.only_appended_since(last + 1, revision));
        }
        let revision = c.revision();
        c.on_model_end(NOW_MS, &mut ids);
        prop_assert!(!c.only_appended_since(last, revision), "the status changed");
    }
}

/// Bytes that matter to an event stream, so random input often forms fields and events.
fn sse_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = pick(&[
        "data: ", "data:", "event: error", ": c", "\r", "\n", "\r\n", "[DONE]", "{", "}",
        r#"{"choices":[{"delta":{"content":"x"}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{"}}]},"finish_reason":"tool_calls"}]}"#,
        r#"{"usage":{"prompt_tokens":1,"completion_tokens":2}}"#, "\u{feff}", "é",
    ])
    .prop_map(|s| s.as_bytes().to_vec());
    let raw = proptest::collection::vec(any::<u8>(), 0..4);
    proptest::collection::vec(prop_oneof![4 => piece, 1 => raw], 0..40).prop_map(|v| v.concat())
}

fn translate(parts: &[&[u8]]) -> Result<Vec<ModelChunk>, OpenAiError> {
    let mut stream = OpenAiStream::new();
    let mut out = Vec::new();
    for part in parts {
        out.extend(stream.push(part)?);
    }
    out.extend(stream.end()?);
    Ok(out)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Any bytes, cut anywhere: no panic, and the same chunks or the same error as whole.
    #[test]
    fn any_byte_stream_translates_the_same_however_it_is_cut(bytes in sse_bytes(), a in any::<usize>(), b in any::<usize>()) {
        let whole = translate(&[&bytes]);
        let (mut x, mut y) = (a % (bytes.len() + 1), b % (bytes.len() + 1));
        if x > y {
            std::mem::swap(&mut x, &mut y);
        }
        prop_assert_eq!(translate(&[&bytes[..x], &bytes[x..y], &bytes[y..]]), whole);
    }
}
