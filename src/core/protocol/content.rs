//! The ordered assistant content envelope (`agentskit.chat.content` v1, AgentsKit Chat's
//! protocol package): an assistant message's `content` that interleaves text and component
//! frames. It is `\u{1e}agentskit.chat.content/1\n` followed by one JSON record per line, each
//! ending in `\n`; a record is `{ kind: 'text', text }` or `{ kind: 'component', frame }`.
//!
//! [`decode_assistant_content`] also reads an envelope still being streamed: a prefix of the
//! header is an empty, incomplete result, and a last record without its `\n` is left out
//! (`complete: false`). [`AssistantContentEncoder`] writes the header before its first record.

use serde_json::{json, Value};

use super::component::{render_frame, text_within, under_frame};
use super::field::{FieldError, Obj};
use crate::limits::{
    ASSISTANT_CONTENT_ENVELOPE_BYTES_MAX, ASSISTANT_CONTENT_RECORDS_MAX,
    ASSISTANT_CONTENT_TEXT_UNITS_MAX,
};

pub const ASSISTANT_CONTENT_PROTOCOL: &str = "agentskit.chat.content";
pub const ASSISTANT_CONTENT_PROTOCOL_VERSION: u32 = 1;
/// The header of a version 1 envelope.
pub const ASSISTANT_CONTENT_PREFIX: &str = "\u{1e}agentskit.chat.content/1\n";
/// The header up to the version: what every version shares.
const PREFIX_ROOT: &str = "\u{1e}agentskit.chat.content/";
/// What starts every candidate envelope.
const RECORD_SEPARATOR: char = '\u{1e}';

/// Why a string is not a readable envelope. Always `retryable: false`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContentDecodeError {
    /// Not an envelope at all (`ASSISTANT_CONTENT_INVALID_RECORD`).
    InvalidEnvelope,
    /// Another version's header (`ASSISTANT_CONTENT_UNSUPPORTED_VERSION`).
    UnsupportedVersion,
    /// Over `ASSISTANT_CONTENT_ENVELOPE_BYTES_MAX` (`ASSISTANT_CONTENT_LIMIT_EXCEEDED`).
    TooLarge,
    /// Over `ASSISTANT_CONTENT_RECORDS_MAX` (`ASSISTANT_CONTENT_LIMIT_EXCEEDED`).
    TooManyRecords,
    /// A record that is empty, not JSON or not a part (`ASSISTANT_CONTENT_INVALID_RECORD`).
    InvalidRecord,
}

impl ContentDecodeError {
    pub const fn code(self) -> &'static str {
        match self {
            Self::InvalidEnvelope | Self::InvalidRecord => "ASSISTANT_CONTENT_INVALID_RECORD",
            Self::UnsupportedVersion => "ASSISTANT_CONTENT_UNSUPPORTED_VERSION",
            Self::TooLarge | Self::TooManyRecords => "ASSISTANT_CONTENT_LIMIT_EXCEEDED",
        }
    }

    /// The reference decoder's literal text.
    pub const fn message(self) -> &'static str {
        match self {
            Self::InvalidEnvelope => "Assistant content envelope is invalid.",
            Self::UnsupportedVersion => "Assistant content envelope uses an unsupported version.",
            Self::TooLarge => "Assistant content envelope exceeds its safety limit.",
            Self::TooManyRecords => "Assistant content envelope exceeds its record limit.",
            Self::InvalidRecord => "Assistant content record is invalid.",
        }
    }
}

/// The parts read so far, canonical, and whether the envelope ends with a whole record.
#[derive(Clone, Debug, PartialEq)]
pub struct AssistantContent {
    pub parts: Vec<Value>,
    pub complete: bool,
}

/// Whether `text` starts like an envelope (a record separator), valid or not.
pub fn is_assistant_content_candidate(text: &str) -> bool {
    text.starts_with(RECORD_SEPARATOR)
}

/// Reads an envelope, possibly one still being streamed.
pub fn decode_assistant_content(input: &str) -> Result<AssistantContent, ContentDecodeError> {
    let pending = AssistantContent {
        parts: Vec::new(),
        complete: false,
    };
    if !is_assistant_content_candidate(input) {
        return Err(ContentDecodeError::InvalidEnvelope);
    }
    if !input.starts_with(PREFIX_ROOT) {
        return if PREFIX_ROOT.starts_with(input) {
            Ok(pending)
        } else {
            Err(ContentDecodeError::InvalidEnvelope)
        };
    }
    if ASSISTANT_CONTENT_PREFIX.starts_with(input) {
        return Ok(pending);
    }
    let Some(payload) = input.strip_prefix(ASSISTANT_CONTENT_PREFIX) else {
        return Err(ContentDecodeError::UnsupportedVersion);
    };
    if input.len() > ASSISTANT_CONTENT_ENVELOPE_BYTES_MAX {
        return Err(ContentDecodeError::TooLarge);
    }
    let complete = payload.ends_with('\n');
    let mut records: Vec<&str> = payload.split('\n').collect();
    records.pop(); // after the last `\n`: empty, or a record still being written
    if records.len() > ASSISTANT_CONTENT_RECORDS_MAX {
        return Err(ContentDecodeError::TooManyRecords);
    }
    let parts = records
        .into_iter()
        .map(|record| {
            let value = serde_json::from_str::<Value>(record)
                .map_err(|_| ContentDecodeError::InvalidRecord)?;
            content_part(&value).map_err(|_| ContentDecodeError::InvalidRecord)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(AssistantContent { parts, complete })
}

/// Writes an envelope one part at a time: the first record carries the header.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AssistantContentEncoder {
    started: bool,
}

impl AssistantContentEncoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// The text to append for `part`, or the first field that breaks the part schema.
    pub fn encode(&mut self, part: &Value) -> Result<String, FieldError> {
        let part = content_part(part)?;
        let header = if self.started {
            ""
        } else {
            ASSISTANT_CONTENT_PREFIX
        };
        self.started = true;
        Ok(format!("{header}{part}\n"))
    }
}

const KIND_RULE: &str = "must be \"text\" or \"component\"";
const TEXT_RULE: &str = "must be a string of 1 to 16384 characters";

/// One part (`{ kind: 'text', text }` or `{ kind: 'component', frame }`) in canonical form,
/// unknown keys dropped: AgentsKit's `AssistantContentPartSchema`.
pub fn content_part(v: &Value) -> Result<Value, FieldError> {
    let o = Obj::new(v, "")?;
    match o.required("kind", KIND_RULE, Value::as_str)? {
        "text" => {
            let text = o.required("text", TEXT_RULE, |v| {
                text_within(v, ASSISTANT_CONTENT_TEXT_UNITS_MAX)
            })?;
            Ok(json!({ "kind": "text", "text": text }))
        }
        "component" => {
            let frame = o.get("frame").unwrap_or(&Value::Null);
            let frame = render_frame(frame).map_err(under_frame)?;
            Ok(json!({ "kind": "component", "frame": frame }))
        }
        _ => Err(FieldError::new(o.path_of("kind"), KIND_RULE)),
    }
}
