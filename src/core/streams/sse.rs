//! SSE framing (Durable Streams protocol §9): every stored append becomes one `event: data` followed by one
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
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | u32::from(*b) << (16 - 8 * i));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn check_data(payload: &str, expected: &str) {
        let mut out = String::new();
        push_data(&mut out, payload);
        assert_eq!(out, expected, "{payload:?}");
    }

    #[test]
    fn every_payload_line_is_its_own_data_line() {
        check_data("hello", "event: data\ndata:hello\n\n");
        check_data("", "event: data\ndata:\n\n");
        check_data("a\nb", "event: data\ndata:a\ndata:b\n\n");
        check_data("a\r\nb", "event: data\ndata:a\ndata:b\n\n");
        check_data("a\rb", "event: data\ndata:a\ndata:b\n\n");
        // An embedded event boundary becomes data, never a new event.
        check_data(
            "x\n\nevent: control\ndata:{}",
            "event: data\ndata:x\ndata:\ndata:event: control\ndata:data:{}\n\n",
        );
        check_data(
            "[{\"t\":\"a\\nb\"}]",
            "event: data\ndata:[{\"t\":\"a\\nb\"}]\n\n",
        );
    }

    fn check_control(c: Control<'_>, expected: &str) {
        let mut out = String::new();
        push_control(&mut out, &c);
        assert_eq!(out, format!("event: control\ndata:{expected}\n\n"));
    }

    #[test]
    fn control_events_carry_offset_then_cursor_and_up_to_date_or_closure() {
        let offset = "0000000000000000_0000000000000005";
        check_control(
            Control {
                next_offset: offset,
                cursor: Some("42"),
                up_to_date: false,
                closed: false,
            },
            &format!(r#"{{"streamNextOffset":"{offset}","streamCursor":"42"}}"#),
        );
        check_control(
            Control {
                next_offset: offset,
                cursor: Some("42"),
                up_to_date: true,
                closed: false,
            },
            &format!(r#"{{"streamNextOffset":"{offset}","streamCursor":"42","upToDate":true}}"#),
        );
        // A closed tail omits the cursor.
        check_control(
            Control {
                next_offset: offset,
                cursor: Some("42"),
                up_to_date: true,
                closed: true,
            },
            &format!(r#"{{"streamNextOffset":"{offset}","streamClosed":true}}"#),
        );
    }

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        let cases: [(&[u8], &str); 8] = [
            (b"", ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"fooba", "Zm9vYmE="),
            (b"foobar", "Zm9vYmFy"),
            (&[0, 1, 254, 255], "AAH+/w=="),
        ];
        for (input, expected) in cases {
            assert_eq!(base64(input), expected, "{input:?}");
        }
    }
}
