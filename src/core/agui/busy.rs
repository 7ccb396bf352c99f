//! When a TanStack client's send, refused `SESSION_BUSY`, is posted again.
//!
//! A TanStack client learns that a run ended from the session log (`RUN_FINISHED`), and the turn
//! appends that before it stores its end: the messages saved, then the lease released, one
//! session write each. A send posted in between (a continuation the client posts as soon as an
//! approval is answered, e.g. an app that approves a tool on its own) meets the lease still held.
//! While the log the page reads shows no running turn, that refusal is the previous turn storing
//! its end, so the send is posted again after a short wait, a bounded number of times. When the
//! log shows a run, the refusal is what it says (another turn runs) and the client gets it.

use crate::diagnostics::chat::SESSION_BUSY;

/// How many times a refused send is posted again.
pub const SEND_BUSY_RETRIES_MAX: u32 = 6;
/// The wait before the first retry; each next one waits this much longer (in all, 2.1 s: longer
/// than two session writes take, short of a person noticing a stalled send for long).
pub const SEND_BUSY_STEP_MS: u64 = 100;

/// The wait before posting again the send refused with `code` after `attempt` retries (0 for
/// the first refusal), or `None`: the refusal is the answer.
pub fn send_retry_ms(code: &str, run_shown: bool, attempt: u32) -> Option<u64> {
    let busy = code == SESSION_BUSY.code;
    (busy && !run_shown && attempt < SEND_BUSY_RETRIES_MAX)
        .then(|| SEND_BUSY_STEP_MS * u64::from(attempt + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_refusal_is_retried_only_while_no_run_shows_and_only_so_often() {
        let check = |code: &str, run_shown: bool, attempt: u32, expected: Option<u64>| {
            assert_eq!(
                send_retry_ms(code, run_shown, attempt),
                expected,
                "{code}, run shown {run_shown}, attempt {attempt}"
            );
        };
        check("SESSION_BUSY", false, 0, Some(100));
        check("SESSION_BUSY", false, 1, Some(200));
        check("SESSION_BUSY", false, 5, Some(600));
        check("SESSION_BUSY", false, 6, None); // the limit
        check("SESSION_BUSY", true, 0, None); // another turn runs: the refusal is the answer
        check("SESSION_CONFLICT", false, 0, None);
        check("TURN_SUPERSEDED", false, 0, None);
        check("", false, 0, None);
    }
}
