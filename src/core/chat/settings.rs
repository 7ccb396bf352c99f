//! Call settings of a chat definition: what every model call of its turns is asked with
//! (`instructions`, `temperature`, `maxOutputTokens`, `topP`, `stopSequences`, `toolChoice`,
//! `providerOptions`). Read and bounded here, once, when the definition is read; each model
//! adapter then passes what its wire has (an AI SDK model all of them, an OpenAI-compatible
//! endpoint all but `providerOptions`, an AgentsKit adapter `systemPrompt`, `temperature` and
//! `maxTokens`).

use serde_json::{Map, Value};

use super::model::ToolSpec;
use crate::checks::{safe_uint, within_bounds, BOUNDED_JSON};
use crate::limits::{
    CHAT_INSTRUCTIONS_CHARS_MAX, MODEL_OUTPUT_TOKENS_MAX, MODEL_TEMPERATURE_MAX,
    STOP_SEQUENCES_MAX, STOP_SEQUENCE_CHARS_MAX,
};

/// The settings; `None` (an empty list) is "not set": the model's own default applies.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CallSettings {
    /// The system instructions, sent before the conversation.
    pub instructions: Option<String>,
    pub temperature: Option<f64>,
    pub max_output_tokens: Option<u64>,
    pub top_p: Option<f64>,
    pub stop_sequences: Vec<String>,
    pub tool_choice: Option<ToolChoice>,
    /// Per provider (`{ anthropic: {...}, openai: {...} }`): AI SDK models only.
    pub provider_options: Option<Map<String, Value>>,
}

/// Which tools the model may (or must) call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolChoice {
    Auto,
    None,
    Required,
    /// This tool, by name.
    Tool(String),
}

/// One setting, whatever a definition shape calls it (AgentsKit's `systemPrompt` and
/// `maxTokens` are `Instructions` and `MaxOutputTokens`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    Instructions,
    Temperature,
    MaxOutputTokens,
    TopP,
    StopSequences,
    ToolChoice,
    ProviderOptions,
}

impl CallSettings {
    /// Reads one setting's value into `self`. `name` is the option as the definition spells it;
    /// the error names it and says what it must be (never quoting the value).
    pub fn set(&mut self, setting: Setting, name: &str, value: &Value) -> Result<(), String> {
        let bad = |rule: String| format!("{name} {rule}");
        match setting {
            Setting::Instructions => {
                let text = value
                    .as_str()
                    .filter(|s| s.chars().count() <= CHAT_INSTRUCTIONS_CHARS_MAX)
                    .ok_or_else(|| {
                        bad(format!(
                            "must be a string of at most {CHAT_INSTRUCTIONS_CHARS_MAX} characters"
                        ))
                    })?;
                // An empty prompt is no prompt (AgentsKit's rule too).
                self.instructions = (!text.is_empty()).then(|| text.to_owned());
            }
            Setting::Temperature => {
                self.temperature =
                    Some(number_in(value, 0.0, MODEL_TEMPERATURE_MAX).ok_or_else(|| {
                        bad(format!(
                            "must be a number from 0 to {MODEL_TEMPERATURE_MAX}"
                        ))
                    })?);
            }
            Setting::TopP => {
                self.top_p = Some(
                    number_in(value, 0.0, 1.0)
                        .ok_or_else(|| bad("must be a number from 0 to 1".into()))?,
                );
            }
            Setting::MaxOutputTokens => {
                let n = safe_uint(value)
                    .filter(|n| (1..=MODEL_OUTPUT_TOKENS_MAX).contains(n))
                    .ok_or_else(|| {
                        bad(format!(
                            "must be an integer from 1 to {MODEL_OUTPUT_TOKENS_MAX}"
                        ))
                    })?;
                self.max_output_tokens = Some(n);
            }
            Setting::StopSequences => self.stop_sequences = stop_sequences(value).map_err(bad)?,
            Setting::ToolChoice => self.tool_choice = Some(tool_choice(value).map_err(bad)?),
            Setting::ProviderOptions => {
                self.provider_options = Some(provider_options(value).map_err(bad)?)
            }
        }
        Ok(())
    }

    /// Checks the settings against the definition's tools: a `toolChoice` naming a tool needs
    /// that tool (`name` is the option's spelling, for the error).
    pub fn check_tools(&self, name: &str, tools: &[ToolSpec]) -> Result<(), String> {
        match &self.tool_choice {
            Some(ToolChoice::Tool(tool)) if !tools.iter().any(|t| &t.name == tool) => {
                Err(format!("{name} names a tool the definition does not have"))
            }
            _ => Ok(()),
        }
    }

    /// The settings as a JSON object in the AI SDK's call-option names (only those set), for a
    /// host's own model (`stream(request)`: `request.settings`).
    pub fn to_value(&self) -> Value {
        let mut out = Map::new();
        if let Some(text) = &self.instructions {
            out.insert("instructions".into(), Value::String(text.clone()));
        }
        if let Some(t) = self.temperature {
            out.insert("temperature".into(), number(t));
        }
        if let Some(n) = self.max_output_tokens {
            out.insert("maxOutputTokens".into(), Value::from(n));
        }
        if let Some(p) = self.top_p {
            out.insert("topP".into(), number(p));
        }
        if !self.stop_sequences.is_empty() {
            let list = self.stop_sequences.iter().cloned().map(Value::String);
            out.insert("stopSequences".into(), Value::Array(list.collect()));
        }
        if let Some(choice) = &self.tool_choice {
            out.insert("toolChoice".into(), choice.to_value());
        }
        if let Some(options) = &self.provider_options {
            out.insert("providerOptions".into(), Value::Object(options.clone()));
        }
        Value::Object(out)
    }
}

impl ToolChoice {
    /// The AI SDK's call option: `{ type: 'auto' | 'none' | 'required' }` or
    /// `{ type: 'tool', toolName }`.
    pub fn to_value(&self) -> Value {
        let kind = match self {
            ToolChoice::Auto => "auto",
            ToolChoice::None => "none",
            ToolChoice::Required => "required",
            ToolChoice::Tool(_) => "tool",
        };
        let mut out = Map::new();
        out.insert("type".into(), Value::String(kind.into()));
        if let ToolChoice::Tool(name) = self {
            out.insert("toolName".into(), Value::String(name.clone()));
        }
        Value::Object(out)
    }
}

/// A finite number, as JSON writes it (integers stay integers).
pub(crate) fn number(n: f64) -> Value {
    serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
}

fn number_in(value: &Value, min: f64, max: f64) -> Option<f64> {
    value
        .as_f64()
        .filter(|n| n.is_finite() && (min..=max).contains(n))
}

fn stop_sequences(value: &Value) -> Result<Vec<String>, String> {
    let rule = || {
        format!(
            "must be an array of at most {STOP_SEQUENCES_MAX} non-empty strings of at most \
             {STOP_SEQUENCE_CHARS_MAX} characters"
        )
    };
    let items = value.as_array().ok_or_else(rule)?;
    if items.len() > STOP_SEQUENCES_MAX {
        return Err(rule());
    }
    items
        .iter()
        .map(|item| {
            item.as_str()
                .filter(|s| !s.is_empty() && s.chars().count() <= STOP_SEQUENCE_CHARS_MAX)
                .map(str::to_owned)
                .ok_or_else(rule)
        })
        .collect()
}

/// `'auto' | 'none' | 'required'`, or `{ type: 'auto' | 'none' | 'required' }`, or
/// `{ type: 'tool', toolName }` (the AI SDK's spellings).
fn tool_choice(value: &Value) -> Result<ToolChoice, String> {
    let rule = || "must be 'auto', 'none', 'required' or { type: 'tool', toolName }".to_string();
    let kind = match value {
        Value::String(s) => s.as_str(),
        Value::Object(o) => o.get("type").and_then(Value::as_str).ok_or_else(rule)?,
        _ => return Err(rule()),
    };
    match kind {
        "auto" => Ok(ToolChoice::Auto),
        "none" => Ok(ToolChoice::None),
        "required" => Ok(ToolChoice::Required),
        "tool" => value
            .get("toolName")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(|s| ToolChoice::Tool(s.to_owned()))
            .ok_or_else(rule),
        _ => Err(rule()),
    }
}

/// An object of objects (one per provider), within the bounded-JSON limits.
fn provider_options(value: &Value) -> Result<Map<String, Value>, String> {
    let rule = || {
        "must be an object of objects keyed by provider, within the bounded-JSON limits".to_string()
    };
    let options = value.as_object().ok_or_else(rule)?;
    if !options.values().all(Value::is_object) || !within_bounds(value, &BOUNDED_JSON) {
        return Err(rule());
    }
    Ok(options.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_setting_is_bounded_and_named_in_its_error() {
        let cases: Vec<(Setting, Value, Result<Value, &str>)> = vec![
            (Setting::Instructions, json!("Be brief."), Ok(json!({"instructions": "Be brief."}))),
            (Setting::Instructions, json!(""), Ok(json!({}))),
            (Setting::Instructions, json!(3), Err("x must be a string of at most 65536 characters")),
            (Setting::Temperature, json!(0.7), Ok(json!({"temperature": 0.7}))),
            (Setting::Temperature, json!(0), Ok(json!({"temperature": 0.0}))),
            (Setting::Temperature, json!(2.5), Err("x must be a number from 0 to 2")),
            (Setting::Temperature, json!("1"), Err("x must be a number from 0 to 2")),
            (Setting::TopP, json!(1), Ok(json!({"topP": 1.0}))),
            (Setting::TopP, json!(-0.1), Err("x must be a number from 0 to 1")),
            (Setting::MaxOutputTokens, json!(256), Ok(json!({"maxOutputTokens": 256}))),
            (Setting::MaxOutputTokens, json!(0), Err("x must be an integer from 1 to 1000000")),
            (Setting::MaxOutputTokens, json!(1.5), Err("x must be an integer from 1 to 1000000")),
            (Setting::StopSequences, json!(["END"]), Ok(json!({"stopSequences": ["END"]}))),
            (Setting::StopSequences, json!([]), Ok(json!({}))),
            (Setting::StopSequences, json!([""]), Err("x must be an array of at most 16 non-empty strings of at most 256 characters")),
            (Setting::StopSequences, Value::Array(vec![json!("a"); 17]), Err("x must be an array of at most 16 non-empty strings of at most 256 characters")),
            (Setting::ToolChoice, json!("required"), Ok(json!({"toolChoice": {"type": "required"}}))),
            (Setting::ToolChoice, json!({"type": "none"}), Ok(json!({"toolChoice": {"type": "none"}}))),
            (Setting::ToolChoice, json!({"type": "tool", "toolName": "lookup"}), Ok(json!({"toolChoice": {"type": "tool", "toolName": "lookup"}}))),
            (Setting::ToolChoice, json!({"type": "tool"}), Err("x must be 'auto', 'none', 'required' or { type: 'tool', toolName }")),
            (Setting::ToolChoice, json!("any"), Err("x must be 'auto', 'none', 'required' or { type: 'tool', toolName }")),
            (Setting::ProviderOptions, json!({"anthropic": {"thinking": {"type": "enabled"}}}), Ok(json!({"providerOptions": {"anthropic": {"thinking": {"type": "enabled"}}}}))),
            (Setting::ProviderOptions, json!({"openai": true}), Err("x must be an object of objects keyed by provider, within the bounded-JSON limits")),
            (Setting::ProviderOptions, json!([]), Err("x must be an object of objects keyed by provider, within the bounded-JSON limits")),
        ];
        for (setting, value, want) in cases {
            let mut settings = CallSettings::default();
            let got = settings
                .set(setting, "x", &value)
                .map(|()| settings.to_value());
            match want {
                Ok(v) => assert_eq!(got, Ok(v), "{setting:?} {value}"),
                Err(e) => assert_eq!(got, Err(e.to_owned()), "{setting:?} {value}"),
            }
        }
    }

    #[test]
    fn a_tool_choice_must_name_a_tool_of_the_definition() {
        let mut settings = CallSettings::default();
        settings
            .set(
                Setting::ToolChoice,
                "toolChoice",
                &json!({"type": "tool", "toolName": "lookup"}),
            )
            .expect("valid");
        let tool = |name: &str| ToolSpec {
            name: name.into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
            requires_confirmation: false,
            host_validates: false,
        };
        assert_eq!(
            settings.check_tools("toolChoice", &[tool("lookup")]),
            Ok(())
        );
        assert_eq!(
            settings.check_tools("toolChoice", &[tool("other")]),
            Err("toolChoice names a tool the definition does not have".into())
        );
    }
}
