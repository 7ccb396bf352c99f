//! What a TanStack AI client restores from a session, decided from the log's projection (a
//! page's connection holds one; a server reads one with `resolveChatSnapshot`):
//!
//! - [`hydration`]: `hydrate(threadId)`'s `{ messages, activeRun, interrupts }`. `messages` are
//!   TanStack UI messages (the projection's `nativeMessages`); `interrupts` the calls waiting
//!   for a person, as the same AG-UI interrupts the run's `RUN_FINISHED` carried (so
//!   `addToolApprovalResponse({ id: token })` answers them after a reload); `activeRun` the
//!   running turn, only when nothing waits (TanStack restores pending interrupts first and
//!   joins a run only without them).
//! - [`RunJoin`]: `joinRun(runId)`: TanStack drops the hydrated partial answer at the first
//!   chunk of the join and rebuilds it from what the join yields, so the join starts with the
//!   chunks that rebuild the answer so far (the encoder's own steps from the turn's user
//!   message), goes on with the log's chunks as they come, and ends at the run's end.

use serde_json::{json, Value};

use crate::projection::chunks::{approval_interrupt_of, RUN_ERROR, RUN_FINISHED};
use crate::projection::encode::replay_steps;
use crate::projection::{LogConfirmation, Projection};
use crate::protocol::{Message, ToolCallStatus};
use crate::session::{confirmation_token, ConfirmationStatus};
use crate::ui::turn_answer;

/// `{ messages, activeRun, interrupts }` of a projection.
pub fn hydration(projection: &Projection) -> Value {
    let messages = projection.to_messages();
    let pending = waiting_interrupts(&messages, projection.confirmations());
    let interrupts = if pending.is_empty() {
        Value::Null
    } else {
        let run_id = projection
            .last_run()
            .map_or_else(|| pending_id(&pending), str::to_owned);
        json!({ "runId": run_id, "pending": pending })
    };
    let active_run = match projection.active_run() {
        Some(run_id) if interrupts.is_null() => json!({ "runId": run_id }),
        _ => Value::Null,
    };
    json!({
        "messages": projection.native_messages(),
        "activeRun": active_run,
        "interrupts": interrupts,
    })
}

/// The first interrupt's id, for a run id when the projection saw no run (a seed of messages).
fn pending_id(pending: &[Value]) -> String {
    pending
        .first()
        .and_then(|i| i.get("id"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// One interrupt per call waiting for a person (its record's token, expiry and input when the
/// log holds the record; else the token every call's record gets).
fn waiting_interrupts(messages: &[Message], records: &[LogConfirmation]) -> Vec<Value> {
    let waiting = messages
        .iter()
        .flat_map(|m| m.tool_calls.iter().flatten())
        .filter(|c| c.status == ToolCallStatus::RequiresConfirmation);
    waiting
        .filter_map(|call| {
            let record = records.iter().rev().find(|r| r.tool_call_id == call.id);
            match record {
                Some(r) if r.status != ConfirmationStatus::Pending => None,
                Some(r) => Some(approval_interrupt_of(
                    &r.token,
                    &call.id,
                    r.expires_at,
                    &call.name,
                    &call.args,
                )),
                None => Some(approval_interrupt_of(
                    &confirmation_token(&call.id),
                    &call.id,
                    None,
                    &call.name,
                    &call.args,
                )),
            }
        })
        .collect()
}

/// A late join of one run: the chunks that rebuild its answer, then the log's until its end.
#[derive(Clone, Debug)]
pub struct RunJoin {
    run_id: String,
    ended: bool,
}

impl RunJoin {
    /// Joins `run_id` of the session `thread_id` with the projection a client holds. The
    /// chunks rebuild the answer so far (a `MESSAGES_SNAPSHOT` of the conversation when chunks
    /// cannot express it); a run that is no longer active is ended at once.
    pub fn start(
        projection: &Projection,
        thread_id: &str,
        run_id: &str,
        now_ms: u64,
    ) -> (Self, Vec<Value>) {
        let messages = projection.to_messages();
        let answer = turn_answer(&messages).len();
        let history = &messages[..messages.len() - answer];
        let mut chunks = vec![json!({
            "type": "RUN_STARTED", "runId": run_id, "threadId": thread_id, "timestamp": now_ms,
        })];
        match replay_steps(history, &messages, now_ms) {
            Some(steps) => chunks.extend(steps),
            None => chunks.push(json!({
                "type": "MESSAGES_SNAPSHOT",
                "messages": projection.native_messages(),
                "timestamp": now_ms,
            })),
        }
        let ended = projection.active_run() != Some(run_id);
        let join = Self {
            run_id: run_id.to_owned(),
            ended,
        };
        (join, chunks)
    }

    /// What the join yields of a log chunk: the chunk itself, until (and including) the run's
    /// `RUN_FINISHED` or `RUN_ERROR`; nothing after.
    pub fn feed(&mut self, chunk: &Value) -> Option<Value> {
        if self.ended {
            return None;
        }
        let kind = chunk.get("type").and_then(Value::as_str);
        let ours = chunk.get("runId").and_then(Value::as_str) == Some(self.run_id.as_str());
        if ours && matches!(kind, Some(RUN_FINISHED | RUN_ERROR)) {
            self.ended = true;
        }
        Some(chunk.clone())
    }

    pub fn is_ended(&self) -> bool {
        self.ended
    }
}
