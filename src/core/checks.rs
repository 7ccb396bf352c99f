//! Value rules shared by every wire format: SafeId, timestamps, safe integers and
//! JSON structure bounds. Pure functions over `&str` / `serde_json::Value`.

use serde_json::Value;

use super::limits;

/// `^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`
pub fn is_safe_id(s: &str) -> bool {
    let bytes = s.as_bytes();
    match bytes.first() {
        Some(first) if first.is_ascii_alphanumeric() => {}
        _ => return false,
    }
    bytes.len() <= limits::SAFE_ID_CHARS_MAX
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

/// `decodeURIComponent`: `%XX` escapes to bytes, which must be UTF-8; a broken escape is `None`.
pub fn decode_uri_component(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = raw.get(i + 1..i + 3)?;
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The value as a safe integer (|n| <= 2^53 - 1). Accepts `1.0` because JavaScript does;
/// rejects fractions, non-numbers and anything beyond the safe range.
pub(crate) fn safe_int(v: &Value) -> Option<i64> {
    let n = v.as_number()?;
    let max = limits::INTEGER_SAFE_MAX as i64;
    let i = if let Some(i) = n.as_i64() {
        i
    } else if n.as_u64().is_some() {
        return None; // above i64::MAX, far beyond the safe range
    } else {
        let f = n.as_f64()?;
        if !f.is_finite() || f.fract() != 0.0 || f.abs() > max as f64 {
            return None;
        }
        f as i64
    };
    (-max..=max).contains(&i).then_some(i)
}

/// A safe integer that is >= 0.
pub fn safe_uint(v: &Value) -> Option<u64> {
    safe_int(v).and_then(|i| u64::try_from(i).ok())
}

/// A decimal integer as written canonically — `0` or `[1-9][0-9]*`, ASCII digits only (no sign,
/// spaces or leading zeros) — at most 2^53-1 so it stays exact in JavaScript.
pub(crate) fn parse_canonical_uint(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    let canonical = match b {
        [b'0'] => true,
        [first, rest @ ..] => (b'1'..=b'9').contains(first) && rest.iter().all(u8::is_ascii_digit),
        [] => false,
    };
    if !canonical || b.len() > 16 {
        return None; // 2^53-1 has 16 digits; longer would risk overflow
    }
    let n = b.iter().fold(0u64, |acc, d| acc * 10 + u64::from(d - b'0'));
    (n <= limits::INTEGER_SAFE_MAX).then_some(n)
}

/// `a + b` when the sum stays a safe integer (at most 2^53-1): cursors and expiry instants
/// must survive a trip through a JavaScript number.
pub(crate) fn safe_add(a: u64, b: u64) -> Option<u64> {
    a.checked_add(b)
        .filter(|sum| *sum <= limits::INTEGER_SAFE_MAX)
}

/// Length in UTF-16 code units, the unit JavaScript's `string.length` counts.
pub(crate) fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// A timestamp as zod `datetime({ offset: true })` accepts it:
/// `YYYY-MM-DDTHH:MM[:SS[.digits]]` then `Z` or `±HH:MM`, on a real calendar date.
pub(crate) fn is_offset_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 17 || !is_calendar_date(&b[..10]) || b[10] != b'T' {
        return false;
    }
    let Some(rest) = parse_hh_mm(&b[11..]) else {
        return false;
    };
    let rest = match rest.first() {
        Some(b':') => {
            let Some(after_sec) = two_digits_below(&rest[1..], 60) else {
                return false;
            };
            match after_sec.first() {
                Some(b'.') => {
                    let digits = after_sec[1..]
                        .iter()
                        .take_while(|c| c.is_ascii_digit())
                        .count();
                    if digits == 0 {
                        return false;
                    }
                    &after_sec[1 + digits..]
                }
                _ => after_sec,
            }
        }
        _ => rest,
    };
    match rest {
        [b'Z'] => true,
        [b'+' | b'-', tail @ ..] => matches!(parse_hh_mm(tail), Some([])),
        _ => false,
    }
}

/// `createdAt`: exactly what `Date.prototype.toISOString` writes for years 0000-9999:
/// `YYYY-MM-DDTHH:MM:SS.mmmZ`, and a real instant (so it survives a Date round trip).
pub(crate) fn is_iso_millis_utc(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 24
        && is_calendar_date(&b[..10])
        && b[10] == b'T'
        && matches!(parse_hh_mm(&b[11..16]), Some([]))
        && b[16] == b':'
        && matches!(two_digits_below(&b[17..19], 60), Some([]))
        && b[19] == b'.'
        && b[20..23].iter().all(u8::is_ascii_digit)
        && b[23] == b'Z'
}

/// [`format_iso_millis`] of a clock reading: the ports give time as unsigned epoch
/// milliseconds (`Clock::now_ms`, every `now_ms` argument of the core).
pub fn format_iso_millis_at(now_ms: u64) -> String {
    format_iso_millis(i64::try_from(now_ms).unwrap_or(i64::MAX))
}

/// Formats epoch milliseconds as `toISOString()` does (UTC, 3 fraction digits).
/// Years outside 0000-9999 are clamped, which no clock of this century reaches.
pub fn format_iso_millis(epoch_ms: i64) -> String {
    let clamped = epoch_ms.clamp(-62_167_219_200_000, 253_402_300_799_999);
    let days = clamped.div_euclid(86_400_000);
    let ms_of_day = clamped.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, rest) = (ms_of_day / 3_600_000, ms_of_day % 3_600_000);
    let (min, rest) = (rest / 60_000, rest % 60_000);
    let (s, ms) = (rest / 1000, rest % 1000);
    // Digits written by hand: `format!` with widths cost more than the rest of a snapshot's
    // envelope, and every line of a turn carries one of these.
    let mut out = *b"0000-00-00T00:00:00.000Z";
    let mut put = |at: usize, width: usize, mut n: i64| {
        for i in (at..at + width).rev() {
            out[i] = b'0' + (n % 10) as u8;
            n /= 10;
        }
    };
    put(0, 4, y);
    put(5, 2, m);
    put(8, 2, d);
    put(11, 2, h);
    put(14, 2, min);
    put(17, 2, s);
    put(20, 3, ms);
    String::from_utf8(out.to_vec()).expect("ASCII digits and separators")
}

/// The epoch milliseconds of a `createdAt` ([`is_iso_millis_utc`]); `None` for anything else
/// or an instant before 1970 (the ports' clocks are unsigned).
pub(crate) fn parse_iso_millis_utc(s: &str) -> Option<u64> {
    if !is_iso_millis_utc(s) {
        return None;
    }
    let n = |range: std::ops::Range<usize>| -> i64 {
        s.as_bytes()[range]
            .iter()
            .fold(0i64, |acc, c| acc * 10 + i64::from(c - b'0'))
    };
    let days = days_from_civil(n(0..4), n(5..7), n(8..10));
    let ms = days * 86_400_000
        + n(11..13) * 3_600_000
        + n(14..16) * 60_000
        + n(17..19) * 1000
        + n(20..23);
    u64::try_from(ms).ok()
}

/// Size bounds for a JSON value; `None` means unbounded.
#[derive(Clone, Copy, Debug)]
pub struct JsonBounds {
    pub nodes_max: usize,
    pub depth_max: usize,
    pub string_units_max: Option<usize>,
    pub array_items_max: usize,
    pub object_entries_max: usize,
    pub key_units_max: usize,
}

/// Component props, interaction values and confirmation inputs.
pub const BOUNDED_JSON: JsonBounds = JsonBounds {
    nodes_max: limits::BOUNDED_JSON_NODES_MAX,
    depth_max: limits::BOUNDED_JSON_DEPTH_MAX,
    string_units_max: Some(limits::BOUNDED_JSON_STRING_UNITS_MAX),
    array_items_max: limits::BOUNDED_JSON_ARRAY_ITEMS_MAX,
    object_entries_max: limits::BOUNDED_JSON_OBJECT_ENTRIES_MAX,
    key_units_max: limits::BOUNDED_JSON_KEY_UNITS_MAX,
};

/// A whole message record `{version: 1, messages}`; strings are not capped.
pub(crate) const MESSAGE_RECORD: JsonBounds = JsonBounds {
    nodes_max: limits::MESSAGE_RECORD_NODES_MAX,
    depth_max: limits::MESSAGE_RECORD_DEPTH_MAX,
    string_units_max: None,
    array_items_max: limits::MESSAGE_RECORD_ARRAY_ITEMS_MAX,
    object_entries_max: limits::MESSAGE_RECORD_OBJECT_ENTRIES_MAX,
    key_units_max: limits::MESSAGE_RECORD_KEY_UNITS_MAX,
};

/// True when `v` stays within `bounds` (the root is depth 0 and counts as one node).
/// Values parsed from JSON are always finite and acyclic, so those rules hold by construction.
pub fn within_bounds(v: &Value, bounds: &JsonBounds) -> bool {
    let mut nodes = 0usize;
    let mut stack: Vec<(&Value, usize)> = vec![(v, 0)];
    while let Some((value, depth)) = stack.pop() {
        nodes += 1;
        if nodes > bounds.nodes_max || depth > bounds.depth_max {
            return false;
        }
        match value {
            Value::String(s) => {
                if bounds
                    .string_units_max
                    .is_some_and(|max| utf16_len(s) > max)
                {
                    return false;
                }
            }
            Value::Array(items) => {
                if items.len() > bounds.array_items_max {
                    return false;
                }
                stack.extend(items.iter().map(|item| (item, depth + 1)));
            }
            Value::Object(map) => {
                if map.len() > bounds.object_entries_max
                    || map.keys().any(|k| utf16_len(k) > bounds.key_units_max)
                {
                    return false;
                }
                stack.extend(map.values().map(|item| (item, depth + 1)));
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    true
}

fn two_digits(b: &[u8]) -> Option<u32> {
    match b {
        [a, c, ..] if a.is_ascii_digit() && c.is_ascii_digit() => {
            Some(u32::from(a - b'0') * 10 + u32::from(c - b'0'))
        }
        _ => None,
    }
}

/// Two digits forming a number below `limit`; returns the remaining bytes.
fn two_digits_below(b: &[u8], limit: u32) -> Option<&[u8]> {
    two_digits(b).filter(|n| *n < limit).map(|_| &b[2..])
}

/// `HH:MM` with HH < 24 and MM < 60; returns the remaining bytes.
fn parse_hh_mm(b: &[u8]) -> Option<&[u8]> {
    let rest = two_digits_below(b, 24)?;
    match rest.first() {
        Some(b':') => two_digits_below(&rest[1..], 60),
        _ => None,
    }
}

/// `YYYY-MM-DD` naming a day that exists (leap years included).
pub(crate) fn is_calendar_date(b: &[u8]) -> bool {
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' || !b[..4].iter().all(u8::is_ascii_digit) {
        return false;
    }
    let year = b[..4]
        .iter()
        .fold(0u32, |acc, c| acc * 10 + u32::from(c - b'0'));
    let (Some(month), Some(day)) = (two_digits(&b[5..7]), two_digits(&b[8..10])) else {
        return false;
    };
    (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
/// Days since 1970-01-01 of a proleptic Gregorian date (the inverse of [`civil_from_days`]).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn iso_millis_parse_inverts_format() {
        for ms in [
            0u64,
            1,
            999,
            86_399_999,
            951_782_400_000,
            1_783_738_800_123,
            253_402_300_799_999,
        ] {
            assert_eq!(
                parse_iso_millis_utc(&format_iso_millis_at(ms)),
                Some(ms),
                "{ms}"
            );
        }
        assert_eq!(parse_iso_millis_utc("2026-07-11T03:00:00Z"), None);
        assert_eq!(parse_iso_millis_utc("1969-12-31T23:59:59.999Z"), None);
    }

    fn check(f: fn(&str) -> bool, cases: &[(&str, bool)]) {
        for (input, expected) in cases {
            assert_eq!(f(input), *expected, "input {input:?}");
        }
    }

    #[test]
    fn safe_ids() {
        let long_ok = format!("a{}", "b".repeat(127));
        let long_bad = format!("a{}", "b".repeat(128));
        check(
            is_safe_id,
            &[
                ("a", true),
                ("A9._:-", true),
                ("0abc", true),
                (long_ok.as_str(), true),
                (long_bad.as_str(), false),
                ("", false),
                ("-a", false),
                (".a", false),
                ("a b", false),
                ("a/b", false),
                ("é", false),
            ],
        );
    }

    #[test]
    fn offset_timestamps() {
        check(
            is_offset_timestamp,
            &[
                ("2026-07-11T03:00:00.000Z", true),
                ("2026-07-11T03:00Z", true),
                ("2026-07-11T03:00:59Z", true),
                ("2026-07-11T03:00:00.123456789+05:30", true),
                ("2024-02-29T00:00:00Z", true),
                ("2000-02-29T00:00:00Z", true),
                ("1900-02-29T00:00:00Z", false),
                ("2026-02-29T00:00:00Z", false),
                ("2026-04-31T00:00:00Z", false),
                ("2026-13-01T00:00:00Z", false),
                ("2026-07-11T24:00:00Z", false),
                ("2026-07-11T03:60:00Z", false),
                ("2026-07-11T03:00:60Z", false),
                ("2026-07-11T03:00:00.Z", false),
                ("2026-07-11t03:00:00Z", false),
                ("2026-07-11T03:00:00z", false),
                ("2026-07-11T03:00:00+0530", false),
                ("2026-07-11T03:00:00+24:00", false),
                ("2026-07-11T03:00:00", false),
                ("2026-07-11", false),
                ("", false),
            ],
        );
    }

    #[test]
    fn iso_millis() {
        check(
            is_iso_millis_utc,
            &[
                ("2026-07-11T03:00:00.000Z", true),
                ("0000-01-01T00:00:00.000Z", true),
                ("2026-07-11T03:00:00Z", false),
                ("2026-07-11T03:00:00.0000Z", false),
                ("2026-07-11T03:00:00.000+00:00", false),
                ("2026-02-30T03:00:00.000Z", false),
                ("2026-07-11T24:00:00.000Z", false),
            ],
        );
    }

    #[test]
    fn formats_like_to_iso_string() {
        for (ms, expected) in [
            (0, "1970-01-01T00:00:00.000Z"),
            (1_783_738_800_000, "2026-07-11T03:00:00.000Z"),
            (951_782_400_123, "2000-02-29T00:00:00.123Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
        ] {
            let s = format_iso_millis(ms);
            assert_eq!(s, expected);
            assert!(is_iso_millis_utc(&s));
        }
    }

    #[test]
    fn safe_integers() {
        for (v, expected) in [
            (json!(0), Some(0)),
            (json!(1.0), Some(1)),
            (json!(-5), Some(-5)),
            (json!(9_007_199_254_740_991u64), Some(9_007_199_254_740_991)),
            (json!(9_007_199_254_740_992u64), None),
            (json!(18_446_744_073_709_551_615u64), None),
            (json!(1.5), None),
            (json!(1e300), None),
            (json!("1"), None),
            (json!(null), None),
        ] {
            assert_eq!(safe_int(&v), expected, "{v}");
        }
        assert_eq!(safe_uint(&json!(-1)), None);
    }

    #[test]
    fn bounds() {
        let deep = (0..21).fold(json!(1), |acc, _| json!([acc]));
        let ok_depth = (0..20).fold(json!(1), |acc, _| json!([acc]));
        let many = Value::Array(vec![json!(1); 1000]); // 1001 nodes
        let long = json!({ "s": "x".repeat(16_385) });
        let long_key = json!({ "k".repeat(257): 1 });
        for (v, expected) in [
            (ok_depth, true),
            (deep, false),
            (many, false),
            (Value::Array(vec![json!(1); 999]), true),
            (long, false),
            (json!({ "s": "😀".repeat(8_192) }), true),
            (json!({ "s": "😀".repeat(8_193) }), false),
            (long_key, false),
        ] {
            assert_eq!(
                within_bounds(&v, &BOUNDED_JSON),
                expected,
                "{}",
                v.to_string().len()
            );
        }
        let long = json!({ "s": "x".repeat(100_000) });
        assert!(within_bounds(&long, &MESSAGE_RECORD));
    }
}
