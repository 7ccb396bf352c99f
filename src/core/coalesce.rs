//! The one-slot mailbox behind the snapshot stream: a writer overwrites, a reader takes the
//! newest. A slow reader therefore gets fewer, newer items, never a growing queue, and the item
//! published last before `close` is always delivered (a reader that lags gets the newest state, never a backlog).
//!
//! Pure: the web shell wraps it with a Promise that a `pull` awaits while the slot is empty.

/// What a reader gets from [`Coalescer::take`].
#[derive(Debug, PartialEq, Eq)]
pub enum Take<T> {
    /// The newest item not yet taken.
    Item(T),
    /// Nothing new yet; wait for the next publish or close.
    Empty,
    /// Closed, and every item up to the close was taken.
    Closed,
}

/// A one-item mailbox that counts what it dropped.
#[derive(Debug)]
pub struct Coalescer<T> {
    pending: Option<T>,
    closed: bool,
    published: u64,
    taken: u64,
}

impl<T> Default for Coalescer<T> {
    fn default() -> Self {
        Self {
            pending: None,
            closed: false,
            published: 0,
            taken: 0,
        }
    }
}

impl<T> Coalescer<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the pending item. Ignored after `close` (a late writer cannot reopen the stream).
    pub fn publish(&mut self, item: T) {
        if !self.closed {
            self.pending = Some(item);
            self.published += 1;
        }
    }

    /// Publishes a last item (if any) and closes. Later publishes are ignored.
    pub fn close_with(&mut self, last: Option<T>) {
        if let Some(item) = last {
            self.publish(item);
        }
        self.closed = true;
    }

    /// Takes the newest item, or says why there is none.
    pub fn take(&mut self) -> Take<T> {
        match self.pending.take() {
            Some(item) => {
                self.taken += 1;
                Take::Item(item)
            }
            None if self.closed => Take::Closed,
            None => Take::Empty,
        }
    }

    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Items ever published (state changes offered to the reader).
    #[cfg(test)]
    fn published_count(&self) -> u64 {
        self.published
    }

    /// Items a reader actually took (snapshots emitted).
    #[cfg(test)]
    fn taken_count(&self) -> u64 {
        self.taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Interleaves `writes_per_read` publishes with each take and returns what was taken.
    fn run(items: u32, writes_per_read: u32) -> (Vec<u32>, Coalescer<u32>) {
        let mut slot = Coalescer::new();
        let mut got = Vec::new();
        for i in 1..=items {
            slot.publish(i);
            if i % writes_per_read == 0 {
                if let Take::Item(v) = slot.take() {
                    got.push(v);
                }
            }
        }
        slot.close_with(None);
        while let Take::Item(v) = slot.take() {
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
        let mut slot = Coalescer::new();
        assert_eq!(slot.take(), Take::Empty);
        slot.publish("a");
        slot.close_with(Some("final"));
        slot.publish("late");
        assert_eq!(slot.take(), Take::Item("final"));
        assert_eq!(slot.take(), Take::Closed);
        assert!(slot.is_closed());
    }
}
