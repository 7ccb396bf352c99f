//! The inverse of the projection: controller states → the chunks that make a log project to
//! them. The encoder keeps a mirror — a [`Projection`] fed with every chunk it emitted, exactly
//! what any reader of the log computes — and each [`TurnEncoder::diff`] emits the chunks that
//! bring the mirror to the new state, then checks that it got there. A change the chunk
//! vocabulary cannot express as a step (a message removed, text rewritten rather than extended)
//! falls back to one `MESSAGES_SNAPSHOT` of the whole conversation: slower, never wrong. So
//! "projecting the log gives the controller's messages" holds by construction, through the one
//! reducer.

use std::collections::VecDeque;

use serde_json::Value;

use super::chunks::*;
use super::reduce::Projection;
use crate::chat::controller::{ChatState, ChatStatus};
use crate::protocol::{Message, MessageStatus, Role, ToolCall, ToolCallStatus};
use crate::session::Confirmation;

/// Turns one turn's states into chunks.
#[derive(Clone, Debug, Default)]
pub struct TurnEncoder {
    mirror: Projection,
    /// `(runId, threadId)` once the run started.
    run: Option<(String, String)>,
    /// How often a diff needed the whole-conversation fallback (a test and benchmark figure).
    fallbacks: u64,
}

impl TurnEncoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// The conversation before this turn. When the log already holds it (`in_log`) nothing is
    /// emitted; otherwise (the definition's initial messages, a log configured after earlier
    /// turns, a log a crashed writer left ahead of the saved messages) one native batch puts it
    /// there, replacing whatever the log projected to. `log_empty`: nothing to replace.
    pub fn begin(&mut self, history: &[Message], in_log: bool, log_empty: bool) -> Vec<Value> {
        self.mirror = Projection::from_messages(history);
        if in_log || history.is_empty() && log_empty {
            return Vec::new();
        }
        let chunk = messages_snapshot(history);
        self.mirror.feed(&chunk);
        vec![chunk]
    }

    pub fn run_started(&mut self, thread_id: &str, run_id: &str, now_ms: u64) -> Vec<Value> {
        self.run = Some((run_id.to_owned(), thread_id.to_owned()));
        self.emit(vec![run_started(run_id, thread_id, now_ms)])
    }

    /// The run's last chunk: finished (interrupted by `interrupts`, the confirmations this run
    /// leaves waiting, if any), or failed with the turn's error.
    pub fn run_ended(
        &mut self,
        state: &ChatState,
        interrupts: &[Confirmation],
        now_ms: u64,
    ) -> Vec<Value> {
        let Some((run_id, thread_id)) = self.run.take() else {
            return Vec::new();
        };
        // AG-UI ends a run only with every reasoning span closed.
        let mut chunks: Vec<Value> = self
            .mirror
            .open_reasoning_spans()
            .iter()
            .flat_map(|id| reasoning_close(id, now_ms))
            .collect();
        let chunk = match (state.status, state.error) {
            (ChatStatus::Error, Some(error)) => {
                run_error(&run_id, error.code(), &error.message(), now_ms)
            }
            _ => {
                let named: Vec<(Confirmation, String)> = interrupts
                    .iter()
                    .map(|record| {
                        let name = find_call(&state.messages, &record.tool_call_id)
                            .map_or_else(|| record.action.clone(), |c| c.name.clone());
                        (record.clone(), name)
                    })
                    .collect();
                run_finished(&run_id, &thread_id, &state.usage, &named, now_ms)
            }
        };
        chunks.push(chunk);
        self.emit(chunks)
    }

    /// The state of confirmation records this turn changed (one chunk each).
    pub fn confirmations(&mut self, records: &[Confirmation], now_ms: u64) -> Vec<Value> {
        let chunks = records
            .iter()
            .map(|record| confirmation_state(record, now_ms))
            .collect();
        self.emit(chunks)
    }

    /// The chunks from what was published to `state`'s messages. The steps are fed to the
    /// mirror in place (no copy of it per diff); should the mirror then differ from `state`
    /// (the reducer read them otherwise than they meant) the steps stay emitted — the mirror is
    /// what a reader of them computes — and the whole conversation follows them.
    pub fn diff(&mut self, state: &ChatState, now_ms: u64) -> Vec<Value> {
        let target = publishable(&state.messages);
        let Some(mut chunks) = steps(&self.mirror, target, now_ms) else {
            self.fallbacks += 1;
            return self.emit(vec![messages_snapshot(target)]);
        };
        self.mirror.feed_all(&chunks);
        if !self.mirror.messages().eq(target.iter()) {
            self.fallbacks += 1;
            chunks.extend(self.emit(vec![messages_snapshot(target)]));
        }
        chunks
    }

    /// How many diffs fell back to a whole-conversation batch.
    pub fn fallbacks(&self) -> u64 {
        self.fallbacks
    }

    fn emit(&mut self, chunks: Vec<Value>) -> Vec<Value> {
        self.mirror.feed_all(&chunks);
        chunks
    }
}

/// The chunks that bring a reader holding `history` to `target` (the same steps a running
/// turn publishes), or `None` when chunks cannot express the change. For a reader that joins a
/// run late and rebuilds its answer (TanStack's `joinRun`). `target` is what a log projected
/// to, so an answer that has started but holds nothing yet is announced too (with its own
/// `createdAt`, as the log did).
pub fn replay_steps(history: &[Message], target: &[Message], now_ms: u64) -> Option<Vec<Value>> {
    steps(&Projection::from_messages(history), target, now_ms)
}

/// The messages worth publishing: all but a trailing assistant message that has nothing yet
/// (it is created when a model call starts and dropped if the turn stops before any text or
/// reasoning).
fn publishable(messages: &[Message]) -> &[Message] {
    match messages.last() {
        Some(m)
            if m.role == Role::Assistant
                && m.status == MessageStatus::Streaming
                && m.content.is_empty()
                && m.reasoning().is_empty()
                && m.tool_calls.as_ref().is_none_or(Vec::is_empty) =>
        {
            &messages[..messages.len() - 1]
        }
        _ => messages,
    }
}

/// Step chunks from `mirror` to `target`, or `None` when no steps express the change.
fn steps(mirror: &Projection, target: &[Message], now_ms: u64) -> Option<Vec<Value>> {
    let published: Vec<&Message> = mirror.messages().collect();
    if published.len() > target.len() {
        return None;
    }
    let mut out = Vec::new();
    for (i, to) in target.iter().enumerate() {
        match published.get(i) {
            Some(from) if from.id == to.id => {
                let open = mirror.open_reasoning_of(&to.id).map(str::to_owned);
                let spans = mirror.reasoning_spans_of(&to.id);
                let mut reasoning = Reasoning { open, spans };
                update(
                    from,
                    to,
                    &published,
                    target,
                    now_ms,
                    &mut reasoning,
                    &mut out,
                )?
            }
            Some(_) => return None,
            None => create(to, target, now_ms, &mut out)?,
        }
    }
    Some(out)
}

/// A message the log does not have yet.
fn create(to: &Message, target: &[Message], now_ms: u64, out: &mut Vec<Value>) -> Option<()> {
    if to.role == Role::Tool {
        let call_id = to.tool_call_id.as_deref()?;
        let name = find_call(target, call_id).map_or("", |c| c.name.as_str());
        out.extend(tool_result(to, name));
        return Some(());
    }
    out.push(message_start(to));
    let mut reasoning = Reasoning::default();
    reasoning.grow(&to.id, to.reasoning(), now_ms, out);
    let more = !to.content.is_empty()
        || to.tool_calls.as_ref().is_some_and(|c| !c.is_empty())
        || matches!(to.status, MessageStatus::Complete | MessageStatus::Error);
    if more {
        reasoning.close(now_ms, out);
    }
    if !to.content.is_empty() {
        out.push(message_content(&to.id, &to.content, now_ms));
    }
    for call in to.tool_calls.iter().flatten() {
        publish_call(&to.id, call, target, now_ms, out);
    }
    if matches!(to.status, MessageStatus::Complete | MessageStatus::Error) {
        out.push(message_end(&to.id, to.status, now_ms));
    }
    Some(())
}

/// A message's reasoning span as the log has it: the one open (its id), and how many it had.
/// Reasoning that grows goes to the open span, or to a new one; anything else the message
/// says (text, tool calls, its end) closes the span first, so spans never overlap them.
#[derive(Default)]
struct Reasoning {
    open: Option<String>,
    spans: usize,
}

impl Reasoning {
    fn grow(&mut self, message_id: &str, delta: &str, now_ms: u64, out: &mut Vec<Value>) {
        if delta.is_empty() {
            return;
        }
        let id = match &self.open {
            Some(id) => id.clone(),
            None => {
                let id = reasoning_id(message_id, self.spans);
                self.spans += 1;
                out.extend(reasoning_open(message_id, &id, now_ms));
                self.open = Some(id.clone());
                id
            }
        };
        out.push(reasoning_content(&id, delta, now_ms));
    }

    fn close(&mut self, now_ms: u64, out: &mut Vec<Value>) {
        if let Some(id) = self.open.take() {
            out.extend(reasoning_close(&id, now_ms));
        }
    }
}

/// A message the log has: its new reasoning, text, tool calls and status.
fn update(
    from: &Message,
    to: &Message,
    published: &[&Message],
    target: &[Message],
    now_ms: u64,
    reasoning: &mut Reasoning,
    out: &mut Vec<Value>,
) -> Option<()> {
    if from.role != to.role
        || from.created_at != to.created_at
        || from.role == Role::Tool && from != to
    {
        return None;
    }
    let thought = to.reasoning().strip_prefix(from.reasoning())?;
    reasoning.grow(&to.id, thought, now_ms, out);
    let delta = to.content.strip_prefix(from.content.as_str())?;
    let from_calls = from.tool_calls.as_deref().unwrap_or_default();
    let to_calls = to.tool_calls.as_deref().unwrap_or_default();
    if from_calls.len() > to_calls.len() {
        return None;
    }
    if !delta.is_empty() || from_calls != to_calls || from.status != to.status {
        reasoning.close(now_ms, out);
    }
    if !delta.is_empty() {
        out.push(message_content(&to.id, delta, now_ms));
    }
    for (i, call) in to_calls.iter().enumerate() {
        match from_calls.get(i) {
            None => publish_call(&to.id, call, target, now_ms, out),
            Some(old) if old.id != call.id || old.name != call.name || old.args != call.args => {
                return None
            }
            Some(old) if old != call => {
                // A result message that is new in this diff carries the outcome itself.
                let answered_now = has_result_message(target, &call.id)
                    && !published
                        .iter()
                        .any(|m| m.tool_call_id.as_deref() == Some(&call.id));
                if !answered_now {
                    out.push(tool_call_status(call, now_ms));
                }
            }
            Some(_) => {}
        }
    }
    if from.status != to.status {
        match to.status {
            MessageStatus::Complete | MessageStatus::Error => {
                out.push(message_end(&to.id, to.status, now_ms))
            }
            _ => return None,
        }
    }
    Some(())
}

/// A call as the model asked for it, then whatever its status already says beyond that.
fn publish_call(
    parent_id: &str,
    call: &ToolCall,
    target: &[Message],
    now_ms: u64,
    out: &mut Vec<Value>,
) {
    out.extend(tool_call(parent_id, call, now_ms));
    match call.status {
        ToolCallStatus::RequiresConfirmation => out.push(approval_requested(call, now_ms)),
        ToolCallStatus::Running => out.push(tool_call_status(call, now_ms)),
        ToolCallStatus::Complete | ToolCallStatus::Error
            if !has_result_message(target, &call.id) =>
        {
            out.push(tool_call_status(call, now_ms))
        }
        _ => {}
    }
}

fn has_result_message(messages: &[Message], call_id: &str) -> bool {
    messages
        .iter()
        .any(|m| m.role == Role::Tool && m.tool_call_id.as_deref() == Some(call_id))
}

fn find_call<'a>(messages: &'a [Message], call_id: &str) -> Option<&'a ToolCall> {
    messages
        .iter()
        .flat_map(|m| m.tool_calls.iter().flatten())
        .find(|c| c.id == call_id)
}

/// Queues `chunk` behind the others, merging it into the newest queued chunk when both are text
/// (reasoning, tool-argument) deltas of the same message (span, call): a log slower than the model then gets
/// fewer, larger appends, and the queue stays as short as the turn's structure.
pub fn merge_queued(queue: &mut VecDeque<Value>, chunk: Value) {
    if let Some(last) = queue.back_mut() {
        let key = match chunk_type(&chunk) {
            Some(TEXT_MESSAGE_CONTENT | REASONING_MESSAGE_CONTENT) => Some("messageId"),
            Some(TOOL_CALL_ARGS) => Some("toolCallId"),
            _ => None,
        };
        if let Some(key) = key {
            let same = chunk_type(last) == chunk_type(&chunk)
                && last.get(key).is_some()
                && last.get(key) == chunk.get(key);
            if let (true, Some(Value::String(more))) = (same, chunk.get("delta")) {
                if let Some(Value::String(delta)) = last.get_mut("delta") {
                    delta.push_str(more);
                    return;
                }
            }
        }
    }
    queue.push_back(chunk);
}
