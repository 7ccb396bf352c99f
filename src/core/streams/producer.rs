//! Idempotent producers (Durable Streams protocol §5.2.1): Kafka-style fencing and deduplication of appends.
//!
//! Facts relied on:
//! - `Producer-Id`, `Producer-Epoch` and `Producer-Seq` come all together or not at all; some but
//!   not all is 400. The id must be non-empty. Epoch and seq are non-negative decimal integers no
//!   larger than 2^53-1 (digits only: `1abc`, `1e3`, `-1`, `+1`, `1.0` are all 400).
//! - State per (stream, producer id) is the current epoch and the highest accepted seq.
//! - Unknown producer: seq 0 is accepted at whatever epoch it declares; any other seq is a gap
//!   (409, expected 0).
//! - epoch < current: stale, 403 with `Producer-Epoch: <current epoch>` (zombie fencing).
//! - epoch > current: seq must be 0 (else 400); seq 0 starts the new epoch at seq 0 (200).
//! - Same epoch: seq <= highest is a duplicate, 204 with `Producer-Epoch` and
//!   `Producer-Seq: <highest accepted>` (not the request's seq); seq = highest+1 is accepted
//!   (200 with `Producer-Epoch` and `Producer-Seq` echoed); seq > highest+1 is a gap, 409 with
//!   `Producer-Expected-Seq: highest+1` and `Producer-Received-Seq: seq`.
//! - Validation never changes state: the state moves only after the append itself succeeded
//!   (JSON validation, size checks...), in one step with the append. [`commit_producer`] is that
//!   one step. Producer validation precedes the `Stream-Seq` check so that a retry carrying both
//!   headers is a 204 duplicate rather than a `Stream-Seq` 409.
//! - Forks start with no producer state.
//!
//! **Item seqs** (turnkeep's extension, `Producer-Seq-Count: n`): a JSON-mode append of `n`
//! items gives each item its own seq, `Producer-Seq` … `Producer-Seq + n - 1`, and is decided as
//! those `n` one-item appends would be, in one step: a duplicate when every seq is stored, a gap
//! when the first is ahead of the next expected one, and when the batch overlaps what is stored
//! (a retry cut differently) only the items past the highest stored seq are appended (`skip`).
//! So a writer can send what it produced within one frame as one request and one transaction
//! while each item keeps the seq it would have had alone. A server that supports it echoes the
//! header on accepted and duplicate answers; one that does not ignores it (and the writer, seeing
//! no echo, sends one item per request).

use crate::diagnostics::{streams as rows, Row};
use std::fmt;

use super::Rejection;
use crate::limits;

/// Validated producer headers of one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerHeaders {
    pub id: String,
    pub epoch: u64,
    pub seq: u64,
    /// `Producer-Seq-Count`: the request's `n` items take the seqs `seq..seq + n` (item seqs,
    /// above); `None`: the request is one batch with one seq, as the protocol has it.
    pub items: Option<u64>,
}

impl ProducerHeaders {
    /// The highest seq the request carries.
    pub fn last_seq(&self) -> u64 {
        self.seq + self.items.unwrap_or(1).saturating_sub(1)
    }

    /// The header an answer echoes when the request used item seqs (accepted or duplicate).
    pub fn seq_count_echo(&self) -> Option<(&'static str, String)> {
        self.items.map(|n| ("Producer-Seq-Count", n.to_string()))
    }
}

/// What the stream remembers about one producer id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProducerState {
    pub epoch: u64,
    /// Highest accepted `Producer-Seq` in `epoch`.
    pub last_seq: u64,
}

/// The outcome of [`validate_producer`]. Only `Accepted` may be committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProducerDecision {
    /// Append (all but the first `skip` items: with item seqs, those are stored already), then
    /// commit `next`. 200 with `Producer-Epoch` and `Producer-Seq` (the highest seq) echoed.
    Accepted { next: ProducerState, skip: u64 },
    /// Already appended: 204, `Producer-Epoch: epoch`, `Producer-Seq: highest_seq`.
    Duplicate { epoch: u64, highest_seq: u64 },
    /// 403 with `Producer-Epoch: current_epoch`.
    StaleEpoch { current_epoch: u64 },
    /// A higher epoch must start at seq 0: 400.
    NewEpochSeqNotZero { epoch: u64, seq: u64 },
    /// 409 with `Producer-Expected-Seq` and `Producer-Received-Seq`.
    SequenceGap { expected: u64, received: u64 },
}

/// Why the producer headers were refused (400).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProducerHeaderError {
    /// Some but not all of the three headers.
    Partial,
    EmptyId,
    IdTooLong,
    InvalidEpoch,
    InvalidSeq,
    /// `Producer-Seq-Count` is not an integer from 1 to [`limits::STREAM_PRODUCER_SEQ_COUNT_MAX`]
    /// (or its last seq passes 2^53-1), or comes without the other producer headers.
    InvalidSeqCount,
}

/// Parses the three headers. `Ok(None)` when none is present.
pub fn parse_producer_headers(
    id: Option<&str>,
    epoch: Option<&str>,
    seq: Option<&str>,
) -> Result<Option<ProducerHeaders>, ProducerHeaderError> {
    let (id, epoch, seq) = match (id, epoch, seq) {
        (None, None, None) => return Ok(None),
        (Some(id), Some(epoch), Some(seq)) => (id, epoch, seq),
        _ => return Err(ProducerHeaderError::Partial),
    };
    if id.is_empty() {
        return Err(ProducerHeaderError::EmptyId);
    }
    if id.len() > limits::STREAM_PRODUCER_ID_BYTES_MAX {
        return Err(ProducerHeaderError::IdTooLong);
    }
    let epoch = parse_safe_uint(epoch).ok_or(ProducerHeaderError::InvalidEpoch)?;
    let seq = parse_safe_uint(seq).ok_or(ProducerHeaderError::InvalidSeq)?;
    Ok(Some(ProducerHeaders {
        id: id.to_owned(),
        epoch,
        seq,
        items: None,
    }))
}

/// Adds `Producer-Seq-Count` (item seqs, see the module doc) to parsed producer headers.
pub fn with_seq_count(
    producer: Option<ProducerHeaders>,
    count: Option<&str>,
) -> Result<Option<ProducerHeaders>, ProducerHeaderError> {
    let Some(count) = count else {
        return Ok(producer);
    };
    let mut producer = producer.ok_or(ProducerHeaderError::InvalidSeqCount)?;
    let items = parse_safe_uint(count)
        .filter(|n| (1..=limits::STREAM_PRODUCER_SEQ_COUNT_MAX).contains(n))
        .filter(|n| {
            producer
                .seq
                .checked_add(n - 1)
                .is_some_and(|l| l <= limits::INTEGER_SAFE_MAX)
        })
        .ok_or(ProducerHeaderError::InvalidSeqCount)?;
    producer.items = Some(items);
    Ok(Some(producer))
}

/// Decides a producer request against the stored state of its id. Pure: nothing changes.
pub fn validate_producer(
    state: Option<&ProducerState>,
    headers: &ProducerHeaders,
) -> ProducerDecision {
    let (epoch, seq, last) = (headers.epoch, headers.seq, headers.last_seq());
    let Some(state) = state else {
        return if seq == 0 {
            ProducerDecision::Accepted {
                next: ProducerState {
                    epoch,
                    last_seq: last,
                },
                skip: 0,
            }
        } else {
            ProducerDecision::SequenceGap {
                expected: 0,
                received: seq,
            }
        };
    };
    if epoch < state.epoch {
        return ProducerDecision::StaleEpoch {
            current_epoch: state.epoch,
        };
    }
    if epoch > state.epoch {
        return if seq == 0 {
            ProducerDecision::Accepted {
                next: ProducerState {
                    epoch,
                    last_seq: last,
                },
                skip: 0,
            }
        } else {
            ProducerDecision::NewEpochSeqNotZero { epoch, seq }
        };
    }
    let expected = state.last_seq.saturating_add(1);
    match seq {
        _ if last <= state.last_seq => ProducerDecision::Duplicate {
            epoch,
            highest_seq: state.last_seq,
        },
        // The next expected seq, or (item seqs) a batch whose first items are stored already.
        s if s <= expected => ProducerDecision::Accepted {
            next: ProducerState {
                epoch,
                last_seq: last,
            },
            skip: expected - s,
        },
        s => ProducerDecision::SequenceGap {
            expected,
            received: s,
        },
    }
}

/// The state of a producer id after `decision`: an accepted request moves it, any other leaves
/// it as it was (`None` stays `None`). An append needs no call: `decide_append` already puts
/// the accepted state in `AppendCommit::producer`, which the caller commits.
pub fn commit_producer(
    state: Option<&ProducerState>,
    decision: &ProducerDecision,
) -> Option<ProducerState> {
    match decision {
        ProducerDecision::Accepted { next, .. } => Some(*next),
        _ => state.copied(),
    }
}

/// A new producer id on a stream that already remembers [`limits::STREAM_PRODUCERS_MAX`] (429).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProducerTableFull;

/// Refuses a request from an id the stream does not know yet when the stream is at capacity.
/// State is durable (the protocol asks persistent stores to keep it as long as the data), so
/// nothing is evicted to make room.
pub fn check_producer_capacity(
    known_producers: usize,
    id_is_known: bool,
) -> Result<(), ProducerTableFull> {
    if !id_is_known && known_producers >= limits::STREAM_PRODUCERS_MAX {
        return Err(ProducerTableFull);
    }
    Ok(())
}

impl ProducerDecision {
    /// HTTP status the protocol prescribes for the decision.
    pub fn status(&self) -> u16 {
        match self {
            ProducerDecision::Accepted { .. } => 200,
            ProducerDecision::Duplicate { .. } => 204,
            ProducerDecision::StaleEpoch { .. } => 403,
            ProducerDecision::NewEpochSeqNotZero { .. } => 400,
            ProducerDecision::SequenceGap { .. } => 409,
        }
    }

    /// The producer response headers of the decision (the HTTP layer adds `Stream-Next-Offset`,
    /// `Stream-Closed`... itself).
    pub fn response_headers(&self) -> Vec<(&'static str, String)> {
        match *self {
            ProducerDecision::Accepted { next, .. } => vec![
                ("Producer-Epoch", next.epoch.to_string()),
                ("Producer-Seq", next.last_seq.to_string()),
            ],
            ProducerDecision::Duplicate { epoch, highest_seq } => vec![
                ("Producer-Epoch", epoch.to_string()),
                ("Producer-Seq", highest_seq.to_string()),
            ],
            ProducerDecision::StaleEpoch { current_epoch } => {
                vec![("Producer-Epoch", current_epoch.to_string())]
            }
            ProducerDecision::NewEpochSeqNotZero { .. } => Vec::new(),
            ProducerDecision::SequenceGap { expected, received } => vec![
                ("Producer-Expected-Seq", expected.to_string()),
                ("Producer-Received-Seq", received.to_string()),
            ],
        }
    }

    /// The registry row a refused write is answered with (`None`: the write is accepted or a
    /// duplicate, answered without a diagnostic).
    pub fn refusal_row(&self) -> Option<Row> {
        match self {
            ProducerDecision::Accepted { .. } | ProducerDecision::Duplicate { .. } => None,
            ProducerDecision::StaleEpoch { .. } => Some(rows::PRODUCER_STALE_EPOCH),
            ProducerDecision::NewEpochSeqNotZero { .. } => {
                Some(rows::PRODUCER_NEW_EPOCH_SEQ_NOT_ZERO)
            }
            ProducerDecision::SequenceGap { .. } => Some(rows::PRODUCER_SEQUENCE_GAP),
        }
    }
}

/// A non-negative decimal integer of ASCII digits only, at most 2^53-1. Leading zeros are
/// accepted (the reference server accepts them); signs, spaces, fractions and exponents are not.
fn parse_safe_uint(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = s.trim_start_matches('0');
    if digits.len() > 16 {
        return None; // beyond 2^53-1 (16 digits) without risking overflow
    }
    let n = digits
        .bytes()
        .fold(0u64, |acc, d| acc * 10 + u64::from(d - b'0'));
    (n <= limits::INTEGER_SAFE_MAX).then_some(n)
}

impl fmt::Display for ProducerHeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProducerHeaderError::Partial => {
                "Producer-Id, Producer-Epoch and Producer-Seq must be given together or not at all"
            }
            ProducerHeaderError::EmptyId => "Producer-Id must not be empty",
            ProducerHeaderError::IdTooLong => "Producer-Id is too long",
            ProducerHeaderError::InvalidEpoch => {
                "Producer-Epoch must be a non-negative integer no larger than 2^53-1"
            }
            ProducerHeaderError::InvalidSeq => {
                "Producer-Seq must be a non-negative integer no larger than 2^53-1"
            }
            ProducerHeaderError::InvalidSeqCount => {
                "Producer-Seq-Count must be the count of the append's JSON items (1 to 1000), with the other producer headers"
            }
        })
    }
}

impl Rejection for ProducerHeaderError {
    fn row(&self) -> Row {
        match self {
            ProducerHeaderError::Partial => rows::PRODUCER_HEADERS_PARTIAL,
            ProducerHeaderError::EmptyId => rows::PRODUCER_ID_EMPTY,
            ProducerHeaderError::IdTooLong => rows::PRODUCER_ID_TOO_LONG,
            ProducerHeaderError::InvalidEpoch => rows::PRODUCER_EPOCH_INVALID,
            ProducerHeaderError::InvalidSeq => rows::PRODUCER_SEQ_INVALID,
            ProducerHeaderError::InvalidSeqCount => rows::PRODUCER_SEQ_COUNT_INVALID,
        }
    }
}

impl fmt::Display for ProducerTableFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("this stream already tracks as many producers as it can")
    }
}

impl Rejection for ProducerTableFull {
    fn row(&self) -> Row {
        rows::PRODUCER_TABLE_FULL
    }
}
