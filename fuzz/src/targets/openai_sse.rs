//! The incremental Server-Sent Events parser (`core::chat::openai::sse`).
//!
//! Properties, for any byte stream cut into any pieces:
//! - parsing never panics, and the events do not depend on where the stream was cut (a
//!   network read may end anywhere, inside a CRLF or a UTF-8 sequence);
//! - the events are those of the event-stream rules, computed here by a whole-input reference
//!   reading (lines split at CRLF, CR or LF; a leading BOM dropped; `:` comments; `data`
//!   joined by LF; `event` reset after each dispatch; an unfinished last event dropped);
//! - `has_partial_event` is true exactly when the stream stopped inside a line or an event.

use turnkeep::core::chat::openai::{SseEvent, SseParser};

use super::gen::{input, Gen, Input};

pub fn run(data: &[u8]) {
    let (stream, cuts) = match input(data) {
        Input::Raw(bytes) => (bytes.to_vec(), cut_points(bytes)),
        Input::Structured(mut g) => {
            let stream = event_stream(&mut g);
            let cuts = (0..g.below(6)).map(|_| g.below(stream.len() + 1)).collect();
            (stream, cuts)
        }
    };
    check(&stream, cuts);
}

/// Cut points for raw input: derived from its bytes so that the same input always cuts alike.
fn cut_points(bytes: &[u8]) -> Vec<usize> {
    bytes
        .iter()
        .take(4)
        .map(|b| usize::from(*b) % (bytes.len() + 1))
        .collect()
}

fn check(stream: &[u8], mut cuts: Vec<usize>) {
    let (expected, partial) = reference(stream);
    let mut whole = SseParser::new();
    let events = whole.push(stream).expect("small inputs break no limit");
    assert_eq!(events, expected, "event-stream rules on {stream:?}");
    assert_eq!(
        whole.has_partial_event(),
        partial,
        "partial event on {stream:?}"
    );
    cuts.sort_unstable();
    let mut pieces = SseParser::new();
    let mut got = Vec::new();
    let mut at = 0;
    for cut in cuts.into_iter().chain([stream.len()]) {
        got.extend(
            pieces
                .push(&stream[at..cut])
                .expect("same input, same limits"),
        );
        at = cut;
    }
    assert_eq!(got, events, "events depend on where the stream was cut");
    assert_eq!(pieces.has_partial_event(), partial);
}

/// The event-stream rules over a whole input, written as plainly as possible: the events, and
/// whether the input stopped inside a line or an undispatched event.
fn reference(stream: &[u8]) -> (Vec<SseEvent>, bool) {
    let text = String::from_utf8_lossy(stream);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut lines: Vec<&str> = Vec::new();
    let mut rest = text;
    while let Some(end) = rest.find(['\r', '\n']) {
        lines.push(&rest[..end]);
        let after = if rest[end..].starts_with("\r\n") {
            2
        } else {
            1
        };
        rest = &rest[end + after..];
    }
    // The bytes after the last line end never complete a line (a lone BOM counts as bytes).
    let unfinished = stream
        .iter()
        .rev()
        .take_while(|b| !matches!(b, b'\r' | b'\n'))
        .count();
    let (mut events, mut data, mut event) = (Vec::new(), String::new(), String::new());
    for line in lines {
        if line.is_empty() {
            if !data.is_empty() {
                data.pop();
                let data = std::mem::take(&mut data);
                events.push(SseEvent {
                    event: event.clone(),
                    data,
                });
            }
            event.clear();
            continue;
        }
        let (field, value) = match line.find(':') {
            Some(0) => continue,
            Some(i) => (
                &line[..i],
                line[i + 1..].strip_prefix(' ').unwrap_or(&line[i + 1..]),
            ),
            None => (line, ""),
        };
        match field {
            "data" => {
                data.push_str(value);
                data.push('\n');
            }
            "event" => event = value.to_owned(),
            _ => {}
        }
    }
    (events, unfinished > 0 || !data.is_empty())
}

/// An event stream made of field lines, comments and blank lines, with every line ending.
fn event_stream(g: &mut Gen<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    if g.chance(10) {
        out.extend_from_slice("\u{feff}".as_bytes());
    }
    for _ in 0..g.below(12) {
        let line: Vec<u8> = match g.below(9) {
            0 => Vec::new(),
            1 => b": keep-alive".to_vec(),
            2 => format!("event:{}", g.pick(&["", " error", " message", "  x"])).into_bytes(),
            3 => g
                .pick(&["data", "data:", "id: 7", "retry: 10", "dat", "data : x"])
                .into(),
            4 => g.bytes(12),
            _ => format!(
                "data:{}{}",
                g.pick(&["", " "]),
                g.string().replace(['\r', '\n'], "")
            )
            .into_bytes(),
        };
        out.extend_from_slice(&line);
        out.extend_from_slice(g.pick(&[
            b"\n".as_slice(),
            b"\r\n",
            b"\r",
            b"\n\n",
            b"\r\n\r\n",
            b"",
        ]));
    }
    out
}
