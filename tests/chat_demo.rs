//! The demo model's table (`core::chat::demo`), played through the real controller.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

mod chat_support;

use chat_support::{drive, summary};
use turnkeep::core::chat::demo::{
    demo_script, demo_tools, parse_command, run_demo_tool, words_of, DemoCommand, DemoStep,
};
use turnkeep::core::chat::{
    ChatConfig, ChatController, ChatError, ChatStatus, ModelChunk, ModelRequest, Usage,
};
use turnkeep::core::limits::DEMO_WORDS_MAX;

struct Expected<'a> {
    messages: &'a [&'a str],
    status: ChatStatus,
    error: Option<ChatError>,
    usage: (u64, u64),
}

fn check(input: &str, expected: Expected<'_>) {
    let config = ChatConfig {
        tools: demo_tools(),
        ..ChatConfig::default()
    };
    let mut controller = ChatController::new(config, Vec::new());
    drive(
        &mut controller,
        input,
        &mut |r: &ModelRequest| demo_script(r),
        &mut |i| run_demo_tool(&i.name, &i.args),
    );
    let state = controller.state();
    assert_eq!(summary(state), expected.messages, "input {input:?}");
    assert_eq!(state.status, expected.status, "input {input:?}");
    assert_eq!(state.error, expected.error, "input {input:?}");
    let (prompt, completion) = expected.usage;
    assert_eq!(
        state.usage,
        Usage::new(prompt, completion),
        "input {input:?}"
    );
}

fn complete<'a>(messages: &'a [&'a str], usage: (u64, u64)) -> Expected<'a> {
    Expected {
        messages,
        status: ChatStatus::Complete,
        error: None,
        usage,
    }
}

#[test]
fn the_demo_table() {
    check(
        "hello  world",
        complete(
            &[
                r#"user complete "hello  world""#,
                r#"assistant complete "echo: hello  world""#,
            ],
            (2, 3),
        ),
    );
    check(
        "/words 3",
        complete(
            &[
                r#"user complete "/words 3""#,
                r#"assistant complete "w1 w2 w3""#,
            ],
            (2, 3),
        ),
    );
    check(
        "/tool cats",
        complete(
            &[
                r#"user complete "/tool cats""#,
                r#"assistant complete """#,
                r#"  call call-3 lookup {"query":"cats"} complete result="result for cats""#,
                r#"tool complete "result for cats" for call-3"#,
                r#"assistant complete "found: result for cats""#,
            ],
            // call 1: 2 prompt words, 1 chunk; call 2: 2 prompt words, 4 chunks
            (4, 5),
        ),
    );
    check(
        "/confirm 250",
        complete(
            &[
                r#"user complete "/confirm 250""#,
                r#"assistant complete """#,
                r#"  call call-3 transfer {"amount":250} requires_confirmation"#,
            ],
            (2, 1),
        ),
    );
    check(
        "/fail",
        Expected {
            messages: &[
                r#"user complete "/fail""#,
                r#"assistant error "about to fail""#,
            ],
            status: ChatStatus::Error,
            error: Some(ChatError::ModelFailed),
            usage: (0, 0),
        },
    );
    // Not commands: these echo.
    check(
        "/words 0",
        complete(
            &[
                r#"user complete "/words 0""#,
                r#"assistant complete "echo: /words 0""#,
            ],
            (2, 3),
        ),
    );
    check(
        "/tool",
        complete(
            &[
                r#"user complete "/tool""#,
                r#"assistant complete "echo: /tool""#,
            ],
            (1, 2),
        ),
    );
    check(
        "/confirm -1",
        complete(
            &[
                r#"user complete "/confirm -1""#,
                r#"assistant complete "echo: /confirm -1""#,
            ],
            (2, 3),
        ),
    );
}

#[test]
fn words_beyond_the_cap_are_clamped() {
    let config = ChatConfig::default();
    let mut controller = ChatController::new(config, Vec::new());
    drive(
        &mut controller,
        "/words 99999999",
        &mut |r: &ModelRequest| demo_script(r),
        &mut |_| unreachable!(),
    );
    let content = &controller.state().messages[1].content;
    assert_eq!(content.split(' ').count() as u64, DEMO_WORDS_MAX);
    assert!(content.ends_with(&format!(" w{DEMO_WORDS_MAX}")));
    assert_eq!(controller.state().usage, Usage::new(2, DEMO_WORDS_MAX));
}

#[test]
fn commands() {
    for (input, expected) in [
        ("/fail", DemoCommand::Fail),
        ("  /fail  ", DemoCommand::Fail),
        ("/fail now", DemoCommand::Echo),
        ("/words 12", DemoCommand::Words(12)),
        ("/words\t7", DemoCommand::Words(7)),
        ("/words x", DemoCommand::Echo),
        ("/words 1.5", DemoCommand::Echo),
        ("/tool  a b ", DemoCommand::Tool("a b".into())),
        ("/think  cats ", DemoCommand::Think("cats".into())),
        ("/think", DemoCommand::Echo),
        ("/confirm 0", DemoCommand::Confirm(0)),
        (
            "/confirm 9007199254740991",
            DemoCommand::Confirm(9_007_199_254_740_991),
        ),
        ("/confirm 9007199254740992", DemoCommand::Echo),
        ("/Tool x", DemoCommand::Echo),
        ("words 3", DemoCommand::Echo),
    ] {
        assert_eq!(parse_command(input), expected, "input {input:?}");
    }
}

#[test]
fn word_chunks_concatenate_back_to_the_text() {
    for (text, pieces) in [
        ("echo: a b", vec!["echo:", " a", " b"]),
        ("echo:   a  ", vec!["echo:", "   a  "]),
        ("x", vec!["x"]),
        (" lead", vec![" lead"]),
        ("", vec![]),
    ] {
        let got: Vec<String> = words_of(text)
            .into_iter()
            .map(|c| match c {
                ModelChunk::Text(t) => t,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(got, pieces, "text {text:?}");
        assert_eq!(got.concat(), text);
    }
}

#[test]
fn fail_streams_exactly_one_chunk_then_fails() {
    let mut controller = ChatController::new(ChatConfig::default(), Vec::new());
    let mut ids = chat_support::counter_ids();
    let request = match controller.send("/fail", 0, &mut ids) {
        Ok(turnkeep::core::chat::Action::CallModel(r)) => r,
        other => panic!("{other:?}"),
    };
    let script = demo_script(&request);
    assert_eq!(script.len(), 2);
    assert!(matches!(script[0], DemoStep::Chunk(ModelChunk::Text(_))));
    assert_eq!(script[1], DemoStep::Fail);
}

#[test]
fn demo_tools_answer_as_the_table_says() {
    let args = |v: serde_json::Value| v.as_object().cloned().expect("object");
    assert_eq!(
        run_demo_tool("lookup", &args(serde_json::json!({"query": "Q"}))),
        Ok("result for Q".into())
    );
    assert_eq!(
        run_demo_tool("transfer", &args(serde_json::json!({"amount": 5}))),
        Ok("transferred 5".into())
    );
    assert!(run_demo_tool("lookup", &args(serde_json::json!({"query": 1}))).is_err());
    assert!(run_demo_tool("transfer", &args(serde_json::json!({"amount": -5}))).is_err());
    assert!(run_demo_tool("nope", &args(serde_json::json!({}))).is_err());
    let tools = demo_tools();
    assert_eq!(
        tools
            .iter()
            .map(|t| (t.name.as_str(), t.requires_confirmation))
            .collect::<Vec<_>>(),
        [("lookup", false), ("transfer", true)]
    );
}

#[test]
fn think_streams_reasoning_then_its_answer() {
    use turnkeep::core::chat::FinishReason;
    let user = turnkeep::core::protocol::decode_messages(&serde_json::json!([
        { "id": "u", "role": "user", "content": "/think cats", "status": "complete", "createdAt": "2026-07-11T03:00:00.000Z" }
    ]))
    .expect("valid");
    let steps = demo_script(&ModelRequest::new(user, Vec::new()));
    let chunk = |step: &DemoStep| match step {
        DemoStep::Chunk(c) => c.clone(),
        DemoStep::Fail => panic!("no failure"),
    };
    let chunks: Vec<ModelChunk> = steps.iter().map(chunk).collect();
    let reasoning = |s: &str| ModelChunk::Reasoning(s.into());
    let text = |s: &str| ModelChunk::Text(s.into());
    assert_eq!(
        chunks,
        vec![
            reasoning("Thinking"),
            reasoning(" about"),
            reasoning(" cats."),
            text("answer:"),
            text(" cats"),
            ModelChunk::Finish {
                reason: FinishReason::Stop,
                usage: Some(Usage::new(2, 5))
            },
        ]
    );
}
