//! `JsTool`: the `Tool` port over a host object
//! `{ name, description, parameters, requiresConfirmation?, execute(args, context) }`, where
//! `context` is `{ signal, toolCallId, idempotencyKey? }` (`idempotencyKey`: the confirmation
//! token of a call a person approved).
//!
//! What the model reads back:
//! - a string result, as is; any other result, its `JSON.stringify` text; `undefined` (a tool
//!   that returns nothing) is the empty string;
//! - a result with no JSON form (a cycle, a BigInt) or a throw/rejection is an `Err` whose text
//!   is [`tool_error_text`]: `Tool failed.`, followed by the message of a thrown `Error` (cut to
//!   `TOOL_ERROR_MESSAGE_CHARS_MAX` characters). A thrown non-`Error` (a string, an object)
//!   adds nothing, so values a tool never meant as messages are not shown to the model. Whether
//!   that text reaches the model is the driver's choice (the `Tool` port calls it logs-only).
//!
//! The turn's `CancelToken` is bridged to an `AbortController` whose signal is `{ signal }`.

use js_sys::Function;
use serde_json::{Map, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::host::{required_method, signal_of, signal_options, truncate_chars};
use crate::core::chat::model::ToolSpec;
use crate::core::checks::{within_bounds, BOUNDED_JSON};
use crate::core::limits::{
    TOOL_DESCRIPTION_CHARS_MAX, TOOL_ERROR_MESSAGE_CHARS_MAX, TOOL_NAME_CHARS_MAX,
};
use crate::ports::chat::{Tool, ToolContext};
use crate::ports::{LocalFuture, PortError};
use crate::web::convert::{from_json, to_json};
use crate::web::js::{get, resolve, set};

/// The fixed start of every failed tool's text.
pub const TOOL_FAILED_TEXT: &str = "Tool failed.";

/// A host tool: its spec, read once, and its `execute` function.
pub struct JsTool {
    spec: ToolSpec,
    host: JsValue,
    execute: Function,
}

impl JsTool {
    /// Reads and checks a tool object. `Err` says which field is wrong, for a config error.
    pub fn from_js(value: &JsValue) -> Result<Self, String> {
        let execute = required_method(value, "tool", "execute")?;
        let name = get(value, "name")
            .as_string()
            .ok_or("tool.name must be a string")?;
        if !is_tool_name(&name) {
            return Err(format!(
                "tool.name must be 1 to {TOOL_NAME_CHARS_MAX} characters of A-Z, a-z, 0-9, _ or -"
            ));
        }
        let description = get(value, "description")
            .as_string()
            .ok_or_else(|| format!("tool {name}: description must be a string"))?;
        if description.chars().count() > TOOL_DESCRIPTION_CHARS_MAX {
            return Err(format!(
                "tool {name}: description is longer than {TOOL_DESCRIPTION_CHARS_MAX} characters"
            ));
        }
        let parameters =
            read_parameters(&get(value, "parameters")).map_err(|m| format!("tool {name}: {m}"))?;
        let confirm = get(value, "requiresConfirmation");
        let requires_confirmation = match confirm.as_bool() {
            Some(b) => b,
            None if confirm.is_undefined() => false,
            None => {
                return Err(format!(
                    "tool {name}: requiresConfirmation must be a boolean when given"
                ))
            }
        };
        Ok(Self {
            spec: ToolSpec {
                name,
                description,
                parameters,
                requires_confirmation,
            },
            host: value.clone(),
            execute,
        })
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
    ) -> LocalFuture<'_, Result<String, PortError>> {
        Box::pin(async move {
            let options = signal_options(Some(&signal_of(&context.cancel)));
            set(&options, "toolCallId", context.tool_call_id.as_str());
            if let Some(key) = &context.idempotency_key {
                set(&options, "idempotencyKey", key.as_str());
            }
            let call_args = js_sys::Array::of2(&from_json(&Value::Object(args)), &options);
            let result = resolve(self.execute.apply(&self.host, &call_args))
                .await
                .map_err(|e| PortError::with_cause(tool_error_text(&e), std::rc::Rc::new(e)))?;
            result_text(&result).map_err(PortError::new)
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
    let json = to_json(value).map_err(|_| "parameters must be a JSON Schema object".to_string())?;
    if !json.is_object() {
        return Err("parameters must be a JSON Schema object".into());
    }
    if !within_bounds(&json, &BOUNDED_JSON) {
        return Err("parameters exceed the bounded-JSON limits (nodes, depth, lengths)".into());
    }
    Ok(json)
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
