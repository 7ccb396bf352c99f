//! The stream's newest rows, kept in memory by its object so that live readers share the work of
//! a new append: when an append wakes N waiting readers (SSE or long-poll), each of them asks for
//! the rows after its offset, and those that are at (or near) the tail are answered from here,
//! not by N reads of the same rows from SQLite. A reader further behind than what is kept reads
//! storage as before.
//!
//! Only rows this object instance wrote are kept, and only while they are contiguous up to the
//! tail; the shell drops the whole object state (this included) after any storage failure, so a
//! row kept here was committed. Bounded by `STREAM_RECENT_ROWS_BYTES_MAX`.

use std::collections::VecDeque;

/// One stored append: bytes `[start, end)` of the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub start: u64,
    pub end: u64,
    pub data: Vec<u8>,
}

/// The newest rows, contiguous, ending at the stream's tail.
#[derive(Debug)]
pub struct RecentRows {
    rows: VecDeque<Row>,
    bytes: u64,
    bytes_max: u64,
}

impl RecentRows {
    pub fn new(bytes_max: u64) -> Self {
        Self {
            rows: VecDeque::new(),
            bytes: 0,
            bytes_max,
        }
    }

    /// Keeps a row just written. A row that does not continue the kept ones (a fork's imported
    /// prefix, a row after a purge) starts over. The oldest rows go past the byte bound; the
    /// newest is always kept.
    pub fn push(&mut self, row: Row) {
        if self.rows.back().is_some_and(|last| last.end != row.start) {
            self.clear();
        }
        self.bytes += row.data.len() as u64;
        self.rows.push_back(row);
        while self.bytes > self.bytes_max && self.rows.len() > 1 {
            if let Some(old) = self.rows.pop_front() {
                self.bytes -= old.data.len() as u64;
            }
        }
    }

    pub fn clear(&mut self) {
        self.rows.clear();
        self.bytes = 0;
    }

    /// What `Store::rows_after(from, upto, bytes_max)` would read from storage (rows ending after
    /// `from` and at most at `upto`, in order, stopping before `bytes_max` is passed but always
    /// at least one), or `None` when the kept rows do not cover `(from, upto]`.
    pub fn after(&self, from: u64, upto: u64, bytes_max: u64) -> Option<Vec<Row>> {
        let (first, last) = (self.rows.front()?, self.rows.back()?);
        if from < first.start || last.end < upto {
            return None;
        }
        let mut out = Vec::new();
        let mut total = 0u64;
        for row in self.rows.iter().filter(|r| r.end > from && r.end <= upto) {
            if !out.is_empty() && total + row.data.len() as u64 > bytes_max {
                break;
            }
            total += row.data.len() as u64;
            out.push(row.clone());
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(start: u64, data: &str) -> Row {
        Row {
            start,
            end: start + data.len() as u64,
            data: data.as_bytes().to_vec(),
        }
    }

    /// Rows `a` (0..1), `bb` (1..3), `ccc` (3..6).
    fn kept(bytes_max: u64) -> RecentRows {
        let mut recent = RecentRows::new(bytes_max);
        for r in [row(0, "a"), row(1, "bb"), row(3, "ccc")] {
            recent.push(r);
        }
        recent
    }

    fn ends(rows: Option<Vec<Row>>) -> Option<Vec<u64>> {
        rows.map(|rows| rows.iter().map(|r| r.end).collect())
    }

    #[test]
    fn answers_what_storage_would_for_offsets_it_covers() {
        let recent = kept(1_000);
        let check = |from, upto, max, expected: Option<&[u64]>| {
            assert_eq!(
                ends(recent.after(from, upto, max)),
                expected.map(<[u64]>::to_vec),
                "from {from} upto {upto} max {max}"
            );
        };
        check(0, 6, 1_000, Some(&[1, 3, 6]));
        check(1, 6, 1_000, Some(&[3, 6]));
        check(2, 6, 1_000, Some(&[3, 6])); // mid-row: the row that ends after it, whole
        check(6, 6, 1_000, Some(&[])); // at the tail: nothing new
        check(0, 3, 1_000, Some(&[1, 3])); // rows ending after `upto` are left out
        check(0, 9, 1_000, None); // a tail beyond the kept rows: storage knows better
        check(0, 6, 2, Some(&[1])); // the byte bound, not passed
        check(1, 6, 1, Some(&[3])); // at least one row however large
    }

    #[test]
    fn the_oldest_rows_go_past_the_bound_and_uncovered_offsets_read_storage() {
        let recent = kept(5); // 1 + 2 + 3 bytes: `a` goes
        assert_eq!(ends(recent.after(0, 6, 100)), None);
        assert_eq!(ends(recent.after(1, 6, 100)), Some(vec![3, 6]));
        let recent = kept(1); // only the newest stays, however large
        assert_eq!(ends(recent.after(3, 6, 100)), Some(vec![6]));
        assert_eq!(ends(recent.after(2, 6, 100)), None);
    }

    #[test]
    fn a_row_that_does_not_continue_the_kept_ones_starts_over() {
        let mut recent = kept(1_000);
        recent.push(row(10, "dd"));
        assert_eq!(ends(recent.after(6, 12, 100)), None);
        assert_eq!(ends(recent.after(10, 12, 100)), Some(vec![12]));
        recent.clear();
        assert_eq!(ends(recent.after(10, 12, 100)), None);
    }
}
