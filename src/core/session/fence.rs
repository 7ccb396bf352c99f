//! The memory fence: which of two saves of one session's conversation may land. A turn saves
//! its messages under its claim's generation (the cursor the claim wrote), which grows from
//! claim to claim. A save that outlived its turn's lease can land after a newer turn's save; a
//! store that keeps the highest fence it saved under refuses it, so it cannot overwrite the
//! newer conversation. Stores in other languages (the Redis script, the Postgres statement)
//! restate this one comparison.

/// Whether a save under `fence` (`None`: a save outside a turn, never refused) may replace a
/// conversation last saved under `stored` (`None`: never saved under a fence), and the fence to
/// keep after it: `Ok(fence to store)`, or `Err(the refusal the operator sees)`. The same fence
/// may save again (a turn saves its user message, then its answer).
pub fn check_fence(stored: Option<u64>, fence: Option<u64>) -> Result<Option<u64>, String> {
    match (stored, fence) {
        (Some(stored), Some(fence)) if fence < stored => Err(format!(
            "memory save refused: a newer turn saved this conversation (fence {stored}), this save is for fence {fence}"
        )),
        (_, Some(fence)) => Ok(Some(fence)),
        (stored, None) => Ok(stored),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_save_lands_unless_a_newer_fence_saved_first() {
        let check = |stored: Option<u64>, fence: Option<u64>, expected: Option<Option<u64>>| {
            assert_eq!(check_fence(stored, fence).ok(), expected, "stored {stored:?}, fence {fence:?}");
        };
        check(None, Some(1), Some(Some(1)));
        check(Some(3), Some(3), Some(Some(3)));
        check(Some(3), Some(4), Some(Some(4)));
        check(Some(4), Some(3), None);
        check(Some(u64::MAX), Some(0), None);
        check(Some(4), None, Some(Some(4)));
        check(None, None, Some(None));
    }
}
