//! SessionLog: a session's append-only chunk log, the durable stream every client of
//! a session reads. turnkeep appends each turn to it as it runs; readers project it into
//! messages with `turnkeep_core::projection`.
//!
//! The contract every adapter keeps (checked by the shared conformance suite):
//! - `append(chunks, producer)` stores `chunks` (each the JSON text of one chunk) after everything
//!   stored before, all or nothing, and returns the offset after them.
//! - With a producer stamp `(id, epoch, seq)` the append is an idempotent-producer batch with the
//!   Durable Streams rules (`turnkeep_core::streams::producer`): an epoch older than the newest one
//!   seen for `id` is refused (`StaleEpoch`, nothing stored); a `seq` already stored under the same
//!   `(id, epoch)` is a duplicate (`Ok` with `duplicate: true`, nothing stored again); a `seq`
//!   beyond the next expected one is a `SequenceGap`; a newer epoch starts again at seq 0.
//! - Item seqs: a stamp may ask for them (`ProducerStamp::item_seqs`); a log that gives them (its
//!   acks say `item_seqs`) gives chunk `i` of the append the seq `seq + i`, as if each chunk were
//!   appended alone, in one step: only the chunks past the highest stored seq are stored. For one
//!   chunk both readings agree, so a writer asks on every append and sends more than one chunk
//!   per stamped append only to a log whose ack said yes.
//! - `read(from, wait_ms)` returns the chunks after `from` in order, and the offset to read from
//!   next. With `wait_ms > 0` and nothing new, it waits up to that long for an append (long-poll).
//! - Offsets are opaque strings that sort like the positions they name; an empty log has none.

use serde_json::Value;

use super::{CancelToken, LocalFuture, PortError};

/// An idempotent producer's stamp for one append (one batch).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerStamp {
    /// Stable across retries of the same work, e.g. `chat-turn:<sessionId>:<turnId>`.
    pub id: String,
    /// The writer's generation: a newer claim writes with a larger epoch and fences older ones.
    pub epoch: u64,
    /// The batch's index within `(id, epoch)`, from 0 without gaps (with item seqs: its first
    /// chunk's).
    pub seq: u64,
    /// Asks for item seqs (see the module doc).
    pub item_seqs: bool,
}

/// An acknowledged append.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppendAck {
    /// The log's offset after this append (the tail).
    pub offset: String,
    /// True when the producer batch was already stored; nothing was appended this time.
    pub duplicate: bool,
    /// The log gave each chunk of this stamped append its own seq (it was asked to and can).
    pub item_seqs: bool,
}

/// Where a read starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadFrom<'a> {
    /// The first chunk ever stored.
    Start,
    /// Just after `offset` (an offset an earlier read or append returned).
    After(&'a str),
    /// The current tail: nothing stored so far is returned, only what comes next.
    Now,
}

/// Chunks read from the log.
#[derive(Clone, Debug, PartialEq)]
pub struct LogRead {
    pub chunks: Vec<Value>,
    /// Where the next read continues; `None` only for a log that holds nothing (missing, or
    /// created and never appended to), read from its start or from now.
    pub offset: Option<String>,
    /// True when `chunks` reach the tail as it was when the log answered.
    pub up_to_date: bool,
}

/// Why a log call failed. The kinds mirror the Durable Streams producer vocabulary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogError {
    /// A newer epoch has written under this producer id: this writer is fenced.
    StaleEpoch { current_epoch: u64 },
    /// `seq` is ahead of the next expected one (an earlier batch has not arrived).
    SequenceGap { expected: u64, received: u64 },
    /// The log is closed to appends.
    StreamClosed,
    /// A transient failure (network, overload); the same call may be retried as is.
    Retryable(PortError),
    /// Anything else (refused, malformed, misconfigured); retrying will not help.
    Failed(PortError),
}

impl LogError {
    /// The producer-error vocabulary (`kind`) shared with `toChatResponse`'s `ChatProducerError`.
    pub fn kind(&self) -> &'static str {
        match self {
            LogError::StaleEpoch { .. } => "stale-epoch",
            LogError::SequenceGap { .. } => "sequence-gap",
            LogError::StreamClosed => "stream-closed",
            LogError::Retryable(_) => "retryable",
            LogError::Failed(_) => "failed",
        }
    }

    /// The underlying port failure, when there is one (for the operator's log).
    pub fn port_error(&self) -> PortError {
        match self {
            LogError::Retryable(e) | LogError::Failed(e) => e.clone(),
            other => PortError::new(format!("session log: {}", other.kind())),
        }
    }
}

impl std::fmt::Display for LogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LogError::StaleEpoch { current_epoch } => {
                write!(f, "stale epoch (current epoch {current_epoch})")
            }
            LogError::SequenceGap { expected, received } => {
                write!(f, "sequence gap (expected {expected}, received {received})")
            }
            LogError::StreamClosed => f.write_str("stream closed"),
            LogError::Retryable(e) => write!(f, "retryable: {e}"),
            LogError::Failed(e) => write!(f, "failed: {e}"),
        }
    }
}

/// A session's durable chunk log.
pub trait SessionLog {
    /// Appends `chunks` (JSON texts, one chunk each) as one batch.
    fn append<'a>(
        &'a self,
        chunks: &'a [String],
        producer: Option<&'a ProducerStamp>,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<AppendAck, LogError>>;

    /// True when this log is known to give item seqs before any append (it was built for a
    /// server that does): a writer may then send several chunks in its first stamped append
    /// too. Its acks still say so on every append.
    fn gives_item_seqs(&self) -> bool {
        false
    }

    /// Chunks after `from`; waits up to `wait_ms` for new ones when there are none yet.
    fn read<'a>(
        &'a self,
        from: ReadFrom<'a>,
        wait_ms: u64,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<LogRead, LogError>>;
}
