//! Tool input checked against the tool's JSON Schema before it runs: a table of schemas, inputs
//! and the text the model reads; the bounds; and the controller refusing a call whose input
//! breaks its schema (the tool never runs, the model reads why, the turn goes on).
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use serde_json::{json, Value};
use turnkeep::core::chat::controller::{Action, ChatConfig, ChatController};
use turnkeep::core::chat::input_schema::{check_input, InputIssues, PathKey};
use turnkeep::core::chat::{FinishReason, ModelChunk, ToolSpec};
use turnkeep::core::limits::{
    TOOL_INPUT_CHECK_STEPS_MAX, TOOL_INPUT_ERROR_CHARS_MAX, TOOL_INPUT_ISSUES_MAX,
};
use turnkeep::core::protocol::{Role, ToolCallStatus};

/// The text the model reads for `input` against `schema`, or None when it conforms.
fn verdict(schema: &Value, input: Value) -> Option<String> {
    let issues = check_input(schema, &input);
    (!issues.is_empty()).then(|| issues.text("t"))
}

#[test]
fn inputs_are_checked_against_the_subset_tools_use() {
    let person = json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "minLength": 2, "maxLength": 5 },
            "age": { "type": "integer", "minimum": 0, "exclusiveMaximum": 150 },
            "kind": { "enum": ["a", "b"] },
            "tags": { "type": "array", "items": { "type": "string" }, "maxItems": 2, "uniqueItems": true },
            "note": { "type": ["string", "null"] },
            "ratio": { "type": "number", "multipleOf": 0.5, "exclusiveMinimum": 0 },
            "fixed": { "const": 1 },
            "x-y": { "type": "boolean" }
        },
        "required": ["name"],
        "additionalProperties": false
    });
    let cases: Vec<(Value, Value, Option<&str>)> = vec![
        (person.clone(), json!({ "name": "Ann" }), None),
        (person.clone(), json!({ "name": "Ann", "age": 3, "kind": "b", "tags": ["x"], "note": null, "ratio": 1.5, "fixed": 1.0, "x-y": true }), None),
        (person.clone(), json!({}), Some("Invalid input for tool t: input must have the property \"name\".")),
        (person.clone(), json!({ "name": 3 }), Some("Invalid input for tool t: input.name must be a string.")),
        (person.clone(), json!({ "name": "A" }), Some("Invalid input for tool t: input.name must have at least 2 characters.")),
        (person.clone(), json!({ "name": "Ann", "age": 2.5 }), Some("Invalid input for tool t: input.age must be an integer.")),
        (person.clone(), json!({ "name": "Ann", "age": 150 }), Some("Invalid input for tool t: input.age must be less than 150.")),
        (person.clone(), json!({ "name": "Ann", "kind": "c" }), Some("Invalid input for tool t: input.kind must be one of \"a\", \"b\".")),
        (person.clone(), json!({ "name": "Ann", "tags": ["x", 1] }), Some("Invalid input for tool t: input.tags[1] must be a string.")),
        (person.clone(), json!({ "name": "Ann", "tags": ["x", "x"] }), Some("Invalid input for tool t: input.tags must not have duplicate items.")),
        (person.clone(), json!({ "name": "Ann", "note": 1 }), Some("Invalid input for tool t: input.note must be a string or null.")),
        (person.clone(), json!({ "name": "Ann", "ratio": 0.7 }), Some("Invalid input for tool t: input.ratio must be a multiple of 0.5.")),
        (person.clone(), json!({ "name": "Ann", "ratio": 0 }), Some("Invalid input for tool t: input.ratio must be greater than 0.")),
        (person.clone(), json!({ "name": "Ann", "fixed": 2 }), Some("Invalid input for tool t: input.fixed must be 1.")),
        (person.clone(), json!({ "name": "Ann", "x-y": 1 }), Some("Invalid input for tool t: input[\"x-y\"] must be a boolean.")),
        (person.clone(), json!({ "name": "Ann", "extra": 1 }), Some("Invalid input for tool t: input.extra is not an allowed property.")),
        (person.clone(), json!({ "age": -1, "name": 1 }), Some("Invalid input for tool t: input.age must be at least 0; input.name must be a string.")),
        // Combinators: a branch's own issues are not reported, only whether it matched.
        (json!({ "anyOf": [{ "type": "string" }, { "type": "integer" }] }), json!(1), None),
        (json!({ "anyOf": [{ "type": "string" }, { "type": "integer" }] }), json!(true), Some("Invalid input for tool t: input must match one of the allowed schemas.")),
        (json!({ "oneOf": [{ "type": "number" }, { "type": "integer" }] }), json!(1), Some("Invalid input for tool t: input must match exactly one of the allowed schemas.")),
        (json!({ "oneOf": [{ "type": "number" }, { "type": "integer" }] }), json!(1.5), None),
        (json!({ "allOf": [{ "minimum": 1 }, { "maximum": 3 }] }), json!(4), Some("Invalid input for tool t: input must be at most 3.")),
        (json!({ "not": { "type": "null" } }), json!(null), Some("Invalid input for tool t: input must not match the excluded schema.")),
        // OpenAPI's nullable, draft 4's exclusive booleans and tuple items, boolean schemas.
        (json!({ "type": "string", "nullable": true }), json!(null), None),
        (json!({ "minimum": 1, "exclusiveMinimum": true }), json!(1), Some("Invalid input for tool t: input must be greater than 1.")),
        (json!({ "items": [{ "type": "string" }, { "type": "integer" }] }), json!(["a", "b"]), Some("Invalid input for tool t: input[1] must be an integer.")),
        (json!({ "prefixItems": [{ "type": "string" }], "items": false }), json!(["a", 1]), Some("Invalid input for tool t: input[1] is not allowed.")),
        (json!(true), json!({ "any": 1 }), None),
        // Not checked: pattern, format, $ref (and additionalProperties beside patternProperties).
        (json!({ "type": "string", "pattern": "^x$", "format": "email" }), json!("y"), None),
        (json!({ "$ref": "#/definitions/x" }), json!(1), None),
        (json!({ "patternProperties": { "^a": {} }, "additionalProperties": false }), json!({ "b": 1 }), None),
    ];
    for (schema, input, want) in cases {
        assert_eq!(
            verdict(&schema, input.clone()).as_deref(),
            want,
            "{schema} {input}"
        );
    }
}

#[test]
fn the_issues_and_their_text_are_bounded() {
    let schema = json!({ "type": "object", "additionalProperties": { "type": "string" } });
    let input: serde_json::Map<String, Value> =
        (0..20).map(|i| (format!("k{i:02}"), json!(i))).collect();
    let issues = check_input(&schema, &Value::Object(input));
    assert_eq!(issues.issues.len(), TOOL_INPUT_ISSUES_MAX);
    assert_eq!(issues.total, 20);
    assert!(issues
        .text("t")
        .ends_with(&format!("(and {} more).", 20 - TOOL_INPUT_ISSUES_MAX)));
    let long = "x".repeat(5_000);
    let text = InputIssues::from_host(vec![(vec![PathKey::Key(long.clone())], long)], 1).text("t");
    assert!(
        text.chars().count() <= TOOL_INPUT_ERROR_CHARS_MAX + 1,
        "{}",
        text.len()
    );
    // A check that would cost too much refuses the input rather than run it unchecked: an array of
    // 20,000 items, each tried against 10 branches, is 220,000 steps.
    let branches: Vec<Value> = (0..10)
        .map(|i| json!({ "const": format!("b{i}") }))
        .collect();
    let schema = json!({ "type": "array", "items": { "anyOf": branches } });
    let input = Value::Array(vec![json!(1); 20_000]);
    assert!(20_000 * 11 > TOOL_INPUT_CHECK_STEPS_MAX);
    let issues = check_input(&schema, &input);
    assert_eq!(issues.issues.len(), TOOL_INPUT_ISSUES_MAX);
    assert_eq!(
        issues
            .issues
            .last()
            .map(|i| (i.path.as_str(), i.message.as_str())),
        Some((
            "input[9090]",
            "could not be checked: the schema is too costly"
        )),
        "the budget's end is reported, whatever was found before it"
    );
    // Within the budget, the same schema is checked whole.
    let small = Value::Array(vec![json!(1); 3]);
    assert_eq!(check_input(&schema, &small).total, 3);
}

#[test]
fn a_host_schema_issue_names_its_path() {
    let issues = InputIssues::from_host(
        vec![(
            vec![
                PathKey::Key("items".into()),
                PathKey::Index(2),
                PathKey::Key("a b".into()),
            ],
            " Too small ".into(),
        )],
        3,
    );
    assert_eq!(
        issues.text("t"),
        "Invalid input for tool t: input.items[2][\"a b\"] Too small (and 2 more)."
    );
}

fn spec(host_validates: bool) -> ToolSpec {
    ToolSpec {
        name: "lookup".into(),
        description: String::new(),
        parameters: json!({ "type": "object", "properties": { "q": { "type": "string" } }, "required": ["q"] }),
        requires_confirmation: false,
        host_validates,
    }
}

fn call_with(c: &mut ChatController, args: &str) -> Action {
    let mut n = 0;
    let mut ids = |p: &str| {
        n += 1;
        format!("{p}-{n}")
    };
    assert!(matches!(
        c.send("go", 0, &mut ids),
        Ok(Action::CallModel(_))
    ));
    c.on_chunk(ModelChunk::ToolCall {
        index: 0,
        id: Some("c1".into()),
        name: Some("lookup".into()),
        args_delta: args.into(),
    });
    c.on_chunk(ModelChunk::Finish {
        reason: FinishReason::ToolCalls,
        usage: None,
    });
    c.on_model_end(1, &mut ids)
}

#[test]
fn the_controller_never_runs_a_call_whose_input_breaks_its_schema() {
    let config = |host| ChatConfig {
        tools: vec![spec(host)],
        ..Default::default()
    };
    // Valid input runs.
    let mut c = ChatController::new(config(false), Vec::new());
    assert!(
        matches!(call_with(&mut c, r#"{"q":"x"}"#), Action::RunTools(calls) if calls.len() == 1)
    );
    // Invalid input: no tool runs, the call is an error, the model is called again and reads why.
    let mut c = ChatController::new(config(false), Vec::new());
    let Action::CallModel(request) = call_with(&mut c, r#"{"q":1}"#) else {
        panic!("the model is called again");
    };
    let text = "Invalid input for tool lookup: input.q must be a string.";
    let call = &c.state().messages[1].tool_calls.as_ref().expect("a call")[0];
    assert_eq!(
        (call.status, call.error.as_deref()),
        (ToolCallStatus::Error, Some(text))
    );
    let answer = request.messages.last().expect("the tool message");
    assert_eq!((answer.role, answer.content.as_str()), (Role::Tool, text));
    // A tool whose host checks its input (a Standard Schema) is run: the host refuses it there.
    let mut c = ChatController::new(config(true), Vec::new());
    assert!(matches!(
        call_with(&mut c, r#"{"q":1}"#),
        Action::RunTools(_)
    ));
}
