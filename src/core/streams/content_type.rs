//! Content types (Durable Streams protocol §5.1, §5.2, §4.2, §9, §12.4).
//!
//! Facts relied on:
//! - Two content types match when their media types match: the part before any `;`, trimmed,
//!   compared case-insensitively (`application/json; charset=utf-8` matches `APPLICATION/JSON`).
//! - PUT: the content type is optional; a missing, empty or malformed one becomes
//!   `application/octet-stream`, except on a fork, where a missing one inherits the source's.
//!   The stream keeps the value as given and reports it back (`Content-Type` of GET and HEAD).
//! - An idempotent PUT compares media types (missing counting as `application/octet-stream`).
//! - A fork that names a content type must match the source's: 409 otherwise.
//! - POST with a body: `Content-Type` is required (400 when missing) and must match the stream's
//!   (409 when it does not). A close-only POST (empty body) is never rejected for its content type.
//! - JSON mode is on when the media type is `application/json`.
//! - SSE carries `text/*` and `application/json` data as text; everything else is base64 with
//!   the response header `stream-sse-data-encoding: base64`.

use crate::diagnostics::{streams as rows, Row};
use std::fmt;

use super::Rejection;

/// The default content type of a stream created without a usable one.
pub const DEFAULT_CONTENT_TYPE: &str = "application/octet-stream";

/// The content type a PUT resolves to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CreateContentType {
    /// Use this value, as given (or the default).
    Use(String),
    /// A fork without its own content type: take the source's.
    InheritFromSource,
}

/// Why a content type was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContentTypeError {
    /// POST with a body but no `Content-Type`: 400.
    Missing,
    /// Valid but not the stream's type: 409.
    Mismatch,
}

/// The media type: before any `;`, trimmed, lower-cased.
pub fn media_type(content_type: &str) -> String {
    media_type_raw(content_type).to_ascii_lowercase()
}

/// True when both name the same media type.
pub fn matches(a: &str, b: &str) -> bool {
    media_type_raw(a).eq_ignore_ascii_case(media_type_raw(b))
}

/// `type/subtype` made of RFC 9110 token characters (parameters after `;` are not checked).
pub fn is_well_formed(content_type: &str) -> bool {
    let media = media_type(content_type);
    match media.split_once('/') {
        Some((kind, sub)) => is_token(kind) && is_token(sub),
        None => false,
    }
}

/// Resolves the `Content-Type` of a PUT (`is_fork`: the PUT carries `Stream-Forked-From`).
pub fn resolve_create_content_type(header: Option<&str>, is_fork: bool) -> CreateContentType {
    match header {
        Some(value) if is_well_formed(value) => CreateContentType::Use(value.trim().to_owned()),
        _ if is_fork => CreateContentType::InheritFromSource,
        _ => CreateContentType::Use(DEFAULT_CONTENT_TYPE.to_owned()),
    }
}

/// A fork's resolved content type against its source's: equal media types or 409.
pub fn check_fork_content_type(
    requested: &CreateContentType,
    source: &str,
) -> Result<String, ContentTypeError> {
    match requested {
        CreateContentType::InheritFromSource => Ok(source.to_owned()),
        CreateContentType::Use(value) if matches(value, source) => Ok(value.clone()),
        CreateContentType::Use(_) => Err(ContentTypeError::Mismatch),
    }
}

/// The `Content-Type` of a POST that carries a body, against the stream's.
pub fn check_append_content_type(
    stream: &str,
    header: Option<&str>,
) -> Result<(), ContentTypeError> {
    match header {
        None => Err(ContentTypeError::Missing),
        Some(value) if value.trim().is_empty() => Err(ContentTypeError::Missing),
        Some(value) if matches(value, stream) => Ok(()),
        Some(_) => Err(ContentTypeError::Mismatch),
    }
}

/// JSON mode (Durable Streams protocol §9.1) applies to the stream.
pub fn is_json(content_type: &str) -> bool {
    media_type_raw(content_type).eq_ignore_ascii_case("application/json")
}

/// SSE must base64-encode this stream's data events.
pub fn sse_needs_base64(content_type: &str) -> bool {
    let media = media_type(content_type);
    !(media.starts_with("text/") || media == "application/json")
}

/// [`media_type`] before lower-casing: the checks on every append compare it
/// case-insensitively instead of allocating a lower-cased copy.
fn media_type_raw(content_type: &str) -> &str {
    content_type.split(';').next().unwrap_or_default().trim()
}

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

impl fmt::Display for ContentTypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ContentTypeError::Missing => "Content-Type is required when appending data",
            ContentTypeError::Mismatch => "Content-Type does not match the stream's content type",
        })
    }
}

impl Rejection for ContentTypeError {
    fn row(&self) -> Row {
        match self {
            ContentTypeError::Missing => rows::CONTENT_TYPE_MISSING,
            ContentTypeError::Mismatch => rows::CONTENT_TYPE_MISMATCH,
        }
    }
}
