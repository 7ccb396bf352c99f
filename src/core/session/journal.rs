//! The turn journal: what a running turn has recorded, durably and fenced, of its own messages,
//! so that a retry of the same turn id (its client sending it again after the lease lapsed:
//! the process crashed or hung) runs no tool a second time.
//!
//! A turn records its messages in the session envelope (`turnJournal`) with one compare-and-set
//! on its own last write, before every step that acts on what its model or a tool produced:
//! before it runs a round of tools (the assistant message that asked for them, so the calls and
//! their ids are fixed), and after each tool's result (before the model reads it). A record that
//! loses its compare-and-set means another claim fenced the turn: it stops and saves nothing.
//!
//! A retry claims the lapsed lease again ([`super::claim_turn`] keeps the journal for the same
//! turn id) and starts from the journal instead of the input ([`replay_history`], then
//! `ChatController::resume`): the conversation before the turn, the recorded messages, the
//! calls whose results were recorded never run again, a call recorded as asked for but without
//! a result runs again (it may have been killed mid-run) with the same idempotency key, and
//! the model is called only from what was recorded. A claim by another turn id records the
//! journal's turn `indeterminate` and drops the journal; a release drops its own.

use serde::Serialize;

use super::envelope::SessionEnvelope;
use super::lease::{advance_cursor, LeaseError};
use crate::limits::TURN_JOURNAL_BYTES_MAX;
use crate::protocol::{Message, MessageStatus};

/// A running turn's record of its own messages (see the module doc).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnJournal {
    pub turn_id: String,
    /// How many messages of the conversation precede the turn's own.
    pub history_len: u64,
    /// The turn's messages as its last record saw them; at most `TURN_JOURNAL_BYTES_MAX` as JSON.
    pub messages: Vec<Message>,
}

/// Why a record is not written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JournalError {
    /// `turn_id` does not hold a live lease in the envelope its holder last wrote: the lease
    /// lapsed (by the holder's own clock), so a retry may already be replaying the journal.
    NotHeld,
    /// The messages are `bytes` of JSON, beyond `TURN_JOURNAL_BYTES_MAX`.
    TooLarge { bytes: usize },
    Lease(LeaseError),
}

impl std::fmt::Display for JournalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotHeld => f.write_str("the turn's lease lapsed before its journal was recorded"),
            Self::TooLarge { bytes } => write!(
                f,
                "the turn's journal would be {bytes} bytes, over its limit of {TURN_JOURNAL_BYTES_MAX}: the turn ends before the model reads the result"
            ),
            Self::Lease(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for JournalError {}

/// The envelope that records `messages` as `turn_id`'s journal (cursor + 1), decided on the
/// holder's own last write `env` at `now_ms`. A trailing message still streaming (the model call
/// the last result started, empty so far) is not recorded: a replay starts that call afresh.
pub fn record_journal(
    env: &SessionEnvelope,
    turn_id: &str,
    history_len: usize,
    messages: &[Message],
    now_ms: u64,
) -> Result<SessionEnvelope, JournalError> {
    let held = env
        .active_turn
        .as_ref()
        .is_some_and(|a| a.turn_id == turn_id && a.expires_at > now_ms);
    if !held {
        return Err(JournalError::NotHeld);
    }
    let settled = messages
        .iter()
        .rposition(|m| m.status != MessageStatus::Streaming)
        .map_or(0, |last| last + 1);
    let messages = &messages[..settled];
    let bytes = serde_json::to_string(messages).map_or(usize::MAX, |text| text.len());
    if bytes > TURN_JOURNAL_BYTES_MAX {
        return Err(JournalError::TooLarge { bytes });
    }
    let mut next = advance_cursor(env, now_ms).map_err(JournalError::Lease)?;
    next.turn_journal = Some(TurnJournal {
        turn_id: turn_id.to_owned(),
        history_len: history_len as u64,
        messages: messages.to_vec(),
    });
    Ok(next)
}

/// The journal a claim of `turn_id` replays: the envelope's, when it is that turn's.
pub fn journal_of<'a>(env: &'a SessionEnvelope, turn_id: &str) -> Option<&'a TurnJournal> {
    env.turn_journal.as_ref().filter(|j| j.turn_id == turn_id)
}

/// The journal's turn did not start from this conversation: it holds fewer messages than the
/// turn's history (the memory was rewritten outside turnkeep).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistoryMismatch {
    pub history_len: u64,
    pub loaded_len: usize,
}

impl std::fmt::Display for HistoryMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the turn's journal follows {} messages but the memory holds {}: it cannot be replayed",
            self.history_len, self.loaded_len
        )
    }
}

/// The conversation a replay starts from: the loaded messages cut to the journal's history (a
/// crashed turn may have saved its own messages before its release was stored; they are the
/// journal's, replayed from it).
pub fn replay_history(
    journal: &TurnJournal,
    mut loaded: Vec<Message>,
) -> Result<Vec<Message>, HistoryMismatch> {
    let keep = usize::try_from(journal.history_len).unwrap_or(usize::MAX);
    if loaded.len() < keep {
        return Err(HistoryMismatch {
            history_len: journal.history_len,
            loaded_len: loaded.len(),
        });
    }
    loaded.truncate(keep);
    Ok(loaded)
}

/// The idempotency key a tool call gets: stable across every retry of its turn (the call id is
/// recorded before the tool runs), unique per session, turn and call. An approved call's key is
/// its confirmation token instead (`ChatController::resolve_call`).
pub fn tool_idempotency_key(session_id: &str, turn_id: &str, call_id: &str) -> String {
    format!("{session_id}:{turn_id}:{call_id}")
}

/// What a claim does with a journal of another turn: that turn is over (recorded
/// `indeterminate` unless the history has it), and the journal goes. Returns the turn id to
/// record, if any.
pub(super) fn take_foreign_journal(next: &mut SessionEnvelope, claimer: &str) -> Option<String> {
    let foreign = next.turn_journal.as_ref()?.turn_id != claimer;
    if !foreign {
        return None;
    }
    let journal = next.turn_journal.take()?;
    next.terminal_turn(&journal.turn_id)
        .is_none()
        .then_some(journal.turn_id)
}
