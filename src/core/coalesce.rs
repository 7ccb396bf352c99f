//! The one-slot mailbox behind the snapshot stream, and when its item may go.
//!
//! A writer overwrites, a reader takes the newest: a slow reader gets fewer, newer items, never a
//! growing queue, and the item published last before `close` is always delivered.
//!
//! **Pacing.** Every snapshot carries the whole conversation, so a reader that keeps up with a
//! model would receive bytes that grow with the square of the answer (one line per chunk). The
//! mailbox therefore also decides *when* the pending item is due:
//! - after a line of `b` bytes the next waits `b / bytes_per_s` ([`Pacing::interval_ms`]) — the
//!   stream's byte rate stays under the budget — and at least one frame ([`SNAPSHOT_FRAME_MS`]);
//! - but no change waits longer than [`SNAPSHOT_WAIT_MS_MAX`] from its arrival: while text
//!   arrives, a reader that keeps up gets a line at least that often after the oldest text it
//!   has not seen (past `bytes_per_s × wait_max` bytes a line, this rules, not the budget);
//! - a [`Urgency::Prompt`] change (anything but more text of an answer already showing: its
//!   first text, a new message, a tool call, a status) waits at most one frame;
//! - the first line, and whatever is pending at `close`, are due at once.
//!
//! Pure: time is an argument (`now_ms`, any monotonic milliseconds). The web shell wraps it with
//! the `ReadableStream` whose `pull` takes, and a timer for an item that is not due yet.

use crate::limits::{SNAPSHOT_FRAME_MS, SNAPSHOT_WAIT_MS_MAX};

/// What a reader gets from [`Coalescer::take`].
#[derive(Debug, PartialEq, Eq)]
pub enum Take<T> {
    /// The newest item not yet taken.
    Item(T),
    /// Nothing new yet; wait for the next publish or close.
    Empty,
    /// An item is pending, due at this time (`now_ms` of the clock the caller passes): take again
    /// then (or at the next publish or close, which may make it due sooner).
    NotBefore(u64),
    /// Closed, and every item up to the close was taken.
    Closed,
}

/// How long a change may wait for its line (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Urgency {
    /// More text of an answer the last line already showed: paced by the byte budget.
    Paced,
    /// Anything else: within one frame.
    Prompt,
}

/// A stream's byte budget (`createChatHandler({ snapshotBytesPerSecond })`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pacing {
    pub bytes_per_s: u64,
}

impl Pacing {
    /// The pause after a line of `bytes` the budget asks for: `bytes / bytes_per_s`, rounded up,
    /// and at least one frame (a change still waits at most [`SNAPSHOT_WAIT_MS_MAX`]).
    pub fn interval_ms(&self, bytes: usize) -> u64 {
        let per_s = self.bytes_per_s.max(1);
        let ms = (bytes as u64).saturating_mul(1_000).div_ceil(per_s);
        ms.max(SNAPSHOT_FRAME_MS)
    }
}

/// A one-item mailbox that knows when its item is due.
#[derive(Debug)]
pub struct Coalescer<T> {
    pending: Option<T>,
    /// When the pending item is due: the earliest due time of the changes it holds.
    due_ms: u64,
    closed: bool,
    pacing: Pacing,
    /// When a paced change may go: the last line's time plus its interval (`None`: no line yet).
    paced_from_ms: Option<u64>,
    published: u64,
    taken: u64,
}

impl<T> Coalescer<T> {
    pub fn new(pacing: Pacing) -> Self {
        Self {
            pending: None,
            due_ms: 0,
            closed: false,
            pacing,
            paced_from_ms: None,
            published: 0,
            taken: 0,
        }
    }

    /// Replaces the pending item with `item`, a change of `urgency` made at `now_ms`. It is due
    /// no later than the pending one was (an older change is not held back by a newer one).
    /// Ignored after `close` (a late writer cannot reopen the stream).
    pub fn publish(&mut self, item: T, urgency: Urgency, now_ms: u64) {
        if self.closed {
            return;
        }
        let wait_max = match urgency {
            Urgency::Paced => SNAPSHOT_WAIT_MS_MAX,
            Urgency::Prompt => SNAPSHOT_FRAME_MS,
        };
        let due_ms = match self.paced_from_ms {
            None => now_ms,
            Some(paced) => paced.min(now_ms.saturating_add(wait_max)),
        };
        self.due_ms = match self.pending {
            Some(_) => self.due_ms.min(due_ms),
            None => due_ms,
        };
        self.pending = Some(item);
        self.published += 1;
    }

    /// Publishes a last item (if any) and closes: what is pending is due at once. Later
    /// publishes are ignored.
    pub fn close_with(&mut self, last: Option<T>, now_ms: u64) {
        if let Some(item) = last {
            self.publish(item, Urgency::Prompt, now_ms);
        }
        self.closed = true;
    }

    /// Takes the newest item if it is due at `now_ms`, or says why there is none. An item is
    /// never due later than [`SNAPSHOT_WAIT_MS_MAX`] from now (a clock that went back does not
    /// hold it for longer).
    pub fn take(&mut self, now_ms: u64) -> Take<T> {
        self.due_ms = self.due_ms.min(now_ms.saturating_add(SNAPSHOT_WAIT_MS_MAX));
        match self.pending.take() {
            Some(item) if self.closed || now_ms >= self.due_ms => {
                self.taken += 1;
                Take::Item(item)
            }
            Some(item) => {
                self.pending = Some(item);
                Take::NotBefore(self.due_ms)
            }
            None if self.closed => Take::Closed,
            None => Take::Empty,
        }
    }

    /// The line made of the item last taken went out at `now_ms`, `bytes` long: the next paced
    /// change waits its interval.
    pub fn sent(&mut self, bytes: usize, now_ms: u64) {
        self.paced_from_ms = Some(now_ms.saturating_add(self.pacing.interval_ms(bytes)));
    }

    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Items ever published (state changes offered to the reader).
    pub fn published_count(&self) -> u64 {
        self.published
    }

    /// Items a reader actually took (snapshots emitted).
    pub fn taken_count(&self) -> u64 {
        self.taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUDGET: Pacing = Pacing { bytes_per_s: 1_000 };

    /// Interleaves `writes_per_read` publishes with each take (time stands still, every change
    /// prompt after a line of 0 bytes: only the one slot is under test) and returns what was taken.
    fn run(items: u32, writes_per_read: u32) -> (Vec<u32>, Coalescer<u32>) {
        let mut slot = Coalescer::new(BUDGET);
        let mut got = Vec::new();
        let mut now = 0;
        for i in 1..=items {
            slot.publish(i, Urgency::Prompt, now);
            if i % writes_per_read == 0 {
                now += SNAPSHOT_FRAME_MS;
                if let Take::Item(v) = slot.take(now) {
                    got.push(v);
                    slot.sent(0, now);
                }
            }
        }
        slot.close_with(None, now);
        while let Take::Item(v) = slot.take(now) {
            got.push(v);
        }
        (got, slot)
    }

    #[test]
    fn slow_reader_gets_fewer_newer_items_and_the_last() {
        for (items, ratio, expected_taken) in
            [(10, 1, 10), (100, 10, 10), (101, 10, 11), (7, 100, 1)]
        {
            let (got, slot) = run(items, ratio);
            assert_eq!(
                got.len() as u64,
                expected_taken,
                "items {items} ratio {ratio}"
            );
            assert!(
                got.windows(2).all(|w| w[0] < w[1]),
                "strictly newer: {got:?}"
            );
            assert_eq!(
                got.last(),
                Some(&items),
                "the last item is always delivered"
            );
            assert_eq!(slot.published_count(), u64::from(items));
            assert_eq!(slot.taken_count(), expected_taken);
        }
    }

    #[test]
    fn close_delivers_the_last_item_then_reports_closed() {
        let mut slot = Coalescer::new(BUDGET);
        assert_eq!(slot.take(0), Take::Empty);
        slot.publish("a", Urgency::Paced, 0);
        slot.close_with(Some("final"), 0);
        slot.publish("late", Urgency::Prompt, 0);
        assert_eq!(slot.take(0), Take::Item("final"));
        assert_eq!(slot.take(0), Take::Closed);
        assert!(slot.is_closed());
    }

    #[test]
    fn the_first_line_is_due_at_once_and_a_paced_one_after_its_interval() {
        let mut slot = Coalescer::new(BUDGET);
        slot.publish(1, Urgency::Paced, 5);
        assert_eq!(slot.take(5), Take::Item(1));
        slot.sent(100, 5); // 100 bytes at 1000 B/s: 100 ms
        slot.publish(2, Urgency::Paced, 6);
        assert_eq!(slot.take(6), Take::NotBefore(105));
        assert_eq!(slot.take(104), Take::NotBefore(105));
        assert_eq!(slot.take(105), Take::Item(2));
    }

    #[test]
    fn no_change_waits_longer_than_the_maximum_from_its_arrival() {
        let mut slot = Coalescer::new(BUDGET);
        slot.publish(1, Urgency::Prompt, 0);
        assert_eq!(slot.take(0), Take::Item(1));
        slot.sent(10_000, 0); // 10 s at 1000 B/s: the budget alone would hold the next line
        slot.publish(2, Urgency::Paced, 40);
        slot.publish(3, Urgency::Paced, 90);
        assert_eq!(slot.take(90), Take::NotBefore(40 + SNAPSHOT_WAIT_MS_MAX));
        assert_eq!(slot.take(40 + SNAPSHOT_WAIT_MS_MAX), Take::Item(3));
    }

    #[test]
    fn a_prompt_change_waits_one_frame_at_most_and_pulls_the_pending_one_forward() {
        let mut slot = Coalescer::new(BUDGET);
        slot.publish(1, Urgency::Prompt, 0);
        assert_eq!(slot.take(0), Take::Item(1));
        slot.sent(200, 0); // paced from 200 ms
        slot.publish(2, Urgency::Paced, 10);
        assert_eq!(slot.take(10), Take::NotBefore(200));
        slot.publish(3, Urgency::Prompt, 20);
        assert_eq!(slot.take(20), Take::NotBefore(20 + SNAPSHOT_FRAME_MS));
        slot.publish(4, Urgency::Paced, 30);
        assert_eq!(
            slot.take(36),
            Take::Item(4),
            "still due at the prompt's time"
        );
    }

    #[test]
    fn a_clock_that_went_back_holds_an_item_no_longer_than_the_maximum_wait() {
        let mut slot = Coalescer::new(BUDGET);
        slot.publish(1, Urgency::Prompt, 10_000);
        assert_eq!(slot.take(10_000), Take::Item(1));
        slot.sent(1_000_000, 10_000);
        slot.publish(2, Urgency::Paced, 10_001);
        assert_eq!(slot.take(500), Take::NotBefore(500 + SNAPSHOT_WAIT_MS_MAX));
        assert_eq!(slot.take(500 + SNAPSHOT_WAIT_MS_MAX), Take::Item(2));
    }

    #[test]
    fn the_interval_follows_the_bytes_and_is_at_least_a_frame() {
        let pacing = Pacing {
            bytes_per_s: 64_000,
        };
        for (bytes, ms) in [
            (0, SNAPSHOT_FRAME_MS),
            (640, SNAPSHOT_FRAME_MS),
            (1_600, 25),
            (1_601, 26),
            (16_000, 250),
            (10_000_000, 156_250),
        ] {
            assert_eq!(pacing.interval_ms(bytes), ms, "{bytes} bytes");
        }
    }
}
