//! What a Durable Streams SSE read says, read-side (Durable Streams PROTOCOL.md §5.8, §8): the answer's status,
//! `event: data` payloads and `event: control` objects. Pure: the machine hands in what arrived.
//!
//! Facts relied on: a live SSE read is `GET {url}?offset=<offset>&live=sse` (and `cursor=<the
//! last streamCursor>` on a reconnect); a 200 carries `Content-Type: text/event-stream`; a
//! missing stream is 404; on a JSON stream every `data` event is a JSON array of the messages
//! stored (one append, or a batch of several); every `data` event is followed by one `control`
//! event `{streamNextOffset, streamCursor?, upToDate?, streamClosed?}`, and a reader resumes from
//! the last control event's `streamNextOffset`; offsets compare as strings; `-1` and `now` are
//! reserved (never minted); a reader that saw `streamClosed: true` must not reconnect.

use serde_json::Value;

use crate::limits::{CONNECTION_CURSOR_CHARS_MAX, CONNECTION_OFFSET_CHARS_MAX};

/// Where a read starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadOffset {
    /// The stream's beginning (`offset=-1`): the whole log, then live.
    Start,
    /// The tail as the server sees it when the read starts (`offset=now`): live only.
    Now,
    /// After this offset (one the server minted): the suffix only.
    After(String),
}

impl ReadOffset {
    /// The `offset` query value.
    pub fn query_value(&self) -> &str {
        match self {
            ReadOffset::Start => "-1",
            ReadOffset::Now => "now",
            ReadOffset::After(offset) => offset,
        }
    }

    /// An `initialOffset` as a host passes it: `None` (or `-1`) is the start, `now` the tail,
    /// anything else must look like an offset a server mints.
    pub fn parse(value: Option<&str>) -> Result<ReadOffset, &'static str> {
        match value {
            None | Some("-1") => Ok(ReadOffset::Start),
            Some("now") => Ok(ReadOffset::Now),
            Some(offset) if is_offset_text(offset) => Ok(ReadOffset::After(offset.to_owned())),
            Some(_) => Err(OFFSET_RULE),
        }
    }

    /// True when `next` (a minted offset) lies beyond this position. Only a minted offset can
    /// be compared; from the start or the tail, any offset the server sends is news.
    pub(crate) fn is_before(&self, next: &str) -> bool {
        match self {
            ReadOffset::Start | ReadOffset::Now => true,
            ReadOffset::After(current) => next > current.as_str(),
        }
    }
}

pub(crate) const OFFSET_RULE: &str = "an offset is -1, now, or 1 to 256 visible ASCII characters other than , & = ? / (an offset the server returned)";

/// Offsets are opaque tokens, but never empty, never the reserved sentinels, and never contain
/// `,` `&` `=` `?` `/` (Durable Streams protocol §8); this also keeps them safe in a query string and a log line.
pub(crate) fn is_offset_text(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= CONNECTION_OFFSET_CHARS_MAX
        && s != "-1"
        && s != "now"
        && s.bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b',' | b'&' | b'=' | b'?' | b'/'))
}

/// What the status line of a read means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// 200 with an event stream: read the events.
    Events,
    /// 404: the stream does not exist yet (no turn has published to it).
    Missing,
    /// Overloaded or failing for now (408, 429, 5xx, or a 204 that an SSE read never expects
    /// from a server that understood it): read again after a pause.
    Retry,
    /// 200 with anything but an event stream: the URL is not a Durable Streams SSE endpoint.
    NotEventStream,
    /// Refused for good (401, 403, 400, ...): the readers end with it.
    Refused { status: u16 },
}

pub fn answer(status: u16, event_stream: bool) -> Answer {
    match status {
        200 if event_stream => Answer::Events,
        200 => Answer::NotEventStream,
        404 => Answer::Missing,
        204 | 408 | 429 | 500..=599 => Answer::Retry,
        _ => Answer::Refused { status },
    }
}

/// True for a `Content-Type` of `text/event-stream` (parameters and case aside).
pub fn is_event_stream(content_type: Option<&str>) -> bool {
    content_type
        .and_then(|t| t.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("text/event-stream"))
}

/// One `event: control`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Control {
    pub next_offset: String,
    pub cursor: Option<String>,
    pub closed: bool,
}

/// Reads a control event's data; `None` when it is not one (no valid `streamNextOffset`).
pub fn control(data: &str) -> Option<Control> {
    let value: Value = serde_json::from_str(data).ok()?;
    let next_offset = value
        .get("streamNextOffset")
        .and_then(Value::as_str)
        .filter(|o| is_offset_text(o))?
        .to_owned();
    let cursor = value
        .get("streamCursor")
        .and_then(Value::as_str)
        .filter(|c| is_cursor_text(c))
        .map(str::to_owned);
    let closed = value.get("streamClosed").and_then(Value::as_bool) == Some(true);
    Some(Control {
        next_offset,
        cursor,
        closed,
    })
}

fn is_cursor_text(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= CONNECTION_CURSOR_CHARS_MAX
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// Reads a data event's payload on a JSON stream: the messages it carries, in order; `None`
/// when it is not a JSON array.
pub(crate) fn data_items(data: &str) -> Option<Vec<Value>> {
    match serde_json::from_str(data) {
        Ok(Value::Array(items)) => Some(items),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_given_by_a_host() {
        let check = |value: Option<&str>, expected: Result<ReadOffset, &'static str>| {
            assert_eq!(ReadOffset::parse(value), expected, "{value:?}");
        };
        check(None, Ok(ReadOffset::Start));
        check(Some("-1"), Ok(ReadOffset::Start));
        check(Some("now"), Ok(ReadOffset::Now));
        let minted = "0000000000000000_0000000000000042";
        check(Some(minted), Ok(ReadOffset::After(minted.into())));
        check(Some("abc-123_x"), Ok(ReadOffset::After("abc-123_x".into())));
        for bad in ["", "a b", "a&b", "a=b", "x?y", "../x", "a,b", "é", "\n"] {
            check(Some(bad), Err(OFFSET_RULE));
        }
        check(Some(&"7".repeat(257)), Err(OFFSET_RULE));
    }

    #[test]
    fn minted_offsets_compare_as_strings() {
        let at = ReadOffset::After("0000000000000000_0000000000000010".into());
        assert!(at.is_before("0000000000000000_0000000000000011"));
        assert!(!at.is_before("0000000000000000_0000000000000010"));
        assert!(!at.is_before("0000000000000000_0000000000000009"));
        assert!(ReadOffset::Start.is_before("0000000000000000_0000000000000000"));
        assert!(ReadOffset::Now.is_before("x"));
    }

    #[test]
    fn answers() {
        let check = |status, stream, expected| {
            assert_eq!(answer(status, stream), expected, "{status} {stream}")
        };
        check(200, true, Answer::Events);
        check(200, false, Answer::NotEventStream);
        check(404, true, Answer::Missing);
        check(404, false, Answer::Missing);
        for status in [204, 408, 429, 500, 502, 503, 599] {
            check(status, false, Answer::Retry);
        }
        for status in [400, 401, 403, 405, 409, 410, 301] {
            check(status, false, Answer::Refused { status });
        }
        assert!(is_event_stream(Some("text/event-stream")));
        assert!(is_event_stream(Some("Text/Event-Stream; charset=utf-8")));
        assert!(!is_event_stream(Some("application/json")));
        assert!(!is_event_stream(None));
    }

    #[test]
    fn control_events() {
        let at = "0000000000000000_0000000000000005";
        assert_eq!(
            control(&format!(
                r#"{{"streamNextOffset":"{at}","streamCursor":"42","upToDate":true}}"#
            )),
            Some(Control {
                next_offset: at.into(),
                cursor: Some("42".into()),
                closed: false
            })
        );
        assert_eq!(
            control(&format!(
                r#"{{"streamNextOffset":"{at}","streamClosed":true}}"#
            )),
            Some(Control {
                next_offset: at.into(),
                cursor: None,
                closed: true
            })
        );
        // A cursor that could smuggle query syntax is not echoed back.
        assert_eq!(
            control(&format!(
                r#"{{"streamNextOffset":"{at}","streamCursor":"1&offset=-1"}}"#
            ))
            .map(|c| c.cursor),
            Some(None)
        );
        for bad in [
            "",
            "{}",
            "[]",
            "null",
            r#"{"streamNextOffset":""}"#,
            r#"{"streamNextOffset":"-1"}"#,
            r#"{"streamNextOffset":7}"#,
            "{",
        ] {
            assert_eq!(control(bad), None, "{bad}");
        }
    }

    #[test]
    fn data_events() {
        assert_eq!(data_items(r#"[{"a":1},{"b":2}]"#).map(|v| v.len()), Some(2));
        assert_eq!(data_items("[]").map(|v| v.len()), Some(0));
        assert_eq!(data_items("[\n{\"a\":1}\n]").map(|v| v.len()), Some(1));
        assert_eq!(data_items(r#"{"a":1}"#), None);
        assert_eq!(data_items("text"), None);
    }
}
