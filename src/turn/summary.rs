//! What an operator hears of a turn once it ended (`onTurnEnd`, and what [`super::metrics`] and
//! [`super::spans`] draw from it): decided here from the turn's final state, its step log and
//! its [`TurnEnd`], so every shell reports the same thing. No message text: ids, names, outcome,
//! usage and times only.

use turnkeep_core::chat::model::Usage;
use turnkeep_core::chat::ChatStatus;
use turnkeep_core::protocol::ToolCallStatus;
use turnkeep_core::session::{final_status, Confirmation};
use turnkeep_ports::chat::ModelInfo;

use super::interrupt::Cause;
use super::run::{Turn, TurnEnd};
use super::steps::Step;

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
    /// The chat definition's id (the agent, for traces).
    pub agent: String,
    /// The definition's model, as it describes itself.
    pub model: ModelInfo,
    /// The turn's clock at its start (its claim) and at its cleanup's end.
    pub started_ms: u64,
    pub ended_ms: u64,
    /// Its model calls and tool runs, as far as kept (`TRACED_STEPS_PER_TURN_MAX`).
    pub steps: Vec<Step>,
    /// All of them, kept or not.
    pub model_calls: u32,
    pub tool_calls: u32,
    /// The approval this turn carried out (a continuation), then those it asks for.
    pub approvals: Vec<Approval>,
}

/// A person's approval of a tool call, as one turn saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Approval {
    pub tool_name: String,
    pub call_id: String,
    /// `approved`, `rejected` or `expired` (the decision this turn carried out), or `pending`
    /// (the turn ended waiting for it).
    pub decision: &'static str,
    /// A decision: the turn's start (it was claimed with the turn), twice. A pending one: from
    /// the end of the model call that asked (the turn's start if none) to the turn's end.
    pub started_ms: u64,
    pub ended_ms: u64,
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
    let steps = turn.steps().steps();
    let (model_calls, tool_calls) = turn.steps().counts();
    let started_ms = turn.started_ms();
    let ended_ms = now_ms.max(started_ms);
    let asked_ms = steps
        .iter()
        .rev()
        .find_map(|step| match step {
            Step::Model(call) => Some(call.ended_ms),
            Step::Tool(_) => None,
        })
        .unwrap_or(started_ms);
    let mut approvals: Vec<Approval> = turn
        .claim()
        .resolves
        .iter()
        .map(|record| approval(record, started_ms, started_ms))
        .collect();
    approvals.extend(
        turn.proposed()
            .iter()
            .map(|record| approval(record, asked_ms, ended_ms)),
    );
    TurnSummary {
        session_id: submission.session_id.clone(),
        turn_id: submission.turn_id.clone(),
        outcome: end.outcome.as_str(),
        finish_reason,
        usage: state.usage,
        duration_ms: ended_ms - started_ms,
        error_code: end.last_line.map(|e| e.code()),
        agent: turn.claim().envelope.definition_id.clone(),
        model: turn.ports().model.describe(),
        started_ms,
        ended_ms,
        steps,
        model_calls,
        tool_calls,
        approvals,
    }
}

fn approval(record: &Confirmation, started_ms: u64, ended_ms: u64) -> Approval {
    let tool_name = record
        .action
        .strip_prefix("tool:")
        .unwrap_or(&record.action);
    Approval {
        tool_name: tool_name.to_owned(),
        call_id: record.tool_call_id.clone(),
        decision: final_status(record.status)
            .unwrap_or(record.status)
            .as_str(),
        started_ms,
        ended_ms: ended_ms.max(started_ms),
    }
}
