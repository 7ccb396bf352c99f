//! Snapshot sequences with O(1) session writes per turn (see ARCHITECTURE.md).
//!
//! `sequence = claim_cursor × SNAPSHOT_SEQUENCE_STRIDE + index_in_turn`. The release writes
//! `claim_cursor + 1`, so the next turn's claim writes a larger cursor and all of its sequences
//! exceed all of this turn's: one client cursor accepts every turn of a session in order.

use super::limits::{INTEGER_SAFE_MAX, SNAPSHOT_SEQUENCE_STRIDE};

/// The largest claim cursor whose sequences all stay safe integers.
pub(crate) const CLAIM_CURSOR_MAX: u64 = INTEGER_SAFE_MAX / SNAPSHOT_SEQUENCE_STRIDE - 1;

/// Hands out this turn's sequences. The last index of the stride is kept for the final line,
/// so a turn that emits more than a stride's worth of snapshots still ends on a valid sequence.
#[derive(Debug, Clone)]
pub struct TurnSequencer {
    base: u64,
    next_index: u64,
}

/// The claim cursor is too large to derive safe sequences from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CursorTooLarge {
    pub cursor: u64,
}

impl TurnSequencer {
    /// For the turn whose claim wrote `claim_cursor`.
    pub fn new(claim_cursor: u64) -> Result<Self, CursorTooLarge> {
        if claim_cursor > CLAIM_CURSOR_MAX {
            return Err(CursorTooLarge {
                cursor: claim_cursor,
            });
        }
        Ok(Self {
            base: claim_cursor * SNAPSHOT_SEQUENCE_STRIDE,
            next_index: 0,
        })
    }

    /// The sequence for an intermediate snapshot, or `None` when the turn used its whole
    /// stride (the snapshot is then skipped; a newer one follows).
    pub fn next_intermediate(&mut self) -> Option<u64> {
        (self.next_index < SNAPSHOT_SEQUENCE_STRIDE - 1).then(|| self.take())
    }

    /// The sequence for the final line of the turn (a snapshot or a diagnostic).
    pub fn next_final(&mut self) -> u64 {
        self.next_index = self.next_index.min(SNAPSHOT_SEQUENCE_STRIDE - 1);
        self.take()
    }

    fn take(&mut self) -> u64 {
        let sequence = self.base + self.next_index;
        self.next_index += 1;
        sequence
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_increase_across_turns_whatever_each_turn_emitted() {
        // Turns claim cursors 1, 3, 5... (each release adds one); each emits a varying count.
        let mut last: Option<u64> = None;
        let mut cursor = 0u64;
        for turn in 0..200u64 {
            cursor += 1; // claim
            let mut seq = TurnSequencer::new(cursor).expect("small cursor");
            let emitted = (turn * 7919) % 50; // some turns coalesce down to zero intermediates
            let mut all: Vec<u64> = (0..emitted)
                .filter_map(|_| seq.next_intermediate())
                .collect();
            all.push(seq.next_final());
            for s in all {
                assert!(
                    last.is_none_or(|l| s > l),
                    "turn {turn}: {s} after {last:?}"
                );
                last = Some(s);
            }
            cursor += 1; // release
        }
    }

    #[test]
    fn a_full_stride_keeps_the_final_slot() {
        let mut seq = TurnSequencer::new(2).unwrap();
        let base = 2 * SNAPSHOT_SEQUENCE_STRIDE;
        seq.next_index = SNAPSHOT_SEQUENCE_STRIDE - 2;
        assert_eq!(
            seq.next_intermediate(),
            Some(base + SNAPSHOT_SEQUENCE_STRIDE - 2)
        );
        assert_eq!(seq.next_intermediate(), None);
        assert_eq!(seq.next_final(), base + SNAPSHOT_SEQUENCE_STRIDE - 1);
        assert!(base + SNAPSHOT_SEQUENCE_STRIDE - 1 < 3 * SNAPSHOT_SEQUENCE_STRIDE);
    }

    #[test]
    fn cursor_bound_keeps_sequences_safe() {
        let mut seq = TurnSequencer::new(CLAIM_CURSOR_MAX).unwrap();
        seq.next_index = SNAPSHOT_SEQUENCE_STRIDE - 1;
        assert!(seq.next_final() <= INTEGER_SAFE_MAX);
        assert_eq!(
            TurnSequencer::new(CLAIM_CURSOR_MAX + 1).unwrap_err(),
            CursorTooLarge {
                cursor: CLAIM_CURSOR_MAX + 1
            }
        );
    }
}
