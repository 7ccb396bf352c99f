//! SSE framing (protocol §9): every stored append becomes one `event: data` followed by one
//! `event: control` carrying the offset after it, so a reader that stops anywhere knows exactly
//! where to resume. Each line of a payload is its own `data:` line, so a payload can never
//! smuggle an event boundary; binary streams carry base64.

use std::fmt::Write as _;

/// The control event's fields, in the reference server's order.
pub struct Control<'a> {
    pub next_offset: &'a str,
    /// `Some(cursor)` unless the stream is closed and this is its tail.
    pub cursor: Option<&'a str>,
    pub up_to_date: bool,
    pub closed: bool,
}

/// Appends `event: data` with `payload` split into `data:` lines.
pub fn push_data(out: &mut String, payload: &str) {
    out.push_str("event: data\n");
    push_lines(out, payload);
}

/// Appends one `event: control`.
pub fn push_control(out: &mut String, c: &Control<'_>) {
    let mut json = String::with_capacity(96);
    json.push_str("{\"streamNextOffset\":\"");
    json.push_str(c.next_offset);
    json.push('"');
    if c.closed {
        json.push_str(",\"streamClosed\":true");
    } else {
        if let Some(cursor) = c.cursor {
            let _ = write!(json, ",\"streamCursor\":\"{cursor}\"");
        }
        if c.up_to_date {
            json.push_str(",\"upToDate\":true");
        }
    }
    json.push('}');
    out.push_str("event: control\n");
    push_lines(out, &json);
}

fn push_lines(out: &mut String, payload: &str) {
    for line in payload.split("\r\n").flat_map(|l| l.split(['\r', '\n'])) {
        out.push_str("data:");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, b)| acc | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
