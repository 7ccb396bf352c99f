//! What a turn's driver records of its work for the operator's metrics and traces: each model
//! call and each tool run, with its times on the turn's clock (ids, names and numbers only,
//! never a message, an argument or a result). The driver writes here; [`super::metrics`] and
//! [`super::spans`] read it once the turn ended. Bounded: past `TRACED_STEPS_PER_TURN_MAX` calls
//! are still counted, no longer kept.

use std::cell::{Cell, RefCell};

use turnkeep_core::chat::model::{FinishReason, Usage};
use turnkeep_core::limits::TRACED_STEPS_PER_TURN_MAX;

/// How a model call or a tool run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepEnd {
    Ok,
    /// The model or the tool failed (its cause went to `onError`), or the tool is unknown or
    /// its input was refused.
    Failed,
    /// The turn was stopped while it ran.
    Stopped,
}

/// One model call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelCall {
    pub started_ms: u64,
    pub ended_ms: u64,
    /// When its first chunk arrived, if one did.
    pub first_chunk_ms: Option<u64>,
    /// What its `Finish` chunk said, if it sent one.
    pub finish: Option<FinishReason>,
    pub usage: Option<Usage>,
    pub end: StepEnd,
}

/// One tool run (or a call of a tool the definition does not have).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolRun {
    pub name: String,
    pub call_id: String,
    pub started_ms: u64,
    pub ended_ms: u64,
    pub end: StepEnd,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Model(ModelCall),
    Tool(ToolRun),
}

/// The driver's record of one turn.
#[derive(Default)]
pub struct StepLog {
    steps: RefCell<Vec<Step>>,
    model_calls: Cell<u32>,
    tool_calls: Cell<u32>,
}

impl StepLog {
    pub fn record(&self, step: Step) {
        let count = match step {
            Step::Model(_) => &self.model_calls,
            Step::Tool(_) => &self.tool_calls,
        };
        count.set(count.get().saturating_add(1));
        let mut steps = self.steps.borrow_mut();
        if steps.len() < TRACED_STEPS_PER_TURN_MAX {
            steps.push(step);
        }
    }

    /// The steps kept, in the order they ended.
    pub fn steps(&self) -> Vec<Step> {
        self.steps.borrow().clone()
    }

    /// Every model call and tool run, kept or not.
    pub fn counts(&self) -> (u32, u32) {
        (self.model_calls.get(), self.tool_calls.get())
    }
}
