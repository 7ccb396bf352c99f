//! The parts of a request the protocol looks at: named headers and the query string.

use web_sys::Headers;

use super::query;

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
        query::location(self.url)
    }

    /// Every value of one query parameter, percent-decoded, in order.
    pub fn query_all(&self, key: &str) -> Vec<String> {
        query::query_all(self.url, key)
    }

    /// The first value of one query parameter.
    pub fn query(&self, key: &str) -> Option<String> {
        self.query_all(key).into_iter().next()
    }
}
