//! An incremental Server-Sent Events parser (the WHATWG "event stream" rules): bytes may be
//! split anywhere, lines end in LF, CR or CRLF, `:` lines are comments, a blank line dispatches
//! the event, and a leading byte-order mark is skipped. Pure: bytes in, events out.
//!
//! As in the standard, an event still incomplete when the body ends is discarded; a consumer
//! that needs a terminator (OpenAI's `data: [DONE]`) checks for it itself.
//!
//! Two readers use it: model streams (OpenAI-compatible, [`SseParser::new`]) and the live
//! connection's Durable Streams reads (`core::connection`, with its own, larger limits).

use crate::limits::{SSE_EVENT_BYTES_MAX, SSE_LINE_BYTES_MAX};

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; empty when absent (the standard's default type `message`).
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// The stream broke a size limit. The parser stays failed: every later call repeats the error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SseError {
    /// A line longer than the parser's line limit ([`SSE_LINE_BYTES_MAX`] by default).
    LineTooLong,
    /// An event whose data exceeds the parser's event limit ([`SSE_EVENT_BYTES_MAX`] by default).
    EventTooLarge,
}

impl SseError {
    pub fn message(self) -> &'static str {
        match self {
            SseError::LineTooLong => "an event-stream line exceeds the line size limit",
            SseError::EventTooLarge => "an event-stream event exceeds the event size limit",
        }
    }
}

/// Feed it bytes as they arrive; it returns the events completed so far.
#[derive(Debug)]
pub struct SseParser {
    line_bytes_max: usize,
    event_bytes_max: usize,
    line: Vec<u8>,
    data: String,
    event: String,
    /// The previous byte was a CR, so an LF right after it ends nothing new.
    after_cr: bool,
    /// At least one line was completed (the byte-order mark may only lead the first).
    first_line_done: bool,
    failed: Option<SseError>,
}

impl Default for SseParser {
    fn default() -> Self {
        Self::with_limits(SSE_LINE_BYTES_MAX, SSE_EVENT_BYTES_MAX)
    }
}

impl SseParser {
    /// A parser with the model-stream limits ([`SSE_LINE_BYTES_MAX`], [`SSE_EVENT_BYTES_MAX`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// A parser that fails on a line longer than `line_bytes_max` or an event whose data is
    /// longer than `event_bytes_max`.
    pub(crate) fn with_limits(line_bytes_max: usize, event_bytes_max: usize) -> Self {
        Self {
            line_bytes_max,
            event_bytes_max,
            line: Vec::new(),
            data: String::new(),
            event: String::new(),
            after_cr: false,
            first_line_done: false,
            failed: None,
        }
    }

    /// Consumes `bytes` and returns every event they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let mut events = Vec::new();
        let result = self.push_into(bytes, &mut events);
        if let Err(e) = result {
            self.failed = Some(e);
            return Err(e);
        }
        Ok(events)
    }

    /// True when bytes of an unfinished line or event are buffered (the body ended mid-event).
    pub fn has_partial_event(&self) -> bool {
        !self.line.is_empty() || !self.data.is_empty()
    }

    fn push_into(&mut self, mut bytes: &[u8], events: &mut Vec<SseEvent>) -> Result<(), SseError> {
        while !bytes.is_empty() {
            if self.after_cr && bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
            self.after_cr = false;
            match bytes.iter().position(|b| *b == b'\n' || *b == b'\r') {
                None => {
                    self.extend_line(bytes)?;
                    return Ok(());
                }
                Some(end) => {
                    self.extend_line(&bytes[..end])?;
                    self.after_cr = bytes[end] == b'\r';
                    bytes = &bytes[end + 1..];
                    self.end_line(events)?;
                }
            }
        }
        Ok(())
    }

    fn extend_line(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if self.line.len() + bytes.len() > self.line_bytes_max {
            return Err(SseError::LineTooLong);
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn end_line(&mut self, events: &mut Vec<SseEvent>) -> Result<(), SseError> {
        // `clear`, not `take`: the line buffer keeps its capacity for the next line.
        let mut line = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        if !self.first_line_done {
            self.first_line_done = true;
            if let Some(rest) = line.strip_prefix('\u{feff}') {
                line = rest.to_owned();
            }
        }
        if line.is_empty() {
            self.dispatch(events);
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(()); // a comment (keep-alive)
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_str(), ""),
        };
        match field {
            "data" => {
                if self.data.len() + value.len() + 1 > self.event_bytes_max {
                    return Err(SseError::EventTooLarge);
                }
                self.data.push_str(value);
                self.data.push('\n');
            }
            "event" => self.event = value.to_owned(),
            _ => {} // `id`, `retry` and unknown fields mean nothing to a model stream
        }
        Ok(())
    }

    fn dispatch(&mut self, events: &mut Vec<SseEvent>) {
        let event = std::mem::take(&mut self.event);
        if self.data.is_empty() {
            return;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop(); // the trailing `\n` appended after the last data line
        events.push(SseEvent { event, data });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
        }
    }

    /// Parses `input` whole, then again split at every byte position, and expects the same
    /// events each time.
    fn check(input: &str, expected: &[SseEvent]) {
        let bytes = input.as_bytes();
        let mut whole = SseParser::new();
        assert_eq!(
            whole.push(bytes).as_deref(),
            Ok(expected),
            "input {input:?}"
        );
        for cut in 0..=bytes.len() {
            let mut p = SseParser::new();
            let mut got = p.push(&bytes[..cut]).expect("first half");
            got.extend(p.push(&bytes[cut..]).expect("second half"));
            assert_eq!(got, expected, "input {input:?} split at {cut}");
        }
    }

    #[test]
    fn event_stream_rules() {
        check("data: a\n\n", &[ev("", "a")]);
        check("data:a\r\n\r\n", &[ev("", "a")]);
        check("data: a\r\rdata: b\n\n", &[ev("", "a"), ev("", "b")]);
        check("data:  two spaces\n\n", &[ev("", " two spaces")]);
        check("data: a\ndata: b\n\n", &[ev("", "a\nb")]);
        check(": keep-alive\n\ndata: x\n\n", &[ev("", "x")]);
        check("event: error\ndata: {}\n\n", &[ev("error", "{}")]);
        check("id: 7\nretry: 10\ndata: x\n\n", &[ev("", "x")]);
        check("data\n\n", &[ev("", "")]);
        check("data:\n\n", &[ev("", "")]);
        check("event: ping\n\n", &[]);
        check("\n\n\n", &[]);
        check("\u{feff}data: bom\n\n", &[ev("", "bom")]);
        check("data: no end", &[]);
        check("data: é ü 漢\n\n", &[ev("", "é ü 漢")]);
        check("data: [DONE]\n\n", &[ev("", "[DONE]")]);
    }

    #[test]
    fn the_event_type_resets_after_each_dispatch() {
        check(
            "event: a\ndata: 1\n\ndata: 2\n\n",
            &[ev("a", "1"), ev("", "2")],
        );
    }

    #[test]
    fn a_body_ending_mid_event_is_reported_as_partial() {
        let mut p = SseParser::new();
        p.push(b"data: x\n\n").expect("ok");
        assert!(!p.has_partial_event());
        p.push(b"data: y\n").expect("ok");
        assert!(p.has_partial_event());
        let mut q = SseParser::new();
        q.push(b"data: y").expect("ok");
        assert!(q.has_partial_event());
    }

    #[test]
    fn oversized_lines_and_events_fail_and_stay_failed() {
        let mut p = SseParser::new();
        let long = vec![b'x'; SSE_LINE_BYTES_MAX + 1];
        assert_eq!(p.push(&long), Err(SseError::LineTooLong));
        assert_eq!(p.push(b"data: ok\n\n"), Err(SseError::LineTooLong));

        let mut q = SseParser::new();
        let half = format!("data: {}\n", "y".repeat(SSE_EVENT_BYTES_MAX / 2));
        q.push(half.as_bytes()).expect("first half fits");
        assert_eq!(q.push(half.as_bytes()), Err(SseError::EventTooLarge));

        let mut ok = SseParser::new();
        let fits = format!("data: {}\n\n", "z".repeat(SSE_LINE_BYTES_MAX - 7));
        assert_eq!(ok.push(fits.as_bytes()).map(|e| e.len()), Ok(1));
    }
}
