//! The turn lease: claim, release and plain cursor advances, as pure transitions.
//!
//! Each function takes the envelope as loaded and returns the envelope to save (cursor + 1,
//! `updatedAt` = now); the caller commits it with one `SessionStorage::save(next, Some(loaded
//! cursor))`. A lost CAS race means another writer got there first: the caller reports busy or
//! conflict, it never loops. Confirmations and conversation are carried through unchanged.

use super::envelope::{ActiveTurn, SessionEnvelope, TerminalTurn, TurnOutcome};
use super::journal::take_foreign_journal;
use crate::checks::{format_iso_millis_at, is_safe_id, safe_add};
use crate::limits;

/// What a turn submission may do with the session.
#[derive(Clone, Debug, PartialEq)]
pub enum ClaimDecision {
    /// The lease is ours once this envelope is CAS-saved.
    Claimed(SessionEnvelope),
    /// Another turn holds an unexpired lease.
    Busy {
        active_turn_id: String,
        expires_at_ms: u64,
    },
    /// This turn id already finished (it is in the terminal history); nothing may run again.
    Replayed { outcome: TurnOutcome },
}

/// Inputs a transition cannot turn into a valid envelope. Never caused by stored data, which
/// the decoder has already checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseError {
    /// The turn id is not a SafeId.
    InvalidTurnId(String),
    /// The cursor already sits at the largest safe integer and cannot advance.
    CursorExhausted,
    /// `now_ms + lease_ms` is beyond the largest safe integer.
    ExpiryOutOfRange,
}

impl std::fmt::Display for LeaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::InvalidTurnId(id) => write!(f, "turn id {id:?} is not a SafeId"),
            Self::CursorExhausted => f.write_str("session cursor cannot advance past 2^53-1"),
            Self::ExpiryOutOfRange => f.write_str("lease expiry is beyond 2^53-1 ms"),
        }
    }
}

impl std::error::Error for LeaseError {}

/// Decides whether `turn_id` may start now. A replay is checked before a live lease, so a
/// finished turn is reported as replayed even while another turn runs.
///
/// An expired lease of another turn is taken over, and that turn enters the terminal history as
/// `indeterminate` in the same write: its holder crashed or hung, so nobody knows how it ended
/// (its messages may or may not be saved, its log may be ahead of them), and a retry of its id
/// must be refused as a replay rather than run its model and tools a second time. An expired
/// lease of the same turn id (its own client retrying after the lapse) is claimed again with
/// the turn's journal kept: the retry replays what the turn recorded and runs no recorded tool
/// again, and the higher cursor fences the old holder's writes (its next record or release is
/// a conflict). A journal of another turn is that turn's end: it is recorded `indeterminate`
/// too, and the journal dropped (`journal.rs`).
pub fn claim_turn(
    env: &SessionEnvelope,
    turn_id: &str,
    now_ms: u64,
    lease_ms: u64,
) -> Result<ClaimDecision, LeaseError> {
    check_turn_id(turn_id)?;
    if let Some(done) = env.terminal_turn(turn_id) {
        return Ok(ClaimDecision::Replayed {
            outcome: done.outcome,
        });
    }
    if let Some(active) = env.active_turn.as_ref().filter(|a| a.expires_at > now_ms) {
        return Ok(ClaimDecision::Busy {
            active_turn_id: active.turn_id.clone(),
            expires_at_ms: active.expires_at,
        });
    }
    let expires_at = safe_add(now_ms, lease_ms).ok_or(LeaseError::ExpiryOutOfRange)?;
    let mut next = advance_cursor(env, now_ms)?;
    if let Some(lapsed) = env.active_turn.as_ref().filter(|a| a.turn_id != turn_id) {
        record_terminal(&mut next, &lapsed.turn_id, TurnOutcome::Indeterminate);
    }
    if let Some(journaled) = take_foreign_journal(&mut next, turn_id) {
        record_terminal(&mut next, &journaled, TurnOutcome::Indeterminate);
    }
    next.active_turn = Some(ActiveTurn {
        turn_id: turn_id.to_owned(),
        expires_at,
    });
    Ok(ClaimDecision::Claimed(next))
}

/// Ends `turn_id`: clears the lease if it is this turn's (a lapsed lease may already belong to
/// another turn), records the outcome as the newest terminal entry (dropping an older entry with
/// the same id), keeps only the newest `TERMINAL_TURNS_MAX` and drops the turn's journal.
///
/// Pass the envelope this turn's claim wrote and save against its cursor, never a fresh load:
/// the lease is matched by turn id only, so a release computed from a fresh load after this
/// turn's lease lapsed could clear the lease of a newer request for the same turn id (a client
/// retry). Saved against the claim's cursor, that release is a conflict instead
/// (tests/session_lease.rs `the_simulation_catches_a_holder_that_reloads_before_releasing`).
pub fn release_turn(
    env: &SessionEnvelope,
    turn_id: &str,
    outcome: TurnOutcome,
    now_ms: u64,
) -> Result<SessionEnvelope, LeaseError> {
    let mut next = abandon_turn(env, turn_id, now_ms)?;
    record_terminal(&mut next, turn_id, outcome);
    if next.turn_journal.as_ref().is_some_and(|j| j.turn_id == turn_id) {
        next.turn_journal = None;
    }
    Ok(next)
}

/// `turn_id` becomes the newest terminal entry (an older entry with its id is dropped); only
/// the newest `TERMINAL_TURNS_MAX` are kept.
fn record_terminal(next: &mut SessionEnvelope, turn_id: &str, outcome: TurnOutcome) {
    next.terminal_turns.retain(|t| t.turn_id != turn_id);
    next.terminal_turns.push(TerminalTurn {
        turn_id: turn_id.to_owned(),
        outcome,
    });
    let excess = next
        .terminal_turns
        .len()
        .saturating_sub(limits::TERMINAL_TURNS_MAX);
    next.terminal_turns.drain(..excess);
}

/// Gives up `turn_id` before it ran (a failure between the claim and the stream): clears the
/// lease if it is still this turn's, records nothing in the terminal history (so the client may
/// retry the same turn id) and keeps its journal (a retry that failed to open leaves what an
/// earlier attempt recorded for the next retry), cursor + 1. Like [`release_turn`], save it against the claim's
/// cursor.
pub fn abandon_turn(
    env: &SessionEnvelope,
    turn_id: &str,
    now_ms: u64,
) -> Result<SessionEnvelope, LeaseError> {
    check_turn_id(turn_id)?;
    let mut next = advance_cursor(env, now_ms)?;
    if next
        .active_turn
        .as_ref()
        .is_some_and(|a| a.turn_id == turn_id)
    {
        next.active_turn = None;
    }
    Ok(next)
}

/// Gives `turn_id`'s lease up after the turn may have written its conversation (its user
/// message was saved, or the save's outcome is unknown) but before it was acknowledged: the
/// lease is kept, lapsed at `now_ms`, instead of cleared. The session is free at once, and the
/// next claim still sees a turn that did not end cleanly: it re-syncs the log from the saved
/// messages (the log never got this turn's user message), and records the turn `indeterminate`
/// when it is another turn's claim, or takes it again when it is this turn's retry. A lease that
/// is not this turn's is left alone. Save it against the claim's cursor, like [`release_turn`].
pub fn lapse_turn(
    env: &SessionEnvelope,
    turn_id: &str,
    now_ms: u64,
) -> Result<SessionEnvelope, LeaseError> {
    check_turn_id(turn_id)?;
    let mut next = advance_cursor(env, now_ms)?;
    if let Some(active) = next.active_turn.as_mut().filter(|a| a.turn_id == turn_id) {
        active.expires_at = active.expires_at.min(now_ms);
    }
    Ok(next)
}

/// The envelope of the next save that changes nothing else (e.g. one per streamed snapshot):
/// cursor + 1 and `updatedAt` = now. The lease is not extended.
pub fn advance_cursor(env: &SessionEnvelope, now_ms: u64) -> Result<SessionEnvelope, LeaseError> {
    let cursor = safe_add(env.cursor, 1).ok_or(LeaseError::CursorExhausted)?;
    Ok(SessionEnvelope {
        cursor,
        updated_at: format_iso_millis_at(now_ms),
        ..env.clone()
    })
}

fn check_turn_id(turn_id: &str) -> Result<(), LeaseError> {
    if is_safe_id(turn_id) {
        Ok(())
    } else {
        Err(LeaseError::InvalidTurnId(
            turn_id.chars().take(limits::SAFE_ID_CHARS_MAX).collect(),
        ))
    }
}

#[cfg(test)]
mod abandon_tests {
    use super::*;
    use crate::session::{new_session, SessionIdentity};

    fn identity() -> SessionIdentity {
        SessionIdentity {
            session_id: "s1".into(),
            definition_id: "demo".into(),
            definition_revision: 1,
            conversation: None,
        }
    }

    #[test]
    fn abandon_frees_the_lease_and_leaves_the_turn_id_reusable() {
        let env = new_session(&identity(), 0);
        let ClaimDecision::Claimed(claimed) = claim_turn(&env, "t1", 10, 1_000).unwrap() else {
            panic!("claim")
        };
        let abandoned = abandon_turn(&claimed, "t1", 20).unwrap();
        assert_eq!(abandoned.active_turn, None);
        assert!(abandoned.terminal_turns.is_empty());
        assert_eq!(abandoned.cursor, claimed.cursor + 1);
        assert!(matches!(
            claim_turn(&abandoned, "t1", 30, 1_000).unwrap(),
            ClaimDecision::Claimed(_)
        ));
        // Another turn's lease is left alone.
        let other = abandon_turn(&claimed, "t2", 20).unwrap();
        assert_eq!(other.active_turn, claimed.active_turn);
    }

    #[test]
    fn lapse_frees_the_session_and_leaves_the_turn_unclean() {
        let env = new_session(&identity(), 0);
        let ClaimDecision::Claimed(claimed) = claim_turn(&env, "t1", 10, 1_000).unwrap() else {
            panic!("claim")
        };
        let lapsed = lapse_turn(&claimed, "t1", 20).unwrap();
        assert_eq!(lapsed.cursor, claimed.cursor + 1);
        let active = lapsed.active_turn.as_ref().expect("the lease is kept, lapsed");
        assert_eq!((active.turn_id.as_str(), active.expires_at), ("t1", 20));
        // Another turn claims at once and records t1 as indeterminate; t1's retry takes it again.
        let ClaimDecision::Claimed(other) = claim_turn(&lapsed, "t2", 20, 1_000).unwrap() else {
            panic!("another turn claims the lapsed session")
        };
        assert_eq!(
            other.terminal_turns,
            vec![TerminalTurn {
                turn_id: "t1".into(),
                outcome: TurnOutcome::Indeterminate
            }]
        );
        assert!(matches!(
            claim_turn(&lapsed, "t1", 21, 1_000).unwrap(),
            ClaimDecision::Claimed(_)
        ));
        // Another turn's lease is left alone.
        assert_eq!(
            lapse_turn(&claimed, "t2", 20).unwrap().active_turn,
            claimed.active_turn
        );
    }

    /// (the session after a claim of t1 at 10 for 1000 ms, who claims, when) → what the history
    /// holds after the claim, or `None` when it is not claimed.
    fn check(turn_id: &str, now_ms: u64, expected: Option<&[(&str, TurnOutcome)]>) {
        let env = new_session(&identity(), 0);
        let ClaimDecision::Claimed(held) = claim_turn(&env, "t1", 10, 1_000).unwrap() else {
            panic!("claim")
        };
        let history = match claim_turn(&held, turn_id, now_ms, 1_000).unwrap() {
            ClaimDecision::Claimed(next) => Some(next.terminal_turns),
            _ => None,
        };
        let expected = expected.map(|e| {
            e.iter()
                .map(|(id, outcome)| TerminalTurn {
                    turn_id: (*id).into(),
                    outcome: *outcome,
                })
                .collect::<Vec<_>>()
        });
        assert_eq!(history, expected, "{turn_id} at {now_ms}");
    }

    #[test]
    fn a_lapsed_lease_taken_over_records_its_turn_as_indeterminate() {
        use TurnOutcome::Indeterminate;
        check("t2", 1_009, None); // still live: busy
        check("t2", 1_010, Some(&[("t1", Indeterminate)])); // lapsed at its recorded expiry
        check("t1", 1_010, Some(&[])); // its own retry: claimed again, nothing recorded
    }
}
