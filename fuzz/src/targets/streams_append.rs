//! One POST decision (`core::streams::append::decide_append`), as a sequence of appends to one
//! stream whose state moves only by the decisions' commits (as the server does).
//!
//! Properties over the whole sequence:
//! - every request ends in a decision with a status the protocol allows;
//! - a commit moves the tail forward by exactly the bytes it stores (not at all for close-only),
//!   never past the stream's byte limit, and stores the body (bytes) or its JSON split;
//! - nothing commits on a closed stream, and an empty body commits only as a close;
//! - a producer tuple `(id, epoch, seq)` commits at most once (retries are never stored twice);
//! - the stored `Stream-Seq` strictly increases.

use std::collections::{HashMap, HashSet};

use turnkeep::core::limits::{STREAM_BYTES_MAX, STREAM_OFFSET_COMPONENT_MAX, STREAM_PRODUCERS_MAX};
use turnkeep::core::streams::append::{
    data_len, decide_append, AppendData, AppendDecision, AppendRequest, StreamForAppend,
};
use turnkeep::core::streams::closure::{parse_stream_closed, ClosedBy};
use turnkeep::core::streams::content_type::is_json;
use turnkeep::core::streams::json_mode::{flatten_json_body, JsonWrite};
use turnkeep::core::streams::offset::Offset;
use turnkeep::core::streams::producer::{ProducerHeaders, ProducerState};

use super::gen::Gen;

/// The server's view of the stream, moved only by commits.
struct Stream {
    content_type: &'static str,
    tail: Offset,
    stored_bytes: u64,
    closed: bool,
    closed_by: Option<ClosedBy>,
    last_stream_seq: Option<String>,
    producers: HashMap<String, ProducerState>,
    /// Producer ids the table already holds besides those above (to reach its capacity).
    other_producers: usize,
}

pub fn run(data: &[u8]) {
    let mut g = Gen::new(data);
    let mut stream = Stream {
        content_type: g.pick(&["application/json", "application/octet-stream", "text/plain"]),
        tail: Offset {
            read_seq: g.u64_in(0, 1),
            byte_offset: match g.below(3) {
                0 => STREAM_OFFSET_COMPONENT_MAX - g.u64_in(0, 64),
                _ => g.u64_in(0, 1_000),
            },
        },
        stored_bytes: match g.below(3) {
            0 => STREAM_BYTES_MAX - g.u64_in(0, 64),
            _ => g.u64_in(0, 1_000),
        },
        closed: g.chance(10),
        closed_by: None,
        last_stream_seq: None,
        producers: HashMap::new(),
        other_producers: if g.chance(20) {
            STREAM_PRODUCERS_MAX - g.below(3)
        } else {
            0
        },
    };
    let mut committed_tuples: HashSet<(String, u64, u64)> = HashSet::new();
    for _ in 0..g.below(24) + 1 {
        let req = request(&mut g, &stream);
        let producer = req.producer.clone();
        let decision = decide_append(&view(&stream, producer.as_ref()), &req.as_request());
        check(&stream, &req, &decision);
        let AppendDecision::Commit(commit) = decision else {
            continue;
        };
        if let Some(p) = &producer {
            let tuple = (p.id.clone(), p.epoch, p.seq);
            assert!(
                committed_tuples.insert(tuple),
                "a producer retry committed twice: {p:?}"
            );
            let next = commit
                .producer
                .expect("a producer append commits producer state");
            stream.producers.insert(p.id.clone(), next);
        }
        if let Some(seq) = commit.stream_seq {
            assert!(stream
                .last_stream_seq
                .as_deref()
                .is_none_or(|l| seq.as_str() > l));
            stream.last_stream_seq = Some(seq);
        }
        stream.tail = commit.next_offset;
        stream.stored_bytes += commit.stored_bytes;
        if commit.close {
            stream.closed = true;
            stream.closed_by = commit.closed_by;
        }
    }
}

fn view<'a>(s: &'a Stream, producer: Option<&ProducerHeaders>) -> StreamForAppend<'a> {
    let state = producer.and_then(|p| s.producers.get(&p.id));
    StreamForAppend {
        content_type: s.content_type,
        tail: s.tail,
        stored_bytes: s.stored_bytes,
        closed: s.closed,
        closed_by: s.closed_by.as_ref(),
        last_stream_seq: s.last_stream_seq.as_deref(),
        producer_state: state,
        known_producers: s.producers.len() + s.other_producers,
    }
}

/// An owned POST.
struct Post {
    content_type: Option<String>,
    stream_closed: Option<&'static str>,
    stream_seq: Option<String>,
    producer: Option<ProducerHeaders>,
    body: Vec<u8>,
}

impl Post {
    fn as_request(&self) -> AppendRequest<'_> {
        AppendRequest {
            content_type: self.content_type.as_deref(),
            stream_closed: self.stream_closed,
            stream_seq: self.stream_seq.as_deref(),
            producer: self.producer.as_ref(),
            body: &self.body,
        }
    }
}

fn request(g: &mut Gen<'_>, s: &Stream) -> Post {
    let content_type = match g.below(8) {
        0 => None,
        1 => Some(
            g.pick(&["", "text/plain", "application/json; charset=utf-8"])
                .to_owned(),
        ),
        _ => Some(s.content_type.to_uppercase()),
    };
    let stream_closed = g.pick(&[None, None, None, Some("true"), Some("TRUE"), Some("false")]);
    let stream_seq = g
        .chance(30)
        .then(|| g.pick(&["1", "2", "10", "9", "a", "B"]).to_owned());
    let producer = g.chance(50).then(|| {
        let id = g.pick(&["p1", "p2"]).to_owned();
        let (epoch, last) = s
            .producers
            .get(&id)
            .map_or((0, None), |p| (p.epoch, Some(p.last_seq)));
        let seq = match (g.below(4), last) {
            (0, Some(last)) => last,
            (1, _) => g.u64_in(0, 3),
            (_, last) => last.map_or(0, |l| l + 1),
        };
        let epoch = if g.chance(15) { epoch + 1 } else { epoch };
        ProducerHeaders {
            id,
            epoch,
            seq,
            items: None,
        }
    });
    let body = match g.below(8) {
        0 => Vec::new(),
        1 => g.bytes(32),
        2 => b"[]".to_vec(),
        3 => b"{\"a\":".to_vec(),
        _ => {
            let value = g.list(3, |g| g.any_value(2));
            g.json_text(&value).into_bytes()
        }
    };
    Post {
        content_type,
        stream_closed,
        stream_seq,
        producer,
        body,
    }
}

fn check(s: &Stream, r: &Post, decision: &AppendDecision) {
    assert!([200, 204, 400, 403, 409, 413, 429].contains(&decision.status()));
    let closing = parse_stream_closed(r.stream_closed);
    if r.body.is_empty() && !closing {
        assert_eq!(decision.status(), 400, "an empty body that does not close");
    }
    let AppendDecision::Commit(c) = decision else {
        return;
    };
    assert!(!s.closed, "committed on a closed stream");
    assert_eq!(c.close, closing || r.body.is_empty());
    assert_eq!(c.stored_bytes, data_len(&c.data));
    assert_eq!(c.next_offset > s.tail, c.stored_bytes > 0);
    assert_eq!(
        c.next_offset.byte_offset - s.tail.byte_offset,
        c.stored_bytes
    );
    assert!(s.stored_bytes + c.stored_bytes <= STREAM_BYTES_MAX);
    let expected = if r.body.is_empty() {
        AppendData::Nothing
    } else if is_json(s.content_type) {
        AppendData::Json(
            flatten_json_body(&r.body, JsonWrite::Append).expect("valid JSON committed"),
        )
    } else {
        AppendData::Bytes(r.body.clone())
    };
    assert_eq!(c.data, expected);
    assert_eq!(c.producer.is_some(), r.producer.is_some());
    assert_eq!(
        c.status,
        if r.producer.is_some() && !r.body.is_empty() {
            200
        } else {
            204
        }
    );
    if r.body.is_empty() {
        assert_eq!(
            c.stream_seq, None,
            "a close-only request stores no Stream-Seq"
        );
    } else {
        assert_eq!(c.stream_seq, r.stream_seq);
    }
}
