//! String rules of the Ask wire: JavaScript's `trim`, trimmed labels, safe links and the origin
//! of an absolute link (what a site's citation policy compares).

use crate::checks::utf16_len;
use crate::limits::{ASK_HREF_UNITS_MAX, ASK_LABEL_UNITS_MAX};

/// The characters `String.prototype.trim` removes (WhiteSpace and LineTerminator in ECMAScript),
/// which differ from Rust's `char::is_whitespace` (no U+0085, but U+FEFF).
pub(crate) fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{D}'
            | ' '
            | '\u{A0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202F}'
            | '\u{205F}'
            | '\u{3000}'
            | '\u{FEFF}'
    )
}

/// `s.trim()` as JavaScript computes it.
pub(crate) fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_space)
}

/// `z.string().trim().min(1).max(max_units)`: the trimmed text when it is 1 to `max_units`
/// UTF-16 units long.
pub(crate) fn trimmed_text(s: &str, max_units: usize) -> Option<String> {
    let t = js_trim(s);
    let units = utf16_len(t);
    (units >= 1 && units <= max_units).then(|| t.to_owned())
}

/// A label: trimmed, 1 to 256 UTF-16 units.
pub fn label(s: &str) -> Option<String> {
    trimmed_text(s, ASK_LABEL_UNITS_MAX)
}

/// What a safe link points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Href {
    /// `/path...` on the site itself (never `//`, which is another host).
    Relative,
    /// `http(s)://host[:port]...`; the origin is lower-cased, without a default port.
    Absolute { origin: String },
}

/// A safe link: 1 to 2048 UTF-16 units, no control characters or backslashes, and either a
/// site-relative path or an absolute http(s) URL without credentials.
///
/// Stricter than a WHATWG URL parser on purpose: absolute URLs must spell `scheme://host`
/// with an ASCII host name, IPv4 address or bracketed IPv6 address. Anything unusual
/// (`https:host`, a percent-encoded or non-ASCII host, userinfo) fails closed.
pub(crate) fn safe_href(s: &str) -> Option<Href> {
    let units = utf16_len(s);
    if units == 0 || units > ASK_HREF_UNITS_MAX {
        return None;
    }
    if s.chars().any(|c| c.is_control() || c == '\\') || s.starts_with("//") {
        return None;
    }
    if s.starts_with('/') {
        return Some(Href::Relative);
    }
    let origin = origin_of(s)?;
    Some(Href::Absolute { origin })
}

/// The origin of an absolute http(s) URL, `scheme://host[:port]` lower-cased with the default
/// port dropped, or `None` when the URL is not one this module accepts.
pub(crate) fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => "80",
        "https" => "443",
        _ => return None,
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    if authority.contains('@') {
        return None; // credentials
    }
    let (host, port) = split_host_port(authority)?;
    let host = host.to_ascii_lowercase();
    Some(match port {
        Some(p) if p != default_port => format!("{scheme}://{host}:{p}"),
        _ => format!("{scheme}://{host}"),
    })
}

/// `host[:port]` with a checked host and a 1-5 digit port (at most 65535).
fn split_host_port(authority: &str) -> Option<(&str, Option<&str>)> {
    let (host, port) = if authority.starts_with('[') {
        let end = authority.find(']')?;
        let host = &authority[..=end];
        let inner = &host[1..host.len() - 1];
        let ok = !inner.is_empty()
            && inner
                .bytes()
                .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
        if !ok {
            return None;
        }
        match &authority[end + 1..] {
            "" => (host, None),
            rest => (host, Some(rest.strip_prefix(':')?)),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if !host.starts_with('[') && !is_host_name(host) {
        return None;
    }
    if let Some(p) = port {
        let digits_ok = !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit());
        if !digits_ok || p.parse::<u32>().ok()? > 65_535 {
            return None;
        }
    }
    Some((host, port))
}

/// Dot-separated labels of ASCII letters, digits and `-`, none empty, none starting or ending
/// with `-` (covers IPv4 addresses too).
pub(crate) fn is_host_name(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn js_trim_matches_ecmascript() {
        assert_eq!(js_trim("\u{FEFF} a \u{3000}"), "a");
        assert_eq!(js_trim("\u{85}a"), "\u{85}a"); // NEL is not JS whitespace
    }

    #[test]
    fn hrefs() {
        let abs = |o: &str| Some(Href::Absolute { origin: o.into() });
        for (href, want) in [
            ("/docs/start", Some(Href::Relative)),
            (
                "https://Docs.Example.com/a?b#c",
                abs("https://docs.example.com"),
            ),
            ("HTTP://example.com:80/", abs("http://example.com")),
            ("https://example.com:8443", abs("https://example.com:8443")),
            ("http://127.0.0.1:8787/x", abs("http://127.0.0.1:8787")),
            ("https://[::1]:9/", abs("https://[::1]:9")),
            ("//evil.example/x", None),
            ("javascript:alert(1)", None),
            ("https://user:pw@example.com/", None),
            ("https:example.com", None),
            ("https://exa mple.com", None),
            ("https://example.com:99999/", None),
            ("/a\\b", None),
            ("/a\nb", None),
            ("docs/start", None),
            ("", None),
            ("ftp://example.com/", None),
        ] {
            assert_eq!(safe_href(href), want, "{href}");
        }
        assert_eq!(
            safe_href(&format!("/{}", "a".repeat(2047))),
            Some(Href::Relative)
        );
        assert_eq!(safe_href(&format!("/{}", "a".repeat(2048))), None);
    }

    #[test]
    fn labels_are_trimmed_and_bounded_in_utf16_units() {
        assert_eq!(label("  Guide "), Some("Guide".into()));
        assert_eq!(label("   "), None);
        assert_eq!(label(&"😀".repeat(128)).map(|s| s.len()), Some(512));
        assert_eq!(label(&"😀".repeat(129)), None);
    }
}
