//! Host-testable text helpers of the stream route: query-string decoding, the stream a
//! `Stream-Forked-From` value names, the `Location` of a stream, and read ETags.

/// Every value of one query parameter in `url`, percent-decoded, in order.
pub fn query_all(url: &str, key: &str) -> Vec<String> {
    let Some((_, query)) = url.split_once('?') else {
        return Vec::new();
    };
    let query = query.split('#').next().unwrap_or_default();
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(k) == key).then(|| percent_decode(v))
        })
        .collect()
}

/// `url` without its query string or fragment: the stream's address, for `Location`.
pub fn location(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or(url)
}

/// `application/x-www-form-urlencoded` decoding (`+` is a space; a bad escape is kept as is).
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(high), Some(low)) => {
                    out.push(high * 16 + low);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// The stream name a `Stream-Forked-From` value points at: a path `/v1/stream/<name>` or a name.
pub fn source_name(forked_from: &str) -> String {
    forked_from
        .strip_prefix("/v1/stream/")
        .unwrap_or(forked_from)
        .to_owned()
}

/// The ETag of a read: the stream's incarnation (its creation time, so a re-created stream never
/// matches an old tag), where the read started and ended, and whether it ended at a closed tail.
pub fn etag(created_ms: u64, start: &str, end: &str, closed: bool) -> String {
    let suffix = if closed { ":c" } else { "" };
    format!("\"{created_ms:x}:{start}:{end}{suffix}\"")
}

/// `url` with every `offset` parameter replaced by one `offset=<offset>` (what a long-poll asks
/// again with after a wait: `offset=now` must not move on to a later tail). `offset` is an
/// offset the core printed (digits, `_`, or `-1`), so it needs no escaping.
pub fn with_offset(url: &str, offset: &str) -> String {
    let (base, fragment) = match url.split_once('#') {
        Some((base, fragment)) => (base, Some(fragment)),
        None => (url, None),
    };
    let (path, query) = base.split_once('?').unwrap_or((base, ""));
    let mut pairs: Vec<&str> = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .filter(|pair| percent_decode(pair.split('=').next().unwrap_or_default()) != "offset")
        .collect();
    let own = format!("offset={offset}");
    pairs.push(&own);
    let mut out = format!("{path}?{}", pairs.join("&"));
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_offset_replaces_every_offset_and_keeps_the_rest() {
        let cases = [
            ("http://h/v1/stream/a", "http://h/v1/stream/a?offset=0_5"),
            (
                "http://h/a?offset=now&live=long-poll",
                "http://h/a?live=long-poll&offset=0_5",
            ),
            (
                "http://h/a?offset=1&cursor=9&offset=2",
                "http://h/a?cursor=9&offset=0_5",
            ),
            ("http://h/a?%6Fffset=now#x", "http://h/a?offset=0_5#x"),
        ];
        for (url, expected) in cases {
            assert_eq!(with_offset(url, "0_5"), expected, "{url}");
        }
    }

    fn check(url: &str, key: &str, expected: &[&str]) {
        assert_eq!(query_all(url, key), expected, "{url} {key}");
    }

    #[test]
    fn query_values_are_decoded_and_kept_in_order() {
        check("http://h/v1/stream/a", "offset", &[]);
        check("http://h/v1/stream/a?offset=-1", "offset", &["-1"]);
        check("http://h/a?offset=1&offset=2", "offset", &["1", "2"]);
        check("http://h/a?offset=", "offset", &[""]);
        check("http://h/a?offset", "offset", &[""]);
        check(
            "http://h/a?live=sse&offset=0000_12#frag",
            "offset",
            &["0000_12"],
        );
        check("http://h/a?offset=a%2Cb", "offset", &["a,b"]);
        check("http://h/a?offset=a+b", "offset", &["a b"]);
        check("http://h/a?offset=%zz%4", "offset", &["%zz%4"]);
        check("http://h/a?off%73et=x", "offset", &["x"]);
        check("http://h/a?offsetx=1&&cursor=2", "offset", &[]);
    }

    #[test]
    fn names_locations_and_etags() {
        assert_eq!(source_name("/v1/stream/a/b"), "a/b");
        assert_eq!(source_name("plain"), "plain");
        assert_eq!(
            location("http://h/v1/stream/a?x=1#f"),
            "http://h/v1/stream/a"
        );
        assert_eq!(etag(255, "-1", "0_3", false), "\"ff:-1:0_3\"");
        assert_eq!(etag(255, "-1", "0_3", true), "\"ff:-1:0_3:c\"");
    }
}
