//! The client side of the protocol: what a Durable Streams server's answer to an append or a
//! read means for a writer (the session-log adapter over HTTP, `toChatResponse`). Pure: the
//! caller passes the status and a header lookup.
//!
//! Facts relied on (Durable Streams PROTOCOL.md §5.2, §5.2.1, §5.6): `Stream-Next-Offset` is the tail after the
//! request; an accepted producer append is 200 (204 for a duplicate, with `Producer-Seq` the
//! highest stored); a stale epoch is 403 with the current `Producer-Epoch`; a gap is 409 with
//! `Producer-Expected-Seq` / `Producer-Received-Seq`; an append to a closed stream is 409 with
//! `Stream-Closed: true`; an absent stream is 404; a long-poll that saw nothing is 204.

use crate::checks::parse_canonical_uint;

/// What an append's answer means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppendReply {
    /// Stored; the tail is now `offset`.
    Stored {
        offset: Option<String>,
    },
    /// The producer batch was stored before.
    Duplicate {
        offset: Option<String>,
    },
    /// The stream does not exist (create it, then append again).
    Missing,
    StaleEpoch {
        current_epoch: u64,
    },
    SequenceGap {
        expected: u64,
        received: u64,
    },
    Closed,
    /// Overloaded or failing for now (429, 5xx): the same request may be sent again.
    Retry,
    /// Refused for good (any other status).
    Refused {
        status: u16,
    },
}

/// Reads an append's answer.
pub fn append_reply(status: u16, header: impl Fn(&str) -> Option<String>) -> AppendReply {
    let number = |name: &str| header(name).as_deref().and_then(parse_canonical_uint);
    let offset = header("stream-next-offset");
    match status {
        200 | 201 => AppendReply::Stored { offset },
        204 => AppendReply::Duplicate { offset },
        404 => AppendReply::Missing,
        403 => match number("producer-epoch") {
            Some(current_epoch) => AppendReply::StaleEpoch { current_epoch },
            None => AppendReply::Refused { status },
        },
        409 => match (
            number("producer-expected-seq"),
            number("producer-received-seq"),
        ) {
            (Some(expected), Some(received)) => AppendReply::SequenceGap { expected, received },
            _ if header("stream-closed").is_some_and(|v| v.eq_ignore_ascii_case("true")) => {
                AppendReply::Closed
            }
            _ => AppendReply::Refused { status },
        },
        429 | 500..=599 => AppendReply::Retry,
        _ => AppendReply::Refused { status },
    }
}

/// Whether an append's answer gave the request's items their own seqs: a server with item seqs
/// (`super::producer`) echoes `Producer-Seq-Count`; any other leaves it out.
pub fn gave_item_seqs(header: impl Fn(&str) -> Option<String>) -> bool {
    header("producer-seq-count").is_some()
}

/// What a read's answer means (the body of a 200 is the caller's to parse).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadReply {
    /// Data follows in the body; continue from `offset`.
    Data {
        offset: Option<String>,
        up_to_date: bool,
    },
    /// Nothing new (a long-poll ran out, 204); continue from `offset`.
    Nothing {
        offset: Option<String>,
    },
    Missing,
    Retry,
    Refused {
        status: u16,
    },
}

pub fn read_reply(status: u16, header: impl Fn(&str) -> Option<String>) -> ReadReply {
    let offset = header("stream-next-offset");
    let up_to_date = header("stream-up-to-date").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    match status {
        200 => ReadReply::Data { offset, up_to_date },
        204 => ReadReply::Nothing { offset },
        404 => ReadReply::Missing,
        429 | 500..=599 => ReadReply::Retry,
        _ => ReadReply::Refused { status },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn append_answers_map_to_the_producer_vocabulary() {
        let check = |status, h: &'static [(&'static str, &'static str)], expected| {
            assert_eq!(append_reply(status, headers(h)), expected, "{status} {h:?}");
        };
        check(
            200,
            &[("stream-next-offset", "a")],
            AppendReply::Stored {
                offset: Some("a".into()),
            },
        );
        check(204, &[], AppendReply::Duplicate { offset: None });
        check(404, &[], AppendReply::Missing);
        check(
            403,
            &[("producer-epoch", "7")],
            AppendReply::StaleEpoch { current_epoch: 7 },
        );
        check(403, &[], AppendReply::Refused { status: 403 });
        check(
            409,
            &[
                ("producer-expected-seq", "3"),
                ("producer-received-seq", "5"),
            ],
            AppendReply::SequenceGap {
                expected: 3,
                received: 5,
            },
        );
        check(409, &[("stream-closed", "true")], AppendReply::Closed);
        check(409, &[], AppendReply::Refused { status: 409 });
        check(503, &[], AppendReply::Retry);
        check(429, &[], AppendReply::Retry);
        check(400, &[], AppendReply::Refused { status: 400 });
    }

    #[test]
    fn read_answers() {
        assert_eq!(
            read_reply(
                200,
                headers(&[("stream-next-offset", "x"), ("stream-up-to-date", "true")])
            ),
            ReadReply::Data {
                offset: Some("x".into()),
                up_to_date: true
            }
        );
        assert_eq!(
            read_reply(204, headers(&[])),
            ReadReply::Nothing { offset: None }
        );
        assert_eq!(read_reply(404, headers(&[])), ReadReply::Missing);
        assert_eq!(read_reply(502, headers(&[])), ReadReply::Retry);
        assert_eq!(
            read_reply(401, headers(&[])),
            ReadReply::Refused { status: 401 }
        );
    }
}
