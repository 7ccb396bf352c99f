//! When the `SessionStream` object waits, and for how long: long-poll, the producer-gap retry
//! and the SSE response's lifecycle, as pure step functions of an injected clock (`now_ms`).
//! The shell (`shell.rs`) performs what they return (a wait on the object's waiters, bounded by
//! a timer; a write; closing the response) and feeds the outcome back in; it keeps no timing
//! rule of its own. Tested on the host in `tests/streams_timing.rs`.

use crate::core::limits;

/// The waits of one object, from its environment (`STREAMS_LONG_POLL_MS`, `STREAMS_SSE_MS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waits {
    /// How long a long-poll waits before it answers 204; also the SSE keep-alive interval.
    pub long_poll_ms: u64,
    /// How long an SSE response stays open before the server ends it.
    pub sse_ms: u64,
}

impl Waits {
    /// Reads the two settings: unset, empty, not a number or not positive → the default; larger
    /// than the maximum → the maximum.
    pub fn from_env(long_poll: Option<&str>, sse: Option<&str>) -> Waits {
        Waits {
            long_poll_ms: configured_ms(
                long_poll,
                limits::STREAM_LONG_POLL_MS_DEFAULT,
                limits::STREAM_LONG_POLL_MS_MAX,
            ),
            sse_ms: configured_ms(
                sse,
                limits::STREAM_SSE_CONNECTION_MS_MAX,
                limits::STREAM_SSE_CONNECTION_MS_MAX,
            ),
        }
    }
}

/// A duration setting: `fallback` unless `value` is a positive number; at most `max`.
pub fn configured_ms(value: Option<&str>, fallback: u64, max: u64) -> u64 {
    match value.map(str::trim).and_then(|v| v.parse::<f64>().ok()) {
        Some(ms) if ms.is_finite() && ms >= 1.0 => (ms as u64).min(max),
        _ => fallback,
    }
}

/// What a reader does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadStep {
    /// Answer with the reply the core gave.
    Answer,
    /// Wait for a change until `until_ms` (a timer bounds it), then ask the core again with
    /// `offset` (an `offset=now` read must not move on to a later tail).
    Wait { until_ms: u64, offset: String },
    /// The reader went away while waiting: stop now (whatever is answered, nobody reads it).
    /// Without this a wait that returns at once for an aborted reader would spin until the
    /// deadline, holding the isolate.
    Abandon,
}

/// One long-poll GET: asks the core, waits at the tail until the deadline, asks again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LongPoll {
    deadline_ms: u64,
}

impl LongPoll {
    pub fn start(now_ms: u64, waits: Waits) -> LongPoll {
        LongPoll {
            deadline_ms: now_ms.saturating_add(waits.long_poll_ms),
        }
    }

    /// True once the poll has waited its time: the core then answers 204 instead of asking to
    /// wait again.
    pub fn expired(&self, now_ms: u64) -> bool {
        now_ms >= self.deadline_ms
    }

    /// After the core answered: `wait_at` is the offset it asked to wait at (none: an answer);
    /// `aborted` when the reader has gone away.
    pub fn step(&self, wait_at: Option<String>, aborted: bool) -> ReadStep {
        match wait_at {
            None => ReadStep::Answer,
            Some(_) if aborted => ReadStep::Abandon,
            Some(offset) => ReadStep::Wait {
                until_ms: self.deadline_ms,
                offset,
            },
        }
    }
}

/// What an append does after the core answered it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppendStep {
    Answer,
    /// The append is ahead of its producer's next seq: wait for a change until `until_ms`, then
    /// decide it again.
    RetryAfterChange {
        until_ms: u64,
    },
}

/// The producer-gap retry of one append: pipelined batches often arrive out of order by a
/// millisecond or two, so an append ahead of its predecessors is held (at most
/// `STREAM_PRODUCER_GAP_WAIT_MS`) and decided again as appends commit, and answered 409 only if
/// the gap is still open then — what the client would do after a 409, without the round trip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GapRetry {
    deadline_ms: u64,
}

impl GapRetry {
    pub fn start(now_ms: u64) -> GapRetry {
        GapRetry {
            deadline_ms: now_ms.saturating_add(limits::STREAM_PRODUCER_GAP_WAIT_MS),
        }
    }

    /// `gap`: the core's answer was a sequence gap. `changed`: whether the wait before this
    /// decision ended with a change (`None` for the first decision). A wait that ended without a
    /// change (time is up, or the client left) answers what the core said.
    pub fn step(&self, gap: bool, changed: Option<bool>, now_ms: u64) -> AppendStep {
        if !gap || changed == Some(false) || now_ms >= self.deadline_ms {
            return AppendStep::Answer;
        }
        AppendStep::RetryAfterChange {
            until_ms: self.deadline_ms,
        }
    }
}

/// What an open SSE response does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SseStep {
    /// Render the next chunk (`control_if_empty`: with nothing new, still write one control
    /// event: the first chunk tells the reader where it stands, and a quiet wait ends with a
    /// keep-alive).
    Render { control_if_empty: bool },
    /// Wait for a change until `until_ms`.
    Wait { until_ms: u64 },
    /// End the response normally (the stream is closed and read, or the connection's time is up).
    Close,
    /// End the response as failed (the reader went away or stopped reading).
    Abort,
}

/// The lifecycle of one SSE response: render, write, wait (keep-alive cadence = the long-poll
/// time), render again, until the stream is done, the connection's time is up
/// (`STREAMS_SSE_MS`, at most 60 s; the client reconnects from the last control event's
/// offset) or the reader goes away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SseSession {
    end_at_ms: u64,
    keep_alive_ms: u64,
}

/// How one SSE write went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// The chunk was written (or there was nothing to write).
    Ok,
    /// The reader went away, or did not take the chunk before the connection's end time.
    Failed,
}

impl SseSession {
    pub fn start(now_ms: u64, waits: Waits) -> (SseSession, SseStep) {
        let session = SseSession {
            end_at_ms: now_ms.saturating_add(waits.sse_ms),
            keep_alive_ms: waits.long_poll_ms,
        };
        (
            session,
            SseStep::Render {
                control_if_empty: true,
            },
        )
    }

    /// A write may take until here: a reader that stopped reading must not pin the object.
    pub fn write_deadline_ms(&self) -> u64 {
        self.end_at_ms
    }

    /// After a chunk was rendered and written: `done` when the chunk said the stream is closed
    /// and read to its end (or gone).
    pub fn after_write(&self, written: Written, done: bool, aborted: bool, now_ms: u64) -> SseStep {
        if written == Written::Failed {
            return SseStep::Abort;
        }
        if done || aborted || now_ms >= self.end_at_ms {
            return SseStep::Close;
        }
        SseStep::Wait {
            until_ms: now_ms
                .saturating_add(self.keep_alive_ms)
                .min(self.end_at_ms),
        }
    }

    /// After a wait: `changed` when the stream changed (else the wait timed out, a keep-alive is
    /// due, or the reader went away: `aborted`).
    pub fn after_wait(&self, changed: bool, aborted: bool) -> SseStep {
        if aborted {
            return SseStep::Close;
        }
        SseStep::Render {
            control_if_empty: !changed,
        }
    }
}

/// The kinds of reader that wait on a stream, each bounded on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    LongPoll,
    Sse,
}

impl Reader {
    /// How many of this kind may wait on one stream at once.
    pub const fn max(self) -> usize {
        match self {
            Reader::LongPoll => limits::STREAM_LONG_POLL_WAITERS_MAX,
            Reader::Sse => limits::STREAM_SSE_CONNECTIONS_MAX,
        }
    }
}

/// The readers of one stream waiting now, by kind. `admit` takes a place or says no (the reader
/// is answered 429 `streams.v1.readers_busy`); `leave` gives it back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReaderCounts {
    pub long_polls: usize,
    pub sse: usize,
}

impl ReaderCounts {
    fn slot(&mut self, kind: Reader) -> &mut usize {
        match kind {
            Reader::LongPoll => &mut self.long_polls,
            Reader::Sse => &mut self.sse,
        }
    }

    pub fn admit(&mut self, kind: Reader) -> bool {
        let slot = self.slot(kind);
        let admitted = *slot < kind.max();
        if admitted {
            *slot += 1;
        }
        admitted
    }

    pub fn leave(&mut self, kind: Reader) {
        let slot = self.slot(kind);
        *slot = slot.saturating_sub(1);
    }
}

/// How far a fork-reference release walks up a chain: `Some(next)` while `hops` (those done,
/// counting this one) stay within `STREAM_FORK_RELEASE_HOPS_MAX`, else `None` (stop).
pub fn next_release_hop(hops: usize, next: Option<String>) -> Option<String> {
    next.filter(|_| hops < limits::STREAM_FORK_RELEASE_HOPS_MAX)
}
