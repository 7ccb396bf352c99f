//! The deterministic demo model as pure scripts: a model request in, the chunks
//! the demo model streams out. The adapter that plays a script (with `chunkDelayMs` between
//! chunks) lives outside the core; this module decides only *what* is said.
//!
//! | input (trimmed)   | script |
//! |-------------------|--------|
//! | anything else     | `echo: <input>`, one word per chunk |
//! | `/words N`        | `w1 w2 … wN`, one word per chunk; N above [`DEMO_WORDS_MAX`] is clamped to it; N that is not a positive integer is "anything else" |
//! | `/tool Q`         | calls `lookup` with `{"query": "Q"}`; once its result is in, `found: <result>` |
//! | `/confirm N`      | calls `transfer` with `{"amount": N}` (a safe integer ≥ 0), which requires confirmation; once a result is in, `transfer: <result>` |
//! | `/think Q`        | reasoning `Thinking about Q.`, then `answer: Q`, one word per chunk (the page draws the reasoning collapsed) |
//! | `/fail`           | one chunk, then the call fails |
//!
//! Every script that does not fail ends with a `Finish` whose usage is promptTokens = words
//! of the input, completionTokens = chunks emitted before the finish.

use serde_json::{json, Map, Value};

use super::model::{FinishReason, ModelChunk, ModelRequest, ToolSpec, Usage};
use crate::checks::safe_uint;
use crate::limits::{DEMO_WORDS_MAX, INTEGER_SAFE_MAX};
use crate::protocol::{Message, Role};

/// The demo's lookup tool (runs without confirmation).
pub(crate) const LOOKUP: &str = "lookup";
/// The demo's transfer tool (requires confirmation).
pub(crate) const TRANSFER: &str = "transfer";
/// The one text chunk `/fail` streams before failing.
pub(crate) const FAIL_TEXT: &str = "about to fail";

/// One step of a demo script.
#[derive(Clone, Debug, PartialEq)]
pub enum DemoStep {
    Chunk(ModelChunk),
    /// The model call fails here.
    Fail,
}

/// What the user asked the demo model for.
#[derive(Clone, Debug, PartialEq)]
pub enum DemoCommand {
    Echo,
    Words(u64),
    Tool(String),
    Confirm(u64),
    Think(String),
    Fail,
}

/// Reads the command in a user input.
pub fn parse_command(input: &str) -> DemoCommand {
    let trimmed = input.trim();
    if trimmed == "/fail" {
        return DemoCommand::Fail;
    }
    let Some((head, rest)) = trimmed.split_once(char::is_whitespace) else {
        return DemoCommand::Echo;
    };
    let rest = rest.trim();
    match head {
        "/words" => match rest.parse::<u64>() {
            Ok(n) if n > 0 => DemoCommand::Words(n.min(DEMO_WORDS_MAX)),
            _ => DemoCommand::Echo,
        },
        "/tool" => DemoCommand::Tool(rest.to_owned()),
        "/think" => DemoCommand::Think(rest.to_owned()),
        "/confirm" => match rest.parse::<u64>() {
            Ok(n) if n <= INTEGER_SAFE_MAX => DemoCommand::Confirm(n),
            _ => DemoCommand::Echo,
        },
        _ => DemoCommand::Echo,
    }
}

/// The chunks the demo model streams for `request`: its input is the last user message, and a
/// `tool` message after it means the tool round is over.
pub fn demo_script(request: &ModelRequest) -> Vec<DemoStep> {
    let last_user = request.messages.iter().rposition(|m| m.role == Role::User);
    let input = last_user.map_or("", |i| request.messages[i].content.as_str());
    let tool_result = last_user.and_then(|i| last_tool_result(&request.messages[i + 1..]));
    let prompt_tokens = input.split_whitespace().count() as u64;
    let (chunks, reason) = match (parse_command(input), tool_result) {
        (DemoCommand::Fail, _) => {
            return vec![
                DemoStep::Chunk(ModelChunk::Text(FAIL_TEXT.into())),
                DemoStep::Fail,
            ]
        }
        (DemoCommand::Echo, _) => (words_of(&format!("echo: {input}")), FinishReason::Stop),
        (DemoCommand::Words(n), _) => (numbered_words(n), FinishReason::Stop),
        (DemoCommand::Think(topic), _) => {
            let mut chunks: Vec<ModelChunk> = words_of(&format!("Thinking about {topic}."))
                .into_iter()
                .map(|chunk| match chunk {
                    ModelChunk::Text(word) => ModelChunk::Reasoning(word),
                    other => other,
                })
                .collect();
            chunks.extend(words_of(&format!("answer: {topic}")));
            (chunks, FinishReason::Stop)
        }
        (DemoCommand::Tool(_), Some(result)) => {
            (words_of(&format!("found: {result}")), FinishReason::Stop)
        }
        (DemoCommand::Confirm(_), Some(result)) => {
            (words_of(&format!("transfer: {result}")), FinishReason::Stop)
        }
        (DemoCommand::Tool(query), None) => (
            vec![tool_call(LOOKUP, json!({ "query": query }))],
            FinishReason::ToolCalls,
        ),
        (DemoCommand::Confirm(amount), None) => (
            vec![tool_call(TRANSFER, json!({ "amount": amount }))],
            FinishReason::ToolCalls,
        ),
    };
    let usage = Usage::new(prompt_tokens, chunks.len() as u64);
    let mut steps: Vec<DemoStep> = chunks.into_iter().map(DemoStep::Chunk).collect();
    steps.push(DemoStep::Chunk(ModelChunk::Finish {
        reason,
        usage: Some(usage),
    }));
    steps
}

/// The demo's tools, as offered to the model.
pub fn demo_tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: LOOKUP.into(),
            description: "Looks something up and returns what it found.".into(),
            parameters: json!({
                "type": "object",
                "properties": { "query": { "type": "string" } },
                "required": ["query"],
            }),
            requires_confirmation: false,
            host_validates: false,
        },
        ToolSpec {
            name: TRANSFER.into(),
            description: "Transfers an amount; a person must approve it first.".into(),
            parameters: json!({
                "type": "object",
                "properties": { "amount": { "type": "integer", "minimum": 0 } },
                "required": ["amount"],
            }),
            requires_confirmation: true,
            host_validates: false,
        },
    ]
}

/// Runs a demo tool: `lookup` answers `result for <query>`, `transfer` answers
/// `transferred <amount>`. Bad arguments or another name are an error text, as a tool's
/// failure would be.
pub fn run_demo_tool(name: &str, args: &Map<String, Value>) -> Result<String, String> {
    match name {
        LOOKUP => match args.get("query").and_then(Value::as_str) {
            Some(query) => Ok(format!("result for {query}")),
            None => Err("lookup needs a string `query`".into()),
        },
        TRANSFER => match args.get("amount").and_then(safe_uint) {
            Some(amount) => Ok(format!("transferred {amount}")),
            None => Err("transfer needs an integer `amount` >= 0".into()),
        },
        _ => Err("the demo has no such tool".into()),
    }
}

/// Splits `text` into one chunk per word, each word carrying the whitespace before it (as a
/// tokenizer would: `echo:`, ` a`, ` b`); trailing whitespace stays on the last chunk, so the
/// chunks concatenate back to `text` exactly.
pub fn words_of(text: &str) -> Vec<ModelChunk> {
    let mut pieces: Vec<String> = Vec::new();
    let mut prev_space = true;
    for c in text.chars() {
        let starts_piece = c.is_whitespace() && !prev_space;
        match pieces.last_mut() {
            Some(last) if !starts_piece => last.push(c),
            _ => pieces.push(c.to_string()),
        }
        prev_space = c.is_whitespace();
    }
    if pieces.len() > 1 && pieces.last().is_some_and(|p| p.trim().is_empty()) {
        let tail = pieces.pop().unwrap_or_default();
        if let Some(last) = pieces.last_mut() {
            last.push_str(&tail);
        }
    }
    pieces.into_iter().map(ModelChunk::Text).collect()
}

fn numbered_words(n: u64) -> Vec<ModelChunk> {
    (1..=n)
        .map(|i| {
            ModelChunk::Text(if i == 1 {
                "w1".into()
            } else {
                format!(" w{i}")
            })
        })
        .collect()
}

fn tool_call(name: &str, args: Value) -> ModelChunk {
    ModelChunk::ToolCall {
        index: 0,
        id: None,
        name: Some(name.to_owned()),
        args_delta: args.to_string(),
    }
}

fn last_tool_result(after_user: &[Message]) -> Option<&str> {
    after_user
        .iter()
        .rev()
        .find(|m| m.role == Role::Tool)
        .map(|m| m.content.as_str())
}
