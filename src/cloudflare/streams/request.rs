//! The parts of a request the protocol looks at: named headers and the query string.

use web_sys::Headers;

/// Header access over the Web `Headers` object (names are case-insensitive there).
pub struct Req<'a> {
    pub url: &'a str,
    pub headers: &'a Headers,
}

impl Req<'_> {
    /// A header's value; absent when missing or unreadable.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).ok().flatten()
    }

    /// The URL without its query string (the stream's address, for `Location`).
    pub fn location(&self) -> &str {
        self.url.split(['?', '#']).next().unwrap_or(self.url)
    }

    /// Every value of one query parameter, percent-decoded, in order.
    pub fn query_all(&self, key: &str) -> Vec<String> {
        let Some((_, query)) = self.url.split_once('?') else {
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

    /// The first value of one query parameter.
    pub fn query(&self, key: &str) -> Option<String> {
        self.query_all(key).into_iter().next()
    }
}

/// `application/x-www-form-urlencoded` decoding (`+` is a space; bad escapes are kept as is).
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                match (hex(b[i + 1]), hex(b[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push(h * 16 + l);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}
