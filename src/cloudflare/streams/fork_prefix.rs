//! The data a fork's `Stream-Fork-Sub-Offset` materialises (Durable Streams protocol §4.2): the first `sub`
//! bytes (byte streams) or the first `sub` JSON messages (JSON mode) of the source append that
//! starts exactly at the fork offset. Anything else is a 400.

use crate::core::streams::content_type::is_json;
use crate::core::streams::json_mode::{flatten_json_body, JsonWrite};

/// A sub-offset that cannot be resolved against the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubOffsetBeyond;

// Used by the wasm32-only fork module.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
impl SubOffsetBeyond {
    pub const ROW: crate::core::diagnostics::Row =
        crate::core::diagnostics::streams::FORK_SUB_OFFSET_BEYOND;
}

/// `row` is the source append starting at or after the fork offset `start` (its start, its
/// stored bytes; JSON messages are stored comma-joined). `None` when `sub` is 0.
pub fn sub_offset_prefix(
    content_type: &str,
    sub: u64,
    start: u64,
    row: Option<(u64, &[u8])>,
) -> Result<Option<Vec<u8>>, SubOffsetBeyond> {
    if sub == 0 {
        return Ok(None);
    }
    let data = match row {
        Some((row_start, data)) if row_start == start => data,
        _ => return Err(SubOffsetBeyond),
    };
    let cut = usize::try_from(sub).map_err(|_| SubOffsetBeyond)?;
    if !is_json(content_type) {
        return data
            .get(..cut)
            .map(|p| Some(p.to_vec()))
            .ok_or(SubOffsetBeyond);
    }
    let mut array = Vec::with_capacity(data.len() + 2);
    array.push(b'[');
    array.extend_from_slice(data);
    array.push(b']');
    let messages = flatten_json_body(&array, JsonWrite::Create).map_err(|_| SubOffsetBeyond)?;
    let kept = messages.get(..cut).ok_or(SubOffsetBeyond)?;
    Ok(Some(kept.join(",").into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    type Case<'a> = (
        &'a str,
        u64,
        u64,
        Option<(u64, &'a [u8])>,
        Result<Option<&'a str>, SubOffsetBeyond>,
    );

    fn check((content_type, sub, start, row, expected): Case<'_>) {
        let got = sub_offset_prefix(content_type, sub, start, row);
        let got = got.map(|p| p.map(|b| String::from_utf8(b).unwrap_or_default()));
        assert_eq!(
            got,
            expected.map(|p| p.map(str::to_owned)),
            "{content_type} sub={sub}"
        );
    }

    #[test]
    fn sub_offsets_cut_bytes_or_messages() {
        let text: &[u8] = b"hello";
        let json: &[u8] = br#"{"a":1},{"b":[2,3]},"c""#;
        let cases: [Case<'_>; 11] = [
            ("text/plain", 0, 0, None, Ok(None)),
            ("text/plain", 3, 0, Some((0, text)), Ok(Some("hel"))),
            ("text/plain", 5, 0, Some((0, text)), Ok(Some("hello"))),
            ("text/plain", 6, 0, Some((0, text)), Err(SubOffsetBeyond)),
            ("text/plain", 1, 0, None, Err(SubOffsetBeyond)),
            ("text/plain", 1, 5, Some((7, text)), Err(SubOffsetBeyond)),
            (
                "application/json",
                1,
                9,
                Some((9, json)),
                Ok(Some(r#"{"a":1}"#)),
            ),
            (
                "application/json",
                2,
                9,
                Some((9, json)),
                Ok(Some(r#"{"a":1},{"b":[2,3]}"#)),
            ),
            (
                "application/json; charset=utf-8",
                3,
                9,
                Some((9, json)),
                Ok(Some(r#"{"a":1},{"b":[2,3]},"c""#)),
            ),
            (
                "application/json",
                4,
                9,
                Some((9, json)),
                Err(SubOffsetBeyond),
            ),
            (
                "application/json",
                1,
                0,
                Some((0, b"not json")),
                Err(SubOffsetBeyond),
            ),
        ];
        for case in cases {
            check(case);
        }
    }
}
