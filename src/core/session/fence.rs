//! The memory fence: which of two saves of one session's conversation may land. A turn saves
//! its messages under its claim's generation (the cursor the claim wrote), which grows from
//! claim to claim. A save that outlived its turn's lease can land after a newer turn's save; a
//! store that keeps the highest fence it saved under refuses it, so it cannot overwrite the
//! newer conversation. Stores in other languages (the Redis script, the Postgres statement)
//! restate this one comparison.

/// Whether a save under `fence` may replace a conversation last saved under `stored` (`None`:
/// never saved under a fence). The same fence may save again (a turn saves its user message,
/// then its answer).
pub fn fence_admits(stored: Option<u64>, fence: u64) -> bool {
    stored.is_none_or(|stored| fence >= stored)
}

/// The refusal a store reports for a save `fence_admits` refused (what the turn's operator sees).
pub fn fence_refusal(stored: u64, fence: u64) -> String {
    format!(
        "memory save refused: a newer turn saved this conversation (fence {stored}), this save is for fence {fence}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_save_lands_unless_a_newer_fence_saved_first() {
        let check = |stored: Option<u64>, fence: u64, expected: bool| {
            assert_eq!(fence_admits(stored, fence), expected, "stored {stored:?}, fence {fence}");
        };
        check(None, 1, true);
        check(Some(3), 3, true);
        check(Some(3), 4, true);
        check(Some(4), 3, false);
        check(Some(u64::MAX), 0, false);
    }
}
