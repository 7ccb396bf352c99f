//! Tool input checked against the tool's JSON Schema (`parameters`) before the tool runs: input
//! that breaks it never reaches `execute`; the model reads what is wrong as the call's result
//! (as the AI SDK does) and may try again.
//!
//! The subset tools use, checked:
//! - `type` (one or a list; `integer` is a number without a fraction), OpenAPI's `nullable`,
//!   `enum`, `const`, boolean schemas;
//! - strings: `minLength`, `maxLength` (in characters);
//! - numbers: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` (the number form and
//!   draft 4's boolean form), `multipleOf`;
//! - objects: `properties`, `required`, `additionalProperties` (`false` or a schema),
//!   `minProperties`, `maxProperties`;
//! - arrays: `items` (one schema, or draft 4's list), `prefixItems`, `minItems`, `maxItems`,
//!   `uniqueItems`;
//! - `allOf`, `anyOf`, `oneOf`, `not`.
//!
//! Not checked (accepted as they are): `pattern` and `patternProperties` (no regular
//! expressions in the core; `additionalProperties` is then not judged either), `format`, `$ref`,
//! `if`/`then`/`else`, `dependencies`. Bounded: one check visits at most
//! `TOOL_INPUT_CHECK_STEPS_MAX` (schema, value) pairs (a schema too costly to check fails the
//! input, which is never run unchecked), reports at most `TOOL_INPUT_ISSUES_MAX` issues and its
//! text is at most `TOOL_INPUT_ERROR_CHARS_MAX` characters. Issues quote the schema (names,
//! allowed values), never the input's values.

use serde_json::{Map, Value};

use crate::limits::{
    TOOL_INPUT_CHECK_STEPS_MAX, TOOL_INPUT_ERROR_CHARS_MAX, TOOL_INPUT_ISSUES_MAX,
    TOOL_INPUT_ISSUE_CHARS_MAX,
};

/// One thing wrong with an input: where (`input`, `input.city`, `input.items[0]`) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputIssue {
    pub path: String,
    pub message: String,
}

/// What a check found: the first issues and how many there were in all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputIssues {
    pub issues: Vec<InputIssue>,
    pub total: usize,
}

impl InputIssues {
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Issues a host's schema reported (a Standard Schema's `issues`): `path` as the list of
    /// keys it gave, `message` its text (cut to `TOOL_INPUT_ISSUE_CHARS_MAX`).
    pub fn from_host(reported: Vec<(Vec<PathKey>, String)>, total: usize) -> Self {
        let issues = reported
            .into_iter()
            .take(TOOL_INPUT_ISSUES_MAX)
            .map(|(keys, message)| InputIssue {
                path: keys
                    .iter()
                    .fold("input".to_owned(), |path, key| key.append_to(path)),
                message: cut(message.trim(), TOOL_INPUT_ISSUE_CHARS_MAX),
            })
            .collect();
        Self {
            issues,
            total: total.max(1),
        }
    }

    /// What the model reads: `Invalid input for tool <name>: <path> <message>; ...`, bounded.
    pub fn text(&self, tool: &str) -> String {
        let mut text = format!("Invalid input for tool {tool}:");
        for (i, issue) in self.issues.iter().enumerate() {
            text.push_str(if i == 0 { " " } else { "; " });
            text.push_str(&issue.path);
            text.push(' ');
            text.push_str(&issue.message);
        }
        if self.issues.is_empty() {
            text.push_str(" input is invalid");
        }
        let more = self.total.saturating_sub(self.issues.len());
        if more > 0 {
            text.push_str(&format!(" (and {more} more)"));
        }
        text.push('.');
        cut(&text, TOOL_INPUT_ERROR_CHARS_MAX)
    }
}

/// A step of an issue's path as a host reported it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathKey {
    Key(String),
    Index(u64),
}

impl PathKey {
    fn append_to(&self, path: String) -> String {
        match self {
            PathKey::Index(i) => format!("{path}[{i}]"),
            PathKey::Key(key) => member(&path, key),
        }
    }
}

/// Checks `input` against `schema`; empty issues when it conforms.
pub fn check_input(schema: &Value, input: &Value) -> InputIssues {
    let mut check = Check {
        steps: 0,
        exhausted: false,
        found: InputIssues::default(),
        quiet: 0,
    };
    check.value(schema, input, "input");
    check.found
}

struct Check {
    steps: usize,
    /// The step budget ran out (reported once; every later step fails).
    exhausted: bool,
    found: InputIssues,
    /// > 0 inside an `anyOf` / `oneOf` / `not` branch: issues are counted by the branch, not
    /// reported.
    quiet: u32,
}

impl Check {
    /// Checks one value; false when it does not conform.
    fn value(&mut self, schema: &Value, value: &Value, path: &str) -> bool {
        if !self.step(path) {
            return false;
        }
        let schema = match schema {
            Value::Bool(true) => return true,
            Value::Bool(false) => return self.issue(path, "is not allowed".into()),
            Value::Object(schema) => schema,
            _ => return true, // not a schema: nothing to check
        };
        if !self.types(schema, value, path) {
            return false; // the keywords below assume the type
        }
        let mut ok = true;
        if let Some(options) = schema.get("enum").and_then(Value::as_array) {
            if !options.iter().any(|o| json_eq(o, value)) {
                ok &= self.issue(path, format!("must be one of {}", list(options)));
            }
        }
        if let Some(expected) = schema.get("const") {
            if !json_eq(expected, value) {
                ok &= self.issue(path, format!("must be {}", quote(expected)));
            }
        }
        ok &= match value {
            Value::String(s) => self.string(schema, s, path),
            Value::Number(_) => self.number(schema, value.as_f64().unwrap_or(0.0), path),
            Value::Object(o) => self.object(schema, o, path),
            Value::Array(a) => self.array(schema, a, path),
            _ => true,
        };
        ok & self.combinators(schema, value, path)
    }

    fn types(&mut self, schema: &Map<String, Value>, value: &Value, path: &str) -> bool {
        let mut names: Vec<&str> = match schema.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
            _ => return true,
        };
        if schema.get("nullable") == Some(&Value::Bool(true)) {
            names.push("null");
        }
        if names.iter().any(|t| is_type(t, value)) {
            return true;
        }
        let wanted = names
            .iter()
            .map(|t| article(t))
            .collect::<Vec<_>>()
            .join(" or ");
        self.issue(path, format!("must be {wanted}"))
    }

    fn string(&mut self, schema: &Map<String, Value>, s: &str, path: &str) -> bool {
        let chars = s.chars().count() as f64;
        let mut ok = true;
        if let Some(min) = number_at(schema, "minLength").filter(|&m| chars < m) {
            ok &= self.issue(path, format!("must have at least {min} characters"));
        }
        if let Some(max) = number_at(schema, "maxLength").filter(|&m| chars > m) {
            ok &= self.issue(path, format!("must have at most {max} characters"));
        }
        ok
    }

    fn number(&mut self, schema: &Map<String, Value>, n: f64, path: &str) -> bool {
        let mut ok = true;
        let exclusive = |key: &str| schema.get(key) == Some(&Value::Bool(true));
        if let Some(min) = number_at(schema, "minimum") {
            if n < min || (exclusive("exclusiveMinimum") && n <= min) {
                let word = if exclusive("exclusiveMinimum") {
                    "greater than"
                } else {
                    "at least"
                };
                ok &= self.issue(path, format!("must be {word} {min}"));
            }
        }
        if let Some(max) = number_at(schema, "maximum") {
            if n > max || (exclusive("exclusiveMaximum") && n >= max) {
                let word = if exclusive("exclusiveMaximum") {
                    "less than"
                } else {
                    "at most"
                };
                ok &= self.issue(path, format!("must be {word} {max}"));
            }
        }
        if let Some(min) = number_at(schema, "exclusiveMinimum").filter(|&m| n <= m) {
            ok &= self.issue(path, format!("must be greater than {min}"));
        }
        if let Some(max) = number_at(schema, "exclusiveMaximum").filter(|&m| n >= m) {
            ok &= self.issue(path, format!("must be less than {max}"));
        }
        if let Some(step) = number_at(schema, "multipleOf").filter(|&m| m > 0.0) {
            let ratio = n / step;
            if (ratio - ratio.round()).abs() > 1e-9 * ratio.abs().max(1.0) {
                ok &= self.issue(path, format!("must be a multiple of {step}"));
            }
        }
        ok
    }

    fn object(&mut self, schema: &Map<String, Value>, o: &Map<String, Value>, path: &str) -> bool {
        let mut ok = true;
        let properties = schema.get("properties").and_then(Value::as_object);
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !o.contains_key(name) {
                ok &= self.issue(path, format!("must have the property {}", quote_key(name)));
            }
        }
        let count = o.len() as f64;
        if let Some(min) = number_at(schema, "minProperties").filter(|&m| count < m) {
            ok &= self.issue(path, format!("must have at least {min} properties"));
        }
        if let Some(max) = number_at(schema, "maxProperties").filter(|&m| count > m) {
            ok &= self.issue(path, format!("must have at most {max} properties"));
        }
        let additional = schema.get("additionalProperties");
        // Without regular expressions, which keys patternProperties claims is unknown.
        let judge_additional = !schema.contains_key("patternProperties");
        for (key, item) in o {
            let at = member(path, key);
            match properties.and_then(|p| p.get(key)) {
                Some(sub) => ok &= self.value(sub, item, &at),
                None if !judge_additional => {}
                None => match additional {
                    Some(Value::Bool(false)) => {
                        ok &= self.issue(&at, "is not an allowed property".into())
                    }
                    Some(sub @ Value::Object(_)) => ok &= self.value(sub, item, &at),
                    _ => {}
                },
            }
        }
        ok
    }

    fn array(&mut self, schema: &Map<String, Value>, a: &[Value], path: &str) -> bool {
        let mut ok = true;
        let count = a.len() as f64;
        if let Some(min) = number_at(schema, "minItems").filter(|&m| count < m) {
            ok &= self.issue(path, format!("must have at least {min} items"));
        }
        if let Some(max) = number_at(schema, "maxItems").filter(|&m| count > m) {
            ok &= self.issue(path, format!("must have at most {max} items"));
        }
        let (prefix, rest): (&[Value], Option<&Value>) =
            match (schema.get("prefixItems"), schema.get("items")) {
                (Some(Value::Array(prefix)), items) => (prefix, items),
                (_, Some(Value::Array(tuple))) => (tuple, schema.get("additionalItems")),
                (_, items) => (&[], items),
            };
        for (i, item) in a.iter().enumerate() {
            let sub = prefix.get(i).or(rest);
            if let Some(sub) = sub {
                ok &= self.value(sub, item, &format!("{path}[{i}]"));
            }
        }
        if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
            'outer: for (i, x) in a.iter().enumerate() {
                for y in &a[i + 1..] {
                    if !self.step(path) {
                        return false;
                    }
                    if json_eq(x, y) {
                        ok &= self.issue(path, "must not have duplicate items".into());
                        break 'outer;
                    }
                }
            }
        }
        ok
    }

    fn combinators(&mut self, schema: &Map<String, Value>, value: &Value, path: &str) -> bool {
        let mut ok = true;
        for sub in schema
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            ok &= self.value(sub, value, path);
        }
        if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
            if self.matching(branches, value, path, 1) == 0 {
                ok &= self.issue(path, "must match one of the allowed schemas".into());
            }
        }
        if let Some(branches) = schema.get("oneOf").and_then(Value::as_array) {
            if self.matching(branches, value, path, 2) != 1 {
                ok &= self.issue(path, "must match exactly one of the allowed schemas".into());
            }
        }
        if let Some(sub) = schema.get("not") {
            if self.matching(std::slice::from_ref(sub), value, path, 1) == 1 {
                ok &= self.issue(path, "must not match the excluded schema".into());
            }
        }
        ok
    }

    /// How many of `branches` `value` matches, counting no further than `enough`.
    fn matching(&mut self, branches: &[Value], value: &Value, path: &str, enough: usize) -> usize {
        let mut matched = 0;
        self.quiet += 1;
        for branch in branches {
            let before = self.found.total;
            let conforms = self.value(branch, value, path);
            if !self.exhausted {
                self.found.total = before; // a branch's own issues are not the input's
            }
            if conforms {
                matched += 1;
                if matched >= enough {
                    break;
                }
            }
        }
        self.quiet = self.quiet.saturating_sub(1);
        matched
    }

    /// Counts one step; false once the budget is spent (the first time, reported whatever
    /// branch the check is in: the input is refused, not run unchecked).
    fn step(&mut self, path: &str) -> bool {
        self.steps += 1;
        if self.steps <= TOOL_INPUT_CHECK_STEPS_MAX {
            return true;
        }
        if !self.exhausted {
            self.exhausted = true;
            self.found.total += 1;
            self.found.issues.truncate(TOOL_INPUT_ISSUES_MAX - 1);
            self.found.issues.push(InputIssue {
                path: path.to_owned(),
                message: "could not be checked: the schema is too costly".into(),
            });
        }
        false
    }

    /// Records an issue (unless inside a branch); always false, for `ok &= ...`.
    fn issue(&mut self, path: &str, message: String) -> bool {
        if self.exhausted {
            return false; // the input is refused as too costly; nothing else is known
        }
        self.found.total += 1;
        if self.quiet == 0 && self.found.issues.len() < TOOL_INPUT_ISSUES_MAX {
            self.found.issues.push(InputIssue {
                path: path.to_owned(),
                message,
            });
        }
        false
    }
}

fn is_type(name: &str, value: &Value) -> bool {
    match name {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.as_f64().is_some_and(|n| n.fract() == 0.0),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        _ => false,
    }
}

fn article(name: &str) -> String {
    match name {
        "integer" | "object" | "array" => format!("an {name}"),
        "null" => "null".into(),
        other => format!("a {other}"),
    }
}

fn number_at(schema: &Map<String, Value>, key: &str) -> Option<f64> {
    schema
        .get(key)
        .and_then(Value::as_f64)
        .filter(|n| n.is_finite())
}

/// JSON equality with numbers compared by value (`1` equals `1.0`).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// A schema value as the issue quotes it (cut short: schemas are the author's, but may be long).
fn quote(value: &Value) -> String {
    cut(&value.to_string(), 80)
}

fn list(options: &[Value]) -> String {
    cut(
        &options
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        200,
    )
}

fn quote_key(key: &str) -> String {
    Value::String(cut(key, 64)).to_string()
}

/// `path.key`, or `path["key"]` when the key is not a plain name.
fn member(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key.len() <= 64
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    if plain {
        format!("{path}.{key}")
    } else {
        format!("{path}[{}]", quote_key(key))
    }
}

/// The first `max` characters of `text` (with `…` when cut).
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}
