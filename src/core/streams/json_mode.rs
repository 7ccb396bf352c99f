//! JSON mode (Durable Streams protocol §9.1): streams whose media type is `application/json`.
//!
//! Facts relied on:
//! - The server keeps message boundaries. A POST body must be valid JSON (400 otherwise). A body
//!   that is an array is flattened by exactly one level: each element is one message
//!   (`[[1,2],[3,4]]` stores `[1,2]` and `[3,4]`; `[[[1,2,3]]]` stores `[[1,2,3]]`). Any other
//!   value is one message.
//! - An empty array is 400 on POST (a no-op append is a client bug) but fine on PUT, where it
//!   creates the stream with no messages.
//! - GET answers `Content-Type: application/json` and a JSON array of every message in the range,
//!   `[]` when there is none (also for catch-up `offset=now`).
//!
//! Messages are stored as the client's own JSON text with insignificant whitespace removed: key
//! order and number spelling are kept, and the text is validated by serde_json before it is split.
//! Validation accepts exactly what serde_json parses into a `Value`, so every stored message
//! stays readable by the server's own code: a number beyond f64 range (`1e400`, which JavaScript
//! reads as `Infinity`) is refused like the turn decoder refuses it.

use crate::diagnostics::{streams as rows, Row};
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::Rejection;
use crate::limits;

/// Whether an empty array is allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonWrite {
    /// PUT with initial data: `[]` creates an empty stream.
    Create,
    /// POST: `[]` is refused.
    Append,
}

/// Why a JSON body was refused (400).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonBodyError {
    /// Not UTF-8, not JSON, trailing data, or nested deeper than `STREAM_JSON_DEPTH_MAX`.
    Invalid,
    /// `[]` on an append.
    EmptyArray,
}

/// Splits a JSON body into the messages to store, each as compact JSON text.
pub fn flatten_json_body(body: &[u8], write: JsonWrite) -> Result<Vec<String>, JsonBodyError> {
    serde_json::from_slice::<Parsable>(body).map_err(|_| JsonBodyError::Invalid)?;
    // Valid JSON is valid UTF-8, so this never fails after the check above.
    let text = std::str::from_utf8(body).map_err(|_| JsonBodyError::Invalid)?;
    let compact = minify(text).ok_or(JsonBodyError::Invalid)?;
    let Some(inner) = compact.strip_prefix('[').and_then(|s| s.strip_suffix(']')) else {
        return Ok(vec![compact]);
    };
    if inner.is_empty() {
        return match write {
            JsonWrite::Create => Ok(Vec::new()),
            JsonWrite::Append => Err(JsonBodyError::EmptyArray),
        };
    }
    Ok(split_top_level(inner))
}

/// The body of a JSON-mode read: `[m1,m2,...]`, or `[]` with no messages.
pub fn json_array_body<S: AsRef<str>>(messages: &[S]) -> String {
    let len = messages.iter().map(|m| m.as_ref().len() + 1).sum::<usize>() + 2;
    let mut out = String::with_capacity(len);
    out.push('[');
    for (i, message) in messages.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(message.as_ref());
    }
    out.push(']');
    out
}

/// Removes JSON whitespace outside strings; `None` when nesting exceeds
/// [`limits::STREAM_JSON_DEPTH_MAX`]. The input must be valid JSON.
fn minify(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut scan = Scan::default();
    for c in text.chars() {
        if scan.in_string(c) {
            out.push(c);
        } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
            if scan.depth_after(c) > limits::STREAM_JSON_DEPTH_MAX {
                return None;
            }
            out.push(c);
        }
    }
    Some(out)
}

/// Splits the compact inside of an array at its top-level commas.
fn split_top_level(inner: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut start = 0usize;
    let mut scan = Scan::default();
    for (i, c) in inner.char_indices() {
        if !scan.in_string(c) && scan.depth_after(c) == 0 && c == ',' {
            items.push(inner[start..i].to_owned());
            start = i + 1;
        }
    }
    items.push(inner[start..].to_owned());
    items
}

/// A JSON value that serde_json can parse into a `Value`, checked without building one:
/// `deserialize_any` parses every number (so `1e400` fails as "out of range") and string (so a
/// lone surrogate escape fails), where `IgnoredAny` only skips over them.
struct Parsable;

impl<'de> Deserialize<'de> for Parsable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Parsable)
    }
}

impl<'de> Visitor<'de> for Parsable {
    type Value = Parsable;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Parsable, E> {
        Ok(Parsable)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Parsable, E> {
        Ok(Parsable)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Parsable, E> {
        Ok(Parsable)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Parsable, E> {
        Ok(Parsable)
    }
    fn visit_str<E>(self, _: &str) -> Result<Parsable, E> {
        Ok(Parsable)
    }
    fn visit_unit<E>(self) -> Result<Parsable, E> {
        Ok(Parsable)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Parsable, A::Error> {
        while seq.next_element::<Parsable>()?.is_some() {}
        Ok(Parsable)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parsable, A::Error> {
        while map.next_entry::<Parsable, Parsable>()?.is_some() {}
        Ok(Parsable)
    }
}

/// Where a character-by-character walk through valid JSON text is: inside a string literal
/// or not, and how deeply nested in arrays and objects.
#[derive(Default)]
struct Scan {
    in_string: bool,
    escaped: bool,
    depth: usize,
}

impl Scan {
    /// Feeds `c`; true when it belongs to a string literal (its quotes included), and then it
    /// must not be fed to [`Scan::depth_after`].
    fn in_string(&mut self, c: char) -> bool {
        if self.in_string {
            match (self.escaped, c) {
                (true, _) => self.escaped = false,
                (false, '\\') => self.escaped = true,
                (false, '"') => self.in_string = false,
                _ => {}
            }
            return true;
        }
        self.in_string = c == '"';
        self.in_string
    }

    /// Feeds `c` (outside strings) and returns the nesting depth after it.
    fn depth_after(&mut self, c: char) -> usize {
        match c {
            '[' | '{' => self.depth += 1,
            ']' | '}' => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
        self.depth
    }
}

impl fmt::Display for JsonBodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            JsonBodyError::Invalid => "the body of a JSON stream must be valid JSON",
            JsonBodyError::EmptyArray => "an append to a JSON stream must not be an empty array",
        })
    }
}

impl Rejection for JsonBodyError {
    fn row(&self) -> Row {
        match self {
            JsonBodyError::Invalid => rows::JSON_INVALID,
            JsonBodyError::EmptyArray => rows::JSON_EMPTY_ARRAY,
        }
    }
}
