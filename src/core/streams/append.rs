//! The whole decision for one POST (Durable Streams protocol §5.2, §5.2.1, §5.3, §9.1), composed from the rules
//! of the sibling modules in the order the reference server applies them:
//!
//! 1. empty body without `Stream-Closed: true` → 400;
//! 2. body larger than [`limits::STREAM_APPEND_BYTES_MAX`] → 413;
//! 3. body without `Content-Type` → 400 (a close-only request never checks its content type);
//! 4. stream closed → 204 (idempotent close or the closing producer's retry) or 409 with
//!    `Stream-Closed: true`;
//! 5. content type not the stream's → 409;
//! 6. producer: a new id on a full table → 429; stale epoch 403, new epoch with seq ≠ 0 400,
//!    duplicate 204, gap 409;
//! 7. `Stream-Seq` not above the last one → 409 (close-only requests do not carry one);
//! 8. JSON mode: invalid JSON or `[]` → 400;
//! 9. stream would exceed [`limits::STREAM_BYTES_MAX`] → 413;
//! 10. otherwise commit: store the data, move the tail, store producer / `Stream-Seq` state and the
//!     closure in one transaction. 200 when producer headers were sent, else 204; both carry
//!     `Stream-Next-Offset`, and `Stream-Closed: true` when the stream is now closed. A close-only
//!     request answers 204 even with producer headers (which it echoes).
//!
//! Producer header syntax (400) is checked before the body is read, with
//! [`super::producer::parse_producer_headers`]; its result is an input here.

use crate::diagnostics::{streams as rows, Row};
use std::fmt;

use super::closure::{
    classify_append, closed_by, decide_on_closed, parse_stream_closed, AppendKind, ClosedBy,
    ClosedStreamDecision,
};
use super::content_type::{check_append_content_type, is_json, ContentTypeError};
use super::json_mode::{flatten_json_body, JsonBodyError, JsonWrite};
use super::offset::{Offset, OffsetError};
use super::producer::{
    check_producer_capacity, validate_producer, ProducerDecision, ProducerHeaders, ProducerState,
};
use super::stream_seq::{check_stream_seq, StreamSeqDecision};
use super::Rejection;
use crate::limits;

/// What the server knows about the stream when the POST arrives.
#[derive(Clone, Copy, Debug)]
pub struct StreamForAppend<'a> {
    pub content_type: &'a str,
    pub tail: Offset,
    /// Bytes stored so far (as counted by [`AppendCommit::stored_bytes`]).
    pub stored_bytes: u64,
    pub closed: bool,
    pub closed_by: Option<&'a ClosedBy>,
    pub last_stream_seq: Option<&'a str>,
    /// State of the request's `Producer-Id` on this stream, if known.
    pub producer_state: Option<&'a ProducerState>,
    /// How many producer ids the stream remembers.
    pub known_producers: usize,
}

/// The POST, with producer headers already parsed.
#[derive(Clone, Copy, Debug)]
pub struct AppendRequest<'a> {
    pub content_type: Option<&'a str>,
    pub stream_closed: Option<&'a str>,
    pub stream_seq: Option<&'a str>,
    pub producer: Option<&'a ProducerHeaders>,
    pub body: &'a [u8],
}

/// The data one accepted append stores.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppendData {
    /// Close-only: nothing is stored.
    Nothing,
    /// A byte stream's body, stored as is.
    Bytes(Vec<u8>),
    /// A JSON stream's messages, each compact JSON text (read back with `json_array_body`).
    Json(Vec<String>),
}

/// Everything to write, in one transaction, for an accepted append.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppendCommit {
    pub data: AppendData,
    /// Bytes the data counts for: the body length, or the JSON messages joined by commas.
    pub stored_bytes: u64,
    /// The new tail (`Stream-Next-Offset`); unchanged for close-only.
    pub next_offset: Offset,
    /// New state for the request's producer id, when producer headers were sent.
    pub producer: Option<ProducerState>,
    /// New last `Stream-Seq`, when one was sent.
    pub stream_seq: Option<String>,
    /// The stream is closed by this request.
    pub close: bool,
    /// The producer tuple that closed it, to recognise retries.
    pub closed_by: Option<ClosedBy>,
    /// 200 with producer headers, 204 without.
    pub status: u16,
    /// Producer headers to echo (`Producer-Epoch`, `Producer-Seq`).
    pub producer_headers: Vec<(&'static str, String)>,
}

/// The answer to a POST.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppendDecision {
    /// Commit, then answer `status` with `Stream-Next-Offset` (and `Stream-Closed: true` if closed).
    Commit(AppendCommit),
    /// The stream was already closed (see [`ClosedStreamDecision`]); nothing changes.
    Closed(ClosedStreamDecision),
    /// A producer decision other than `Accepted`; nothing changes.
    Producer(ProducerDecision),
    /// Refused before anything changes.
    Rejected(AppendRejection),
}

/// A refusal with its status (400, 409, 413 or 429) and diagnostic code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppendRejection {
    EmptyBody,
    BodyTooLarge,
    ContentType(ContentTypeError),
    TooManyProducers,
    StreamSeqTooLong,
    StreamSeqRegression {
        last: String,
        received: String,
    },
    Json(JsonBodyError),
    StreamFull,
    /// `Producer-Seq-Count` is not the count of the body's JSON items (or the stream is not JSON).
    SeqCountMismatch,
}

/// Decides one POST. Pure: the caller commits [`AppendDecision::Commit`] and nothing else.
pub fn decide_append(stream: &StreamForAppend<'_>, request: &AppendRequest<'_>) -> AppendDecision {
    match decide(stream, request) {
        Ok(commit) => AppendDecision::Commit(commit),
        Err(Stop::Closed(d)) => AppendDecision::Closed(d),
        Err(Stop::Producer(d)) => AppendDecision::Producer(d),
        Err(Stop::Rejected(r)) => AppendDecision::Rejected(r),
    }
}

/// Every way the checks stop before a commit (the non-`Commit` decisions).
enum Stop {
    Closed(ClosedStreamDecision),
    Producer(ProducerDecision),
    Rejected(AppendRejection),
}

fn decide(s: &StreamForAppend<'_>, r: &AppendRequest<'_>) -> Result<AppendCommit, Stop> {
    let reject = |e: AppendRejection| Stop::Rejected(e);
    let body_len = r.body.len() as u64;
    let kind = classify_append(body_len, parse_stream_closed(r.stream_closed))
        .map_err(|_| reject(AppendRejection::EmptyBody))?;
    if body_len > limits::STREAM_APPEND_BYTES_MAX {
        return Err(reject(AppendRejection::BodyTooLarge));
    }
    if kind != AppendKind::CloseOnly && r.content_type.is_none_or(|c| c.trim().is_empty()) {
        return Err(reject(AppendRejection::ContentType(
            ContentTypeError::Missing,
        )));
    }
    if s.closed {
        return Err(Stop::Closed(decide_on_closed(
            kind,
            r.producer,
            s.closed_by,
        )));
    }
    if kind != AppendKind::CloseOnly {
        check_append_content_type(s.content_type, r.content_type)
            .map_err(|e| reject(AppendRejection::ContentType(e)))?;
    }
    let producer = producer_step(s, r)?;
    let stream_seq = match kind {
        AppendKind::CloseOnly => None,
        AppendKind::Append { .. } => seq_step(s, r)?,
    };
    let skip = producer.as_ref().map_or(0, |p| p.skip);
    let data = items_step(data_step(s, r, kind)?, r.producer, skip)?;
    let stored_bytes = data_len(&data);
    let next_offset = next_offset(s, stored_bytes)?;
    let close = matches!(
        kind,
        AppendKind::CloseOnly | AppendKind::Append { close: true }
    );
    Ok(AppendCommit {
        data,
        stored_bytes,
        next_offset,
        producer: producer.as_ref().map(|p| p.next),
        stream_seq,
        close,
        closed_by: closed_by(kind, r.producer),
        // 200 only for a producer append that stored data; close-only is always 204.
        status: if r.producer.is_some() && kind != AppendKind::CloseOnly {
            200
        } else {
            204
        },
        producer_headers: producer.map(|p| p.headers).unwrap_or_default(),
    })
}

/// An accepted producer: its next state, the items stored already (item seqs), the headers.
struct ProducerStep {
    next: ProducerState,
    skip: u64,
    headers: Vec<(&'static str, String)>,
}

fn producer_step(
    s: &StreamForAppend<'_>,
    r: &AppendRequest<'_>,
) -> Result<Option<ProducerStep>, Stop> {
    let Some(headers) = r.producer else {
        return Ok(None);
    };
    check_producer_capacity(s.known_producers, s.producer_state.is_some())
        .map_err(|_| Stop::Rejected(AppendRejection::TooManyProducers))?;
    match validate_producer(s.producer_state, headers) {
        decision @ ProducerDecision::Accepted { next, skip } => {
            let mut answer = decision.response_headers();
            answer.extend(headers.seq_count_echo());
            Ok(Some(ProducerStep {
                next,
                skip,
                headers: answer,
            }))
        }
        other => Err(Stop::Producer(other)),
    }
}

/// With item seqs, the body must hold exactly the declared items (JSON mode); those stored
/// already (`skip`: a retry that overlaps what is stored) are dropped.
fn items_step(
    data: AppendData,
    producer: Option<&ProducerHeaders>,
    skip: u64,
) -> Result<AppendData, Stop> {
    let Some(items) = producer.and_then(|p| p.items) else {
        return Ok(data);
    };
    let mismatch = Stop::Rejected(AppendRejection::SeqCountMismatch);
    match data {
        AppendData::Json(messages) if messages.len() as u64 == items => Ok(AppendData::Json(
            messages.into_iter().skip(skip as usize).collect(),
        )),
        AppendData::Nothing => Ok(AppendData::Nothing),
        AppendData::Bytes(bytes) if items == 1 => Ok(AppendData::Bytes(bytes)),
        _ => Err(mismatch),
    }
}

fn seq_step(s: &StreamForAppend<'_>, r: &AppendRequest<'_>) -> Result<Option<String>, Stop> {
    match check_stream_seq(s.last_stream_seq, r.stream_seq) {
        Err(_) => Err(Stop::Rejected(AppendRejection::StreamSeqTooLong)),
        Ok(StreamSeqDecision::NotProvided) => Ok(None),
        Ok(StreamSeqDecision::Accept { next }) => Ok(Some(next)),
        Ok(StreamSeqDecision::Regression { last, received }) => {
            Err(Stop::Rejected(AppendRejection::StreamSeqRegression {
                last,
                received,
            }))
        }
    }
}

fn data_step(
    s: &StreamForAppend<'_>,
    r: &AppendRequest<'_>,
    kind: AppendKind,
) -> Result<AppendData, Stop> {
    match kind {
        AppendKind::CloseOnly => Ok(AppendData::Nothing),
        AppendKind::Append { .. } if is_json(s.content_type) => {
            flatten_json_body(r.body, JsonWrite::Append)
                .map(AppendData::Json)
                .map_err(|e| Stop::Rejected(AppendRejection::Json(e)))
        }
        AppendKind::Append { .. } => Ok(AppendData::Bytes(r.body.to_vec())),
    }
}

fn next_offset(s: &StreamForAppend<'_>, stored_bytes: u64) -> Result<Offset, Stop> {
    let full = Stop::Rejected(AppendRejection::StreamFull);
    if stored_bytes == 0 {
        return Ok(s.tail);
    }
    match s.stored_bytes.checked_add(stored_bytes) {
        Some(total) if total <= limits::STREAM_BYTES_MAX => {}
        _ => return Err(full),
    }
    s.tail
        .after_append(stored_bytes)
        .map_err(|_: OffsetError| full)
}

/// Bytes a stored append counts for (see [`AppendCommit::stored_bytes`]).
pub fn data_len(data: &AppendData) -> u64 {
    match data {
        AppendData::Nothing => 0,
        AppendData::Bytes(bytes) => bytes.len() as u64,
        AppendData::Json(messages) => {
            let text: usize = messages.iter().map(String::len).sum();
            (text + messages.len().saturating_sub(1)) as u64
        }
    }
}

impl AppendDecision {
    /// The HTTP status of the decision.
    pub fn status(&self) -> u16 {
        match self {
            AppendDecision::Commit(commit) => commit.status,
            AppendDecision::Closed(decision) => decision.status(),
            AppendDecision::Producer(decision) => decision.status(),
            AppendDecision::Rejected(rejection) => rejection.status(),
        }
    }
}

impl fmt::Display for AppendRejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AppendRejection::EmptyBody => f.write_str(
                "an append needs a body unless it closes the stream (Stream-Closed: true)",
            ),
            AppendRejection::BodyTooLarge => write!(
                f,
                "an append may carry at most {} bytes",
                limits::STREAM_APPEND_BYTES_MAX
            ),
            AppendRejection::ContentType(e) => e.fmt(f),
            AppendRejection::TooManyProducers => {
                f.write_str("this stream already tracks as many producers as it can")
            }
            AppendRejection::StreamSeqTooLong => write!(
                f,
                "Stream-Seq must be at most {} bytes",
                limits::STREAM_SEQ_BYTES_MAX
            ),
            AppendRejection::StreamSeqRegression { .. } => {
                f.write_str("Stream-Seq must be greater than the last appended Stream-Seq")
            }
            AppendRejection::Json(e) => e.fmt(f),
            AppendRejection::StreamFull => write!(
                f,
                "a stream may hold at most {} bytes",
                limits::STREAM_BYTES_MAX
            ),
            AppendRejection::SeqCountMismatch => f.write_str(
                "Producer-Seq-Count must be the count of the append's JSON items (1 to 1000), with the other producer headers",
            ),
        }
    }
}

impl Rejection for AppendRejection {
    fn row(&self) -> Row {
        match self {
            AppendRejection::EmptyBody => rows::EMPTY_APPEND,
            AppendRejection::BodyTooLarge => rows::APPEND_TOO_LARGE,
            AppendRejection::ContentType(e) => e.row(),
            AppendRejection::TooManyProducers => rows::PRODUCER_TABLE_FULL,
            AppendRejection::StreamSeqTooLong => rows::STREAM_SEQ_TOO_LONG,
            AppendRejection::StreamSeqRegression { .. } => rows::STREAM_SEQ_REGRESSION,
            AppendRejection::Json(e) => e.row(),
            AppendRejection::StreamFull => rows::STREAM_FULL,
            AppendRejection::SeqCountMismatch => rows::PRODUCER_SEQ_COUNT_INVALID,
        }
    }
}
