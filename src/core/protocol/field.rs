//! Field-level validation errors and the small object reader every decoder in this module uses.
//! Decoders walk untrusted JSON by hand (instead of `serde::Deserialize`) so that each failure
//! names the exact field path and rule, e.g.
//! `payload.usage.totalTokens must be a safe integer >= 0`.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde_json::{Map, Value};

/// One broken rule at one field path. The text is meant for developers integrating a client;
/// it never contains internal details, only the path and the rule the value broke.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// Dotted path from the decoded root, e.g. `messages[3].createdAt`; empty for the root.
    pub path: String,
    /// The rule, phrased to follow the path: `must be a non-empty string`.
    pub rule: Cow<'static, str>,
}

impl FieldError {
    pub fn new(path: impl Into<String>, rule: impl Into<Cow<'static, str>>) -> Self {
        Self {
            path: path.into(),
            rule: rule.into(),
        }
    }

    /// `<path> <rule>`, or `the input <rule>` for the root.
    pub fn message(&self) -> String {
        if self.path.is_empty() {
            format!("the input {}", self.rule)
        } else {
            format!("{} {}", self.path, self.rule)
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for FieldError {}

pub(crate) const MUST_BE_OBJECT: &str = "must be a JSON object";
pub(crate) const MUST_BE_STRING: &str = "must be a string";
pub(crate) const MUST_BE_NON_EMPTY_STRING: &str = "must be a non-empty string";
pub(crate) const MUST_BE_SAFE_ID: &str =
    "must be a SafeId (1 to 128 characters of A-Z a-z 0-9 . _ : -, starting with a letter or digit)";
pub(crate) const MUST_BE_SAFE_UINT: &str = "must be a safe integer >= 0";
pub(crate) const MUST_BE_BOOL: &str = "must be a boolean";
pub(crate) const MUST_BE_ARRAY: &str = "must be an array";

/// `parent.key`, or `key` at the root.
pub(crate) fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

/// `parent[index]`.
pub(crate) fn index(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

/// A JSON object being decoded, with its path for error messages.
/// Absent keys are `None`; an explicit `null` is a present value (and usually a wrong one),
/// as in JavaScript where only `undefined` counts as absent.
pub(crate) struct Obj<'a> {
    map: &'a Map<String, Value>,
    path: &'a str,
}

impl<'a> Obj<'a> {
    pub(crate) fn new(v: &'a Value, path: &'a str) -> Result<Self, FieldError> {
        match v {
            Value::Object(map) => Ok(Self { map, path }),
            _ => Err(FieldError::new(path, MUST_BE_OBJECT)),
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    pub(crate) fn path_of(&self, key: &str) -> String {
        join(self.path, key)
    }

    /// A required field that `parse` accepts.
    pub(crate) fn required<T>(
        &self,
        key: &str,
        rule: &'static str,
        parse: impl FnOnce(&'a Value) -> Option<T>,
    ) -> Result<T, FieldError> {
        self.get(key)
            .and_then(parse)
            .ok_or_else(|| FieldError::new(self.path_of(key), rule))
    }

    /// An optional field: absent is `None`; present must satisfy `parse`.
    pub(crate) fn optional<T>(
        &self,
        key: &str,
        rule: &'static str,
        parse: impl FnOnce(&'a Value) -> Option<T>,
    ) -> Result<Option<T>, FieldError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => parse(v)
                .map(Some)
                .ok_or_else(|| FieldError::new(self.path_of(key), rule)),
        }
    }

    pub(crate) fn string(&self, key: &str) -> Result<String, FieldError> {
        self.required(key, MUST_BE_STRING, as_string)
    }

    pub(crate) fn non_empty_string(&self, key: &str) -> Result<String, FieldError> {
        self.required(key, MUST_BE_NON_EMPTY_STRING, as_non_empty_string)
    }

    pub(crate) fn optional_string(&self, key: &str) -> Result<Option<String>, FieldError> {
        self.optional(key, MUST_BE_STRING, as_string)
    }

    pub(crate) fn safe_id(&self, key: &str) -> Result<String, FieldError> {
        self.required(key, MUST_BE_SAFE_ID, as_safe_id)
    }
}

pub(crate) fn as_string(v: &Value) -> Option<String> {
    v.as_str().map(str::to_owned)
}

pub(crate) fn as_non_empty_string(v: &Value) -> Option<String> {
    v.as_str().filter(|s| !s.is_empty()).map(str::to_owned)
}

pub(crate) fn as_safe_id(v: &Value) -> Option<String> {
    v.as_str()
        .filter(|s| crate::checks::is_safe_id(s))
        .map(str::to_owned)
}

/// A plain JSON object, copied. Callers check structural bounds first, so the copy's
/// recursion depth is bounded.
pub(crate) fn as_object(v: &Value) -> Option<Map<String, Value>> {
    v.as_object().cloned()
}

/// One of a string enum's wire names, using the enum's serde names as the single source.
pub(crate) fn as_enum<'a, T: Deserialize<'a>>(v: &'a Value) -> Option<T> {
    if v.is_string() {
        T::deserialize(v).ok()
    } else {
        None
    }
}
