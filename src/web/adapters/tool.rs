//! `JsTool`: the `Tool` port over a host tool object. Two shapes:
//!
//! - turnkeep's `{ name, description, parameters, requiresConfirmation?, execute(args, context) }`
//!   with `context` `{ signal, toolCallId, idempotencyKey }` (`idempotencyKey`: the same for
//!   every run of the call, `core::session::tool_idempotency_key`, or the confirmation token of a
//!   call a person approved);
//! - AgentsKit's `ToolDefinition` `{ name, description?, schema?, requiresConfirmation?,
//!   execute(args, context), tags?, category? }` (a tool with `schema`, or a tool of an
//!   AgentsKit `chat` without `parameters`), whose `context` is AgentsKit's `{ messages, call }` (messages with
//!   `Date` timestamps) plus the above. Its `execute` may return an async iterable, whose chunks
//!   are joined (`String(chunk)`) as AgentsKit joins them; `init`/`dispose` are refused.
//!
//! The input schema (`parameters` / `schema`) is a JSON Schema object, checked before `execute`
//! by the controller (`core::chat::input_schema`), or a Standard Schema object (a zod schema:
//! `~standard`), whose `~standard.jsonSchema.input()` is what the model is told and whose
//! `~standard.validate(args)` runs here before `execute`: `execute` gets its `value`, and its
//! `issues` are what the model reads instead. An AgentsKit `chat.validateArgs(schema, args)` runs
//! there too.
//!
//! What the model reads back:
//! - a string result, as is; any other result, its `JSON.stringify` text; `undefined` (a tool
//!   that returns nothing) is the empty string (AgentsKit tools: `null` too, and an `Error` as
//!   `String(error)`, AgentsKit's rules);
//! - a result with no JSON form (a cycle, a BigInt) or a throw/rejection is a failure whose text
//!   is [`tool_error_text`]: `Tool failed.`, followed by the message of a thrown `Error` (cut to
//!   `TOOL_ERROR_MESSAGE_CHARS_MAX` characters). A thrown non-`Error` (a string, an object)
//!   adds nothing, so values a tool never meant as messages are not shown to the model. Whether
//!   that text reaches the model is the driver's choice (the `Tool` port calls it logs-only).
//!
//! The turn's `CancelToken` is bridged to an `AbortController` whose signal is `{ signal }`.

use js_sys::{Array, Function, Object};
use serde_json::{Map, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::host::{signal_of, signal_options, truncate_chars};
use super::models::{iterator_of, ResultReader};
use crate::core::chat::input_schema::{InputIssues, PathKey};
use crate::core::chat::model::ToolSpec;
use crate::core::checks::{within_bounds, BOUNDED_JSON};
use crate::core::limits::{
    TOOL_DESCRIPTION_CHARS_MAX, TOOL_ERROR_MESSAGE_CHARS_MAX, TOOL_INPUT_ISSUES_MAX,
    TOOL_NAME_CHARS_MAX, TOOL_RESULT_BYTES_MAX,
};
use crate::ports::chat::{Tool, ToolContext, ToolFailure};
use crate::ports::{LocalFuture, PortError};
use crate::web::convert::{from_json, messages_with_dates, to_json};
use crate::web::js::{get, get_fn, resolve, set};

/// The fixed start of every failed tool's text.
pub const TOOL_FAILED_TEXT: &str = "Tool failed.";

/// A host tool: its spec, read once, and how it is run.
pub struct JsTool {
    spec: ToolSpec,
    host: JsValue,
    execute: Function,
    /// AgentsKit's shape: its context and result rules.
    agentskit: bool,
    /// The schema object as the host gave it (for `validateArgs`).
    schema: JsValue,
    /// `schema['~standard']` when the schema is a Standard Schema object.
    standard: Option<JsValue>,
    /// AgentsKit's `chat.validateArgs(schema, args)`.
    validate_args: Option<Function>,
}

/// How a definition's tools are read.
#[derive(Clone, Default)]
pub struct ToolRules {
    /// The tools of an AgentsKit `chat`: every one has AgentsKit's shape.
    pub agentskit: bool,
    /// `chat.validateArgs`, run before each AgentsKit tool with a schema.
    pub validate_args: Option<Function>,
}

impl JsTool {
    /// Reads and checks a tool object. `Err` says which field is wrong, for a config error.
    pub fn from_js(value: &JsValue, rules: &ToolRules) -> Result<Self, String> {
        if !value.is_object() {
            return Err("a tool must be an object".into());
        }
        let name = get(value, "name")
            .as_string()
            .ok_or("tool.name must be a string")?;
        if !is_tool_name(&name) {
            return Err(format!(
                "tool.name must be 1 to {TOOL_NAME_CHARS_MAX} characters of A-Z, a-z, 0-9, _ or -"
            ));
        }
        let at = format!("tool {name}");
        // A tool with `schema` is AgentsKit's; in an AgentsKit `chat`, so is one with neither
        // `schema` nor `parameters` (turnkeep's own tools, with `parameters`, work there too).
        let has_schema = !get(value, "schema").is_undefined();
        let has_parameters = !get(value, "parameters").is_undefined();
        let agentskit = has_schema && !has_parameters || rules.agentskit && !has_parameters;
        // A tool object may carry fields of its own (state, helpers); AgentsKit's lifecycle hooks
        // are the ones that would be dropped silently.
        for lifecycle in ["init", "dispose"] {
            if !get(value, lifecycle).is_undefined() {
                return Err(format!(
                    "{at}: {lifecycle} is not supported by turnkeep (tool lifecycles are not implemented)"
                ));
            }
        }
        if !agentskit && !has_parameters && !get(value, "inputSchema").is_undefined() {
            return Err(format!(
                "{at}: parameters is missing (an AI SDK tool's inputSchema is turnkeep's parameters)"
            ));
        }
        let execute = get_fn(value, "execute").ok_or_else(|| {
            format!("{at}: execute must be a function (turnkeep runs every tool on the server)")
        })?;
        let description = match get(value, "description") {
            d if d.is_undefined() && agentskit => String::new(),
            d => d
                .as_string()
                .ok_or_else(|| format!("{at}: description must be a string"))?,
        };
        if description.chars().count() > TOOL_DESCRIPTION_CHARS_MAX {
            return Err(format!(
                "{at}: description is longer than {TOOL_DESCRIPTION_CHARS_MAX} characters"
            ));
        }
        let schema_key = if agentskit { "schema" } else { "parameters" };
        let schema = get(value, schema_key);
        let standard = Some(get(&schema, "~standard")).filter(JsValue::is_object);
        let parameters = match &standard {
            Some(standard) => standard_json_schema(standard),
            None if schema.is_undefined() && agentskit => {
                Ok(serde_json::json!({ "type": "object" }))
            }
            None => read_parameters(&schema),
        }
        .map_err(|m| format!("{at}: {schema_key} {m}"))?;
        let confirm = get(value, "requiresConfirmation");
        let requires_confirmation = match confirm.as_bool() {
            Some(b) => b,
            None if confirm.is_undefined() => false,
            None => {
                return Err(format!(
                    "{at}: requiresConfirmation must be a boolean when given"
                ))
            }
        };
        Ok(Self {
            spec: ToolSpec {
                name,
                description,
                parameters,
                requires_confirmation,
                host_validates: standard.is_some(),
            },
            host: value.clone(),
            execute,
            agentskit,
            validate_args: rules
                .validate_args
                .clone()
                .filter(|_| agentskit && has_schema),
            schema,
            standard,
        })
    }

    /// The input `execute` gets: the model's, or what the host's schema made of it; `Err` with
    /// the issues when a host check refused it.
    async fn checked_input(&self, args: Map<String, Value>) -> Result<JsValue, ToolFailure> {
        let mut input = from_json(&Value::Object(args));
        if let Some(standard) = &self.standard {
            let validate = get_fn(standard, "validate")
                .ok_or_else(|| PortError::new("the tool's schema has no ~standard.validate"))?;
            let result = resolve(validate.call1(standard, &input))
                .await
                .map_err(|e| {
                    PortError::with_cause("~standard.validate threw", std::rc::Rc::new(e))
                })?;
            let issues = get(&result, "issues");
            if let Some(list) = issues.dyn_ref::<Array>() {
                return Err(ToolFailure::InvalidInput(standard_issues(list)));
            }
            input = get(&result, "value");
        }
        if let Some(validate) = &self.validate_args {
            let verdict = validate
                .call2(&JsValue::NULL, &self.schema, &input)
                .map_err(|e| PortError::with_cause("validateArgs threw", std::rc::Rc::new(e)))?;
            if get(&verdict, "valid").as_bool() != Some(true) {
                return Err(ToolFailure::InvalidInput(agentskit_issues(&verdict)));
            }
        }
        Ok(input)
    }

    /// `execute`'s second argument.
    fn context_js(&self, context: &ToolContext) -> Object {
        let options = signal_options(Some(&signal_of(&context.cancel)));
        set(&options, "toolCallId", context.tool_call_id.as_str());
        if let Some(key) = &context.idempotency_key {
            set(&options, "idempotencyKey", key.as_str());
        }
        if self.agentskit {
            set(&options, "messages", messages_with_dates(&context.messages));
            if let Some(call) = &context.call {
                let call = serde_json::to_value(call).unwrap_or(Value::Null);
                set(&options, "call", from_json(&call));
            }
        }
        options
    }
}

impl Tool for JsTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn execute(
        &self,
        args: Map<String, Value>,
        context: ToolContext,
    ) -> LocalFuture<'_, Result<String, ToolFailure>> {
        Box::pin(async move {
            let input = self.checked_input(args).await?;
            let call_args = Array::of2(&input, &self.context_js(&context));
            let result = resolve(self.execute.apply(&self.host, &call_args))
                .await
                .map_err(|e| PortError::with_cause(tool_error_text(&e), std::rc::Rc::new(e)))?;
            let text = if self.agentskit {
                agentskit_result_text(&result).await
            } else {
                result_text(&result)
            };
            text.map_err(|m| PortError::new(m).into())
        })
    }
}

/// What the model reads for a tool that threw `thrown` (see the module doc).
pub fn tool_error_text(thrown: &JsValue) -> String {
    match thrown.dyn_ref::<js_sys::Error>() {
        Some(e) => {
            let message = String::from(e.message());
            let message = message.trim();
            if message.is_empty() {
                TOOL_FAILED_TEXT.to_string()
            } else {
                format!(
                    "{TOOL_FAILED_TEXT} {}",
                    truncate_chars(message, TOOL_ERROR_MESSAGE_CHARS_MAX)
                )
            }
        }
        None => TOOL_FAILED_TEXT.to_string(),
    }
}

/// `[A-Za-z0-9_-]{1,64}`.
fn is_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= TOOL_NAME_CHARS_MAX
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A JSON Schema object within the bounded-JSON limits.
fn read_parameters(value: &JsValue) -> Result<Value, String> {
    let rule = "must be a JSON Schema object (or a Standard Schema object such as a zod schema)";
    let json = to_json(value).map_err(|_| rule.to_string())?;
    if !json.is_object() {
        return Err(rule.into());
    }
    if !within_bounds(&json, &BOUNDED_JSON) {
        return Err("exceeds the bounded-JSON limits (nodes, depth, lengths)".into());
    }
    Ok(json)
}

/// A Standard Schema's JSON Schema (`~standard.jsonSchema.input({ target: 'draft-07' })`).
fn standard_json_schema(standard: &JsValue) -> Result<Value, String> {
    let none = "is a Standard Schema without ~standard.jsonSchema (the model needs a JSON Schema: \
                pass one, or a schema library that implements Standard JSON Schema)";
    if get_fn(standard, "validate").is_none() {
        return Err("is a Standard Schema without ~standard.validate".into());
    }
    let input = get_fn(&get(standard, "jsonSchema"), "input").ok_or(none)?;
    let options = Object::new();
    set(&options, "target", "draft-07");
    let schema = input
        .call1(&get(standard, "jsonSchema"), &options)
        .map_err(|_| "could not be turned into a JSON Schema (~standard.jsonSchema.input threw)")?;
    read_parameters(&schema)
}

/// A Standard Schema's `issues` (`{ message, path?: [key | { key }] }`), the first ones.
fn standard_issues(list: &Array) -> InputIssues {
    let total = list.length() as usize;
    let reported = list
        .iter()
        .take(TOOL_INPUT_ISSUES_MAX)
        .map(|issue| {
            let message = get(&issue, "message").as_string().unwrap_or_default();
            let path = get(&issue, "path");
            let keys = path
                .dyn_ref::<Array>()
                .map(|steps| {
                    steps
                        .iter()
                        .map(|step| {
                            let step = if step.is_object() {
                                get(&step, "key")
                            } else {
                                step
                            };
                            path_key(&step)
                        })
                        .collect()
                })
                .unwrap_or_default();
            (keys, message)
        })
        .collect();
    InputIssues::from_host(reported, total)
}

/// AgentsKit's `ArgsValidationResult` `{ valid: false, errors?: [{ path, message }], message? }`.
fn agentskit_issues(verdict: &JsValue) -> InputIssues {
    let errors = get(verdict, "errors");
    let list = errors.dyn_ref::<Array>();
    let total = list.map_or(0, |l| l.length() as usize);
    let mut reported: Vec<(Vec<PathKey>, String)> = list
        .into_iter()
        .flat_map(|l| l.iter())
        .take(TOOL_INPUT_ISSUES_MAX)
        .map(|e| {
            let path = get(&e, "path").as_string().unwrap_or_default();
            let keys = path
                .split(['/', '.'])
                .filter(|s| !s.is_empty())
                .map(|s| match s.parse::<u64>() {
                    Ok(i) => PathKey::Index(i),
                    Err(_) => PathKey::Key(s.to_owned()),
                })
                .collect();
            (keys, get(&e, "message").as_string().unwrap_or_default())
        })
        .collect();
    if reported.is_empty() {
        let message = get(verdict, "message")
            .as_string()
            .unwrap_or_else(|| "is invalid".into());
        reported.push((Vec::new(), message));
    }
    InputIssues::from_host(reported, total)
}

fn path_key(step: &JsValue) -> PathKey {
    match step.as_f64() {
        Some(n) if n >= 0.0 && n.fract() == 0.0 => PathKey::Index(n as u64),
        _ => PathKey::Key(
            step.as_string()
                .unwrap_or_else(|| String::from(js_sys::JsString::from(step.clone()))),
        ),
    }
}

fn result_text(result: &JsValue) -> Result<String, String> {
    if let Some(text) = result.as_string() {
        return Ok(text);
    }
    if result.is_undefined() {
        return Ok(String::new());
    }
    // The host's own JSON.stringify, so the model reads exactly what a JS author expects.
    match js_sys::JSON::stringify(result)
        .ok()
        .and_then(|t| t.as_string())
    {
        Some(text) => Ok(text),
        None => Err(format!(
            "{TOOL_FAILED_TEXT} It returned a value with no JSON form."
        )),
    }
}

/// AgentsKit's result rules: an async iterable's chunks joined as `String(chunk)` (bounded by
/// `TOOL_RESULT_BYTES_MAX`, which the controller then enforces), `null`/`undefined` as `''`, a
/// string or an `Error` as `String(result)`, anything else its `JSON.stringify` (or `String`).
async fn agentskit_result_text(result: &JsValue) -> Result<String, String> {
    if !result.is_string()
        && js_sys::Reflect::has(result, &js_sys::Symbol::async_iterator()).unwrap_or(false)
    {
        let iterator = iterator_of(result).ok_or("the tool's async iterable has no iterator")?;
        let next = get_fn(&iterator, "next").ok_or("the tool's iterator has no next()")?;
        let reader = ResultReader::new();
        let mut text = String::new();
        loop {
            let step = reader
                .read(&iterator, &next)
                .await
                .map_err(|e| tool_error_text(&e))?;
            if step.done.as_bool() == Some(true) {
                return Ok(text);
            }
            text.push_str(&js_string(&step.value));
            if text.len() > TOOL_RESULT_BYTES_MAX {
                return Ok(text); // the controller turns it into "too large"
            }
        }
    }
    if result.is_undefined() || result.is_null() {
        return Ok(String::new());
    }
    if result.is_string() || result.is_instance_of::<js_sys::Error>() {
        return Ok(js_string(result));
    }
    Ok(js_sys::JSON::stringify(result)
        .ok()
        .and_then(|t| t.as_string())
        .unwrap_or_else(|| js_string(result)))
}

/// `String(value)`.
fn js_string(value: &JsValue) -> String {
    if let Some(text) = value.as_string() {
        return text;
    }
    get_fn(&js_sys::global(), "String")
        .and_then(|f| f.call1(&JsValue::NULL, value).ok())
        .and_then(|s| s.as_string())
        .unwrap_or_default()
}
