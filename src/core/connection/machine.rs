//! The live connection's decisions (`createChatConnection`): one physical SSE read shared by
//! any number of logical readers, the transport cursor, the retry schedule and exactly-once
//! delivery. A state machine: the shell reports what happened (a reader came or went, a read
//! answered, bytes arrived, a read ended, a timer fired) and performs the [`Action`]s returned.
//! It owns no socket, timer or clock: time is an argument, randomness a seeded generator.
//!
//! Rules:
//! - **Sharing.** The first reader opens the read; later readers join it and get the chunks
//!   delivered after they joined. A reader that leaves ends alone; the last one closes the read.
//!   `dispose` ends every reader and the read; nothing opens after it.
//! - **Cursor.** The connection reads from `initialOffset` (the start when absent) and keeps the
//!   offset of the last control event. A later read (a reconnect, or a new reader after all had
//!   left) resumes there, with the replay state (everything delivered, projected) kept.
//! - **Exactly once.** A `data` event's chunks are held until the `control` event that follows
//!   it names the offset after them, and delivered only if that offset lies beyond the cursor.
//!   A read that breaks between the two drops the held chunks; the next read, from the cursor,
//!   gets them again with their control event. So no chunk is delivered twice or skipped.
//! - **Retries.** 404 (the stream does not exist yet: no turn has published) polls again with a
//!   growing delay ([`CONNECTION_MISSING_POLL_MS_MIN`]..[`CONNECTION_MISSING_POLL_MS_MAX`]) for as
//!   long as a reader waits; [`Connection::nudge`] (a turn was just sent) polls at once. Network
//!   errors, 429/5xx and broken event streams retry with backoff
//!   ([`CONNECTION_RETRY_MS_MIN`]..[`CONNECTION_RETRY_MS_MAX`]) and end the readers with
//!   `STREAM_UNAVAILABLE` after [`CONNECTION_FAILURES_MAX`] failures in a row. A read that was
//!   healthy (moved the cursor, or stayed open [`CONNECTION_HEALTHY_MS`]) reconnects at once
//!   when it ends. A refusal (401, 403, 400...) or an answer that is not an event stream ends
//!   the readers at once. `streamClosed` ends them normally, for good.

use std::collections::BTreeMap;

use serde_json::Value;

use super::backoff::{delay_ms, Jitter};
use super::failure::ConnectionFailure;
use super::wire::{answer, control, data_items, Answer, Control, ReadOffset};
use crate::limits::{
    CONNECTION_FAILURES_MAX, CONNECTION_HEALTHY_MS, CONNECTION_MISSING_POLL_MS_MAX,
    CONNECTION_MISSING_POLL_MS_MIN, CONNECTION_READERS_MAX, CONNECTION_READER_BACKLOG_CHUNKS_MAX,
    CONNECTION_RETRY_MS_MAX, CONNECTION_RETRY_MS_MIN, CONNECTION_SSE_EVENT_BYTES_MAX,
};
use crate::projection::{Identity, Projection};
use crate::sse::SseParser;

/// A logical reader (one `subscribe()`).
pub type ReaderId = u64;

/// What the shell must do. Every `Connect` and `Wait` carries a new generation; events the
/// shell reports name the generation they belong to, and the machine ignores stale ones.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Start the read `GET {url}?offset=<offset>&live=sse[&cursor=<cursor>]`.
    Connect {
        generation: u64,
        offset: ReadOffset,
        cursor: Option<String>,
    },
    /// Stop the read (or clear the timer) of `generation`; its later events are stale.
    Abort { generation: u64 },
    /// Call [`Connection::timer_fired`] with `generation` after `delay_ms`.
    Wait { generation: u64, delay_ms: u64 },
    /// Hand `chunks`, in order, to each of `readers`.
    Deliver {
        readers: Vec<ReaderId>,
        chunks: Vec<Value>,
    },
    /// End `readers`: normally, or with `failure`.
    End {
        readers: Vec<ReaderId>,
        failure: Option<ConnectionFailure>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    /// No read and no timer.
    Idle,
    /// A read was started; its answer has not come.
    Connecting { generation: u64 },
    /// The read answered with an event stream.
    Open {
        generation: u64,
        opened_ms: u64,
        advanced: bool,
    },
    /// A timer runs; when it fires, a read starts. `missing`: waiting for the stream to exist.
    Waiting { generation: u64, missing: bool },
}

impl Link {
    fn generation(self) -> Option<u64> {
        match self {
            Link::Idle => None,
            Link::Connecting { generation }
            | Link::Open { generation, .. }
            | Link::Waiting { generation, .. } => Some(generation),
        }
    }
}

/// One connection's state.
#[derive(Debug)]
pub struct Connection {
    offset: ReadOffset,
    /// The last `streamCursor`, echoed as `cursor` on the next read.
    cursor: Option<String>,
    /// Reader → chunks delivered and not yet taken.
    readers: BTreeMap<ReaderId, usize>,
    next_reader: ReaderId,
    link: Link,
    generation: u64,
    /// Failed reads in a row; 404 polls in a row.
    failures: u32,
    missing: u32,
    /// Chunks of `data` events whose `control` event has not come yet.
    held: Vec<Value>,
    sse: SseParser,
    /// Everything delivered, projected (seeded with the initial messages).
    replay: Projection,
    /// The session and revision this connection was prepared for: a delivery naming another
    /// is refused whole ([`crate::projection::identity`]).
    identity: Identity,
    closed: bool,
    disposed: bool,
    jitter: Jitter,
}

impl Connection {
    /// A connection that reads from `offset`, with `replay` as its state so far.
    pub fn new(offset: ReadOffset, replay: Projection, seed: u64) -> Self {
        Self {
            offset,
            cursor: None,
            readers: BTreeMap::new(),
            next_reader: 1,
            link: Link::Idle,
            generation: 0,
            failures: 0,
            missing: 0,
            held: Vec::new(),
            sse: new_parser(),
            replay,
            identity: Identity::default(),
            closed: false,
            disposed: false,
            jitter: Jitter::new(seed),
        }
    }

    /// The same connection, prepared for `identity`: chunks naming another session or
    /// definition revision end the readers with the mismatch, undelivered and unprojected.
    pub fn with_identity(mut self, identity: Identity) -> Self {
        self.identity = identity;
        self
    }

    /// The transport cursor: where the next read starts.
    pub fn offset(&self) -> &ReadOffset {
        &self.offset
    }

    /// Everything delivered so far (and the initial messages), projected.
    pub fn replay(&self) -> &Projection {
        &self.replay
    }

    pub fn reader_count(&self) -> usize {
        self.readers.len()
    }

    pub fn is_disposed(&self) -> bool {
        self.disposed
    }

    /// True while a read is started or open (not idle, not waiting on a timer).
    pub fn is_reading(&self) -> bool {
        matches!(self.link, Link::Connecting { .. } | Link::Open { .. })
    }

    /// A new reader. It gets the chunks delivered from now on; the first reader starts the read.
    pub fn subscribe(&mut self) -> (ReaderId, Vec<Action>) {
        let id = self.next_reader;
        self.next_reader += 1;
        let refuse = |failure| {
            vec![Action::End {
                readers: vec![id],
                failure,
            }]
        };
        if self.disposed || self.closed {
            return (id, refuse(None));
        }
        if self.readers.len() >= CONNECTION_READERS_MAX {
            return (id, refuse(Some(ConnectionFailure::ReadersExhausted)));
        }
        self.readers.insert(id, 0);
        let mut out = Vec::new();
        if self.link == Link::Idle {
            self.connect(&mut out);
        }
        (id, out)
    }

    /// A reader leaves (its signal fired, or it stopped iterating). The last one closes the read.
    pub fn cancel(&mut self, reader: ReaderId) -> Vec<Action> {
        if self.readers.remove(&reader).is_none() {
            return Vec::new();
        }
        let mut out = vec![Action::End {
            readers: vec![reader],
            failure: None,
        }];
        if self.readers.is_empty() {
            self.stop_link(&mut out);
        }
        out
    }

    /// Ends every reader and the read, for good. Idempotent.
    pub fn dispose(&mut self) -> Vec<Action> {
        if self.disposed {
            return Vec::new();
        }
        self.disposed = true;
        let mut out = Vec::new();
        self.end_all(None, &mut out);
        out
    }

    /// A reader took `count` of its delivered chunks.
    pub fn took(&mut self, reader: ReaderId, count: usize) {
        if let Some(backlog) = self.readers.get_mut(&reader) {
            *backlog = backlog.saturating_sub(count);
        }
    }

    /// The read of `generation` answered with `status` (`event_stream`: its content type).
    pub fn response(
        &mut self,
        generation: u64,
        status: u16,
        event_stream: bool,
        now_ms: u64,
    ) -> Vec<Action> {
        if self.link != (Link::Connecting { generation }) {
            return Vec::new();
        }
        let mut out = Vec::new();
        match answer(status, event_stream) {
            Answer::Events => {
                self.missing = 0;
                self.link = Link::Open {
                    generation,
                    opened_ms: now_ms,
                    advanced: false,
                };
            }
            Answer::Missing => {
                out.push(Action::Abort { generation });
                let delay = self.delay(self.missing, true);
                self.missing = self.missing.saturating_add(1);
                self.wait(delay, true, &mut out);
            }
            Answer::Retry => {
                out.push(Action::Abort { generation });
                self.link = Link::Idle;
                self.fail(&mut out);
            }
            Answer::NotEventStream => {
                self.end_all(Some(ConnectionFailure::NotEventStream), &mut out)
            }
            Answer::Refused { status } => {
                self.end_all(Some(ConnectionFailure::Refused { status }), &mut out)
            }
        }
        out
    }

    /// Bytes of the event stream of `generation` arrived.
    pub fn body(&mut self, generation: u64, bytes: &[u8]) -> Vec<Action> {
        if !matches!(self.link, Link::Open { generation: g, .. } if g == generation) {
            return Vec::new();
        }
        let mut out = Vec::new();
        let Ok(events) = self.sse.push(bytes) else {
            self.broken(generation, &mut out);
            return out;
        };
        for event in events {
            let ok = match event.event.as_str() {
                "data" => match data_items(&event.data) {
                    Some(items) => {
                        self.held.extend(items);
                        true
                    }
                    None => false,
                },
                "control" => match control(&event.data) {
                    Some(c) => {
                        self.on_control(c, &mut out);
                        true
                    }
                    None => false,
                },
                _ => true, // other event types carry nothing a reader needs
            };
            if !ok {
                self.broken(generation, &mut out);
                return out;
            }
            if self.link.generation() != Some(generation) {
                break; // the stream closed, or the last reader overflowed
            }
        }
        out
    }

    /// The read of `generation` ended: its body finished, or the fetch or the body failed.
    pub fn ended(&mut self, generation: u64, now_ms: u64) -> Vec<Action> {
        let healthy = match self.link {
            Link::Connecting { generation: g } if g == generation => false,
            Link::Open {
                generation: g,
                opened_ms,
                advanced,
            } if g == generation => {
                advanced || now_ms.saturating_sub(opened_ms) >= CONNECTION_HEALTHY_MS
            }
            _ => return Vec::new(),
        };
        self.link = Link::Idle;
        let mut out = Vec::new();
        if healthy {
            self.failures = 0;
            self.connect(&mut out);
        } else {
            self.fail(&mut out);
        }
        out
    }

    /// The timer of `generation` fired.
    pub fn timer_fired(&mut self, generation: u64) -> Vec<Action> {
        if !matches!(self.link, Link::Waiting { generation: g, .. } if g == generation) {
            return Vec::new();
        }
        let mut out = Vec::new();
        self.connect(&mut out);
        out
    }

    /// Something says the stream now exists (a turn was just accepted): a read that waits for
    /// the stream to appear starts at once.
    pub fn nudge(&mut self) -> Vec<Action> {
        let mut out = Vec::new();
        if let Link::Waiting {
            generation,
            missing: true,
        } = self.link
        {
            out.push(Action::Abort { generation });
            self.connect(&mut out);
        }
        out
    }

    // ---- steps

    fn on_control(&mut self, c: Control, out: &mut Vec<Action>) {
        if c.cursor.is_some() {
            self.cursor = c.cursor;
        }
        if self.offset.is_before(&c.next_offset) {
            if let Err(mismatch) = self.identity.check_all(&self.held) {
                // Not this session's stream (a misrouted proxy, a reused URL): nothing of it is
                // delivered or projected, the cursor stays, and the readers end rather than
                // retry into the same stream.
                self.end_all(Some(ConnectionFailure::Foreign(mismatch)), out);
                return;
            }
            self.offset = ReadOffset::After(c.next_offset);
            self.failures = 0;
            if let Link::Open { advanced, .. } = &mut self.link {
                *advanced = true;
            }
            let chunks = std::mem::take(&mut self.held);
            self.deliver(chunks, out);
        } else {
            // Data at or before the cursor: delivered already (a server that resent it).
            self.held.clear();
        }
        if c.closed {
            self.closed = true;
            self.end_all(None, out);
        }
    }

    fn deliver(&mut self, chunks: Vec<Value>, out: &mut Vec<Action>) {
        if chunks.is_empty() {
            return;
        }
        self.replay.feed_all(&chunks);
        let overflowing: Vec<ReaderId> = self
            .readers
            .iter()
            .filter(|(_, backlog)| *backlog + chunks.len() > CONNECTION_READER_BACKLOG_CHUNKS_MAX)
            .map(|(id, _)| *id)
            .collect();
        for id in &overflowing {
            self.readers.remove(id);
        }
        if !overflowing.is_empty() {
            out.push(Action::End {
                readers: overflowing,
                failure: Some(ConnectionFailure::ReaderOverflow),
            });
        }
        if self.readers.is_empty() {
            self.stop_link(out);
            return;
        }
        for backlog in self.readers.values_mut() {
            *backlog += chunks.len();
        }
        let readers: Vec<ReaderId> = self.readers.keys().copied().collect();
        // Appends that arrive together reach the same readers in one delivery.
        if let Some(Action::Deliver {
            readers: last,
            chunks: queued,
        }) = out.last_mut()
        {
            if *last == readers {
                queued.extend(chunks);
                return;
            }
        }
        out.push(Action::Deliver { readers, chunks });
    }

    /// The event stream of `generation` broke (an oversized or unreadable event): drop it and
    /// read again from the cursor, counted as a failure.
    fn broken(&mut self, generation: u64, out: &mut Vec<Action>) {
        out.push(Action::Abort { generation });
        self.link = Link::Idle;
        self.fail(out);
    }

    fn connect(&mut self, out: &mut Vec<Action>) {
        self.generation += 1;
        self.link = Link::Connecting {
            generation: self.generation,
        };
        self.held.clear();
        self.sse = new_parser();
        out.push(Action::Connect {
            generation: self.generation,
            offset: self.offset.clone(),
            cursor: self.cursor.clone(),
        });
    }

    fn wait(&mut self, delay_ms: u64, missing: bool, out: &mut Vec<Action>) {
        self.generation += 1;
        self.link = Link::Waiting {
            generation: self.generation,
            missing,
        };
        self.held.clear();
        out.push(Action::Wait {
            generation: self.generation,
            delay_ms,
        });
    }

    /// A read failed: wait and retry, or end the readers after too many failures in a row.
    fn fail(&mut self, out: &mut Vec<Action>) {
        self.failures = self.failures.saturating_add(1);
        if self.failures > CONNECTION_FAILURES_MAX {
            self.end_all(Some(ConnectionFailure::Unavailable), out);
            return;
        }
        let delay = self.delay(self.failures - 1, false);
        self.wait(delay, false, out);
    }

    fn delay(&mut self, attempt: u32, missing: bool) -> u64 {
        let (min, max) = if missing {
            (
                CONNECTION_MISSING_POLL_MS_MIN,
                CONNECTION_MISSING_POLL_MS_MAX,
            )
        } else {
            (CONNECTION_RETRY_MS_MIN, CONNECTION_RETRY_MS_MAX)
        };
        delay_ms(attempt, min, max, self.jitter.unit())
    }

    /// Ends every reader (with `failure`, or normally) and the read.
    fn end_all(&mut self, failure: Option<ConnectionFailure>, out: &mut Vec<Action>) {
        let readers: Vec<ReaderId> = std::mem::take(&mut self.readers).into_keys().collect();
        if !readers.is_empty() {
            out.push(Action::End { readers, failure });
        }
        self.stop_link(out);
    }

    /// Closes the read or clears the timer; the next reader starts afresh from the cursor.
    fn stop_link(&mut self, out: &mut Vec<Action>) {
        if let Some(generation) = self.link.generation() {
            out.push(Action::Abort { generation });
        }
        self.link = Link::Idle;
        self.held.clear();
        self.failures = 0;
        self.missing = 0;
    }
}

fn new_parser() -> SseParser {
    SseParser::with_limits(
        CONNECTION_SSE_EVENT_BYTES_MAX,
        CONNECTION_SSE_EVENT_BYTES_MAX,
    )
}
