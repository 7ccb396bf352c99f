//! What an operator hears of a turn once it ended (`onTurnEnd`): decided here from the turn's
//! final state and its [`TurnEnd`], so every shell reports the same thing. No message text: ids,
//! outcome, usage and time only.

use turnkeep_core::chat::model::Usage;
use turnkeep_core::chat::ChatStatus;
use turnkeep_core::protocol::ToolCallStatus;

use super::interrupt::Cause;
use super::run::{Turn, TurnEnd};

/// One ended turn, for `onTurnEnd`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnSummary {
    pub session_id: String,
    pub turn_id: String,
    /// The terminal history's record: `completed` or `indeterminate` (messages not saved).
    pub outcome: &'static str,
    /// Why the answer ended: `stop` (the model finished), `tool-calls` (a call waits for a
    /// person), `stopped` (a stop, or the sender gone where that stops the turn), `timeout`,
    /// `fenced` (a newer claim took over), `error` (the model or a step failed).
    pub finish_reason: &'static str,
    /// Summed over the turn's model calls.
    pub usage: Usage,
    /// From the turn's start (its claim) to its cleanup's end, on the turn's clock.
    pub duration_ms: u64,
    /// The registry code that closed the sender's response, if one did.
    pub error_code: Option<&'static str>,
}

pub fn summary(turn: &Turn, end: &TurnEnd, now_ms: u64) -> TurnSummary {
    let state = turn.state();
    let waiting = state.messages[turn.history_len().min(state.messages.len())..]
        .iter()
        .flat_map(|m| m.tool_calls.iter().flatten())
        .any(|c| c.status == ToolCallStatus::RequiresConfirmation);
    let finish_reason = match (end.stopped_by, state.status) {
        (Some(Cause::Timeout), _) => "timeout",
        (Some(Cause::Fenced | Cause::LeaseLapsed), _) => "fenced",
        (Some(Cause::StopRequested | Cause::ClientGone | Cause::ResponseCancelled), _) => "stopped",
        (None, ChatStatus::Error) => "error",
        (None, _) if waiting => "tool-calls",
        (None, _) => "stop",
    };
    let submission = turn.submission();
    TurnSummary {
        session_id: submission.session_id.clone(),
        turn_id: submission.turn_id.clone(),
        outcome: end.outcome.as_str(),
        finish_reason,
        usage: state.usage,
        duration_ms: now_ms.saturating_sub(turn.started_ms()),
        error_code: end.last_line.map(|e| e.code()),
    }
}
