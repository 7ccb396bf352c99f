//! The chat controller: one turn as a pure state machine.
//!
//! The driver feeds it inputs — `send`, model chunks, the end or failure of a model call, tool
//! results, `stop` — and each input returns the next [`Action`]: call the model, run tools,
//! keep feeding, or done. The controller never does I/O, never reads a clock and never makes up
//! an id: `now_ms` and an [`IdSource`] are arguments, so a turn replays identically.
//!
//! Lifecycle of a turn:
//! 1. `send` adds the user message and an empty `streaming` assistant message → `CallModel`.
//! 2. `on_chunk` appends text to that assistant message (reasoning to its
//!    `metadata.reasoning`) and collects tool-call fragments.
//! 3. `on_model_end` completes the assistant message. Without tool calls the turn is
//!    `complete`. With tool calls it records them on the message (`pending`, or
//!    `requires_confirmation` for tools that need approval, or `error` for unknown tools and
//!    invalid arguments, which get an error `tool` message the model will read) → `RunTools`.
//!    Each round of tool calls is one iteration; a round beyond `max_tool_iterations` is not
//!    run and the turn ends in `error`.
//! 4. `on_tool_started` / `on_tool_result` move calls to `running` and `complete`|`error` and
//!    add one `tool` message per result. When the round is settled: a call awaiting
//!    confirmation ends the turn (`complete`, the call left waiting); otherwise → `CallModel`
//!    again with a new assistant message.
//! 5. `on_model_error` ends the turn in `error`, keeping the partial text. `stop` ends it
//!    `complete`, keeping the partial text (an assistant message with no text at all is
//!    dropped) and marking unfinished tool calls as errors.
//!
//! A call left waiting is continued by a later controller over the saved conversation:
//! `resolve_call` instead of `send` approves it (→ `RunTools` for that one call, with the
//! confirmation's idempotency key; its result then continues the turn as in step 4) or rejects
//! it (the call becomes an error, a `tool` message tells the model why → `CallModel`). While
//! another call of the same assistant message still waits, the model is not called.
//!
//! Every observable change bumps [`ChatController::revision`], so a consumer can tell a new
//! state from one it already published, and [`ChatController::first_changed_since`] says which
//! messages a revision left alone: a consumer that encodes messages (the sender's snapshot
//! lines, the log's chunks) redoes only the changed tail.

mod state;
mod tool_calls;

use serde_json::{Map, Value};

pub use state::{ChatError, ChatState, ChatStatus};
pub use tool_calls::{
    is_confirmable_id, ARGS_NOT_OBJECT, CONFIRMATION_EXPIRED, INPUT_TOO_LARGE_TO_CONFIRM,
    ITERATIONS_EXCEEDED, REJECTED, RESULT_TOO_LARGE, STOPPED, UNKNOWN_TOOL, UNNAMED, UNNAMED_TOOL,
};

use super::model::{ModelChunk, ModelRequest, ToolSpec, Usage};
use super::settings::CallSettings;
use crate::checks::format_iso_millis_at;
use crate::limits::{
    ASSISTANT_CONTENT_BYTES_MAX, REASONING_BYTES_MAX, TOOL_ITERATIONS_MAX_DEFAULT,
    TOOL_RESULT_BYTES_MAX,
};
use crate::protocol::{Message, MessageStatus, Part, Role, ToolCall, ToolCallStatus};
use tool_calls::{CallPlan, PendingCalls};

/// Where message and tool-call ids come from (`prefix` is `msg` or `call`). Any
/// `FnMut(&str) -> String` is one.
pub trait IdSource {
    fn next_id(&mut self, prefix: &str) -> String;
}

impl<F: FnMut(&str) -> String> IdSource for F {
    fn next_id(&mut self, prefix: &str) -> String {
        self(prefix)
    }
}

/// The chat definition's part the controller needs.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatConfig {
    /// The tools offered to the model.
    pub tools: Vec<ToolSpec>,
    /// Rounds of tool calls allowed in one turn; the next round ends the turn in error.
    pub max_tool_iterations: u32,
    /// What every model call is asked with (instructions, temperature, ...).
    pub settings: CallSettings,
}

impl Default for ChatConfig {
    fn default() -> Self {
        Self {
            tools: Vec::new(),
            max_tool_iterations: TOOL_ITERATIONS_MAX_DEFAULT,
            settings: CallSettings::default(),
        }
    }
}

/// What the driver must do next.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Start a model call and feed its chunks to `on_chunk`, then `on_model_end` or
    /// `on_model_error`.
    CallModel(ModelRequest),
    /// Run these tools (in any order, possibly concurrently) and report each through
    /// `on_tool_result`.
    RunTools(Vec<ToolInvocation>),
    /// Nothing new to start: keep feeding the call or tools in progress.
    Continue,
    /// The turn is over. Abort a model stream still open.
    Done,
}

/// One tool to run.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolInvocation {
    /// The tool call id; report the result under it.
    pub id: String,
    pub name: String,
    pub args: Map<String, Value>,
    /// Set for an approved call: the confirmation token, handed to the tool so that a tool with
    /// side effects can refuse to apply them twice.
    pub idempotency_key: Option<String>,
}

/// What a person decided about a call that waits for confirmation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallResolution {
    /// Run the tool; `idempotency_key` reaches it through [`ToolInvocation`].
    Approve { idempotency_key: String },
    /// Do not run it; the model reads [`REJECTED`] and the reason, if any.
    Reject { reason: Option<String> },
    /// Nobody approved it in time; the model reads [`CONFIRMATION_EXPIRED`].
    Expire,
}

/// Why `resolve_call` refused; the state is unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResolveCallError {
    /// A controller runs exactly one turn.
    AlreadyStarted,
    /// No call with this id waits for confirmation in the conversation.
    NotWaiting,
}

/// A tool's result text, or its error text.
pub type ToolOutcome = Result<String, String>;

/// Why `send` refused; the state is unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendError {
    /// A controller runs exactly one turn.
    AlreadyStarted,
    /// The input is empty or only whitespace.
    BlankInput,
    /// `regenerate` in a conversation with no user message.
    NothingToRegenerate,
    /// `resume` of a journal that holds no assistant message.
    NothingToResume,
}

/// The user's message of a turn (see [`ChatController::send_message`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UserInput {
    pub text: String,
    /// The client's id for the message.
    pub id: Option<String>,
    /// `file` (and image) parts.
    pub files: Vec<Part>,
    /// The client's `metadata` for the message, kept as it is.
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
}

/// The chat controller of one turn.
#[derive(Clone, Debug)]
pub struct ChatController {
    config: ChatConfig,
    state: ChatState,
    revision: u64,
    /// Per message of `state.messages`: the revision that shows its last change. Every write to
    /// a message goes through [`Self::message_mut`], [`Self::push_message`] or
    /// [`Self::remove_message`], which keep it.
    changed_at: Vec<u64>,
    /// Per message: the revision that shows its last change other than text appended to its
    /// content ([`Self::append_text`]). A reader that kept a message's bytes can then append the
    /// new text alone ([`Self::only_appended_since`]) instead of comparing the whole message.
    rewritten_at: Vec<u64>,
    phase: Phase,
    tool_rounds: u32,
}

#[derive(Clone, Debug)]
enum Phase {
    /// Before `send`.
    Ready,
    /// A model call is streaming into `state.messages[assistant]`.
    Streaming {
        assistant: usize,
        calls: PendingCalls,
    },
    /// The tool calls on `state.messages[assistant]` listed in `outstanding` are running.
    Tools {
        assistant: usize,
        outstanding: Vec<String>,
        awaiting_confirmation: bool,
    },
    /// The turn is over; every input is ignored.
    Ended,
}

impl ChatController {
    /// A controller over the conversation so far (`history` comes from `ChatMemory`).
    pub fn new(config: ChatConfig, history: Vec<Message>) -> Self {
        Self {
            changed_at: vec![0; history.len()],
            rewritten_at: vec![0; history.len()],
            config,
            state: ChatState {
                messages: history,
                status: ChatStatus::Idle,
                usage: Usage::default(),
                error: None,
            },
            revision: 0,
            phase: Phase::Ready,
            tool_rounds: 0,
        }
    }

    pub fn state(&self) -> &ChatState {
        &self.state
    }

    /// Bumped on every observable change of [`Self::state`]; never on an ignored input.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The index of the first message that changed after `revision` (a revision this
    /// controller returned earlier; `None`: never seen, so every message). Messages before it
    /// are the same as they were at `revision`; `messages.len()` when none changed. A message
    /// removed counts as a change of every message from its index on (and of the length).
    pub fn first_changed_since(&self, revision: Option<u64>) -> usize {
        match revision {
            None => 0,
            Some(seen) => self
                .changed_at
                .iter()
                .position(|&at| at > seen)
                .unwrap_or(self.changed_at.len()),
        }
    }

    /// Whether message `at` changed since `revision` (one this controller returned) only by text
    /// appended to its content: its content then starts with the content it had at `revision`,
    /// and every other field is the same. False for a message that was replaced, removed or
    /// moved, or that did not exist at `revision`.
    pub fn only_appended_since(&self, at: usize, revision: u64) -> bool {
        self.rewritten_at.get(at).is_some_and(|&r| r <= revision)
            && self.first_changed_since(Some(revision)) >= at
    }

    /// True once the turn is over (`Action::Done` was returned).
    pub fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Ended)
    }

    /// The calls of the conversation that wait for a person: status `requires_confirmation` and
    /// no `tool` message answering them.
    pub fn waiting_calls(&self) -> Vec<&ToolCall> {
        waiting_calls(&self.state.messages)
    }

    /// Starts the turn with the user's `input`.
    pub fn send(
        &mut self,
        input: &str,
        now_ms: u64,
        ids: &mut dyn IdSource,
    ) -> Result<Action, SendError> {
        let input = UserInput {
            text: input.to_owned(),
            ..UserInput::default()
        };
        self.send_message(&input, now_ms, ids)
    }

    /// [`Self::send`] with what a client protocol adds to the user's message: the client's id
    /// for it (kept unless the conversation holds that id already) and file parts (stored in
    /// `parts` after the text, for the models that read them).
    pub fn send_message(
        &mut self,
        input: &UserInput,
        now_ms: u64,
        ids: &mut dyn IdSource,
    ) -> Result<Action, SendError> {
        if !matches!(self.phase, Phase::Ready) {
            return Err(SendError::AlreadyStarted);
        }
        if input.text.trim().is_empty() {
            return Err(SendError::BlankInput);
        }
        let mut user = new_message(
            ids,
            now_ms,
            Role::User,
            input.text.clone(),
            MessageStatus::Complete,
        );
        let taken = |id: &String| self.state.messages.iter().any(|m| &m.id == id);
        if let Some(id) = input.id.as_ref().filter(|id| !id.is_empty() && !taken(id)) {
            user.id = id.clone();
        }
        user.metadata = input.metadata.clone();
        if !input.files.is_empty() {
            let text = Part::Text {
                text: input.text.clone(),
            };
            user.parts = Some(
                std::iter::once(text)
                    .chain(input.files.iter().cloned())
                    .collect(),
            );
        }
        self.push_message(user);
        self.state.status = ChatStatus::Streaming;
        Ok(self.start_model_call(now_ms, ids))
    }

    /// True when the conversation already ends with `input` as its last message: a retry of a
    /// turn whose earlier claim saved the user message before it lapsed. Such a turn answers
    /// that message ([`Self::regenerate`]) instead of sending it twice. The text must match, and
    /// the client's id when it gave one.
    pub fn ends_with_sent(&self, input: &UserInput) -> bool {
        self.state.messages.last().is_some_and(|m| {
            m.role == Role::User
                && m.content == input.text
                && input.id.as_ref().is_none_or(|id| &m.id == id)
        })
    }

    /// Starts the turn by answering the last user message again (`regenerate`): what followed
    /// it (the answer being replaced) is dropped first.
    pub fn regenerate(&mut self, now_ms: u64, ids: &mut dyn IdSource) -> Result<Action, SendError> {
        if !matches!(self.phase, Phase::Ready) {
            return Err(SendError::AlreadyStarted);
        }
        let last_user = self
            .state
            .messages
            .iter()
            .rposition(|m| m.role == Role::User)
            .ok_or(SendError::NothingToRegenerate)?;
        while self.state.messages.len() > last_user + 1 {
            self.remove_message(self.state.messages.len() - 1);
        }
        self.state.status = ChatStatus::Streaming;
        Ok(self.start_model_call(now_ms, ids))
    }

    /// Starts the turn from its journal instead of `send` (a retry of a turn whose process
    /// died, `core::session::journal`): `recorded`, the turn's messages as its last record saw
    /// them, follow the history this controller was given, and the turn goes on where the
    /// record ends. The calls of the last assistant message without a result run (again: the
    /// process may have died while they ran, so with the idempotency key they had); when none
    /// is left the model is called for the next step, or the turn ends when only calls that
    /// wait for a person remain. A call whose result was recorded never runs again, and the
    /// model is not asked again for a step it recorded.
    pub fn resume(
        &mut self,
        recorded: Vec<Message>,
        now_ms: u64,
        ids: &mut dyn IdSource,
    ) -> Result<Action, SendError> {
        if !matches!(self.phase, Phase::Ready) {
            return Err(SendError::AlreadyStarted);
        }
        let start = self.state.messages.len();
        let asked = recorded
            .iter()
            .rposition(|m| m.role == Role::Assistant)
            .ok_or(SendError::NothingToResume)?;
        for message in recorded {
            self.push_message(message);
        }
        let assistant = start + asked;
        self.tool_rounds = self.state.messages[start..]
            .iter()
            .filter(|m| m.role == Role::Assistant && m.tool_calls.is_some())
            .count() as u32;
        self.state.status = ChatStatus::Streaming;
        let answered: Vec<String> = self.state.messages[assistant..]
            .iter()
            .filter_map(|m| m.tool_call_id.clone())
            .collect();
        let calls = self.state.messages[assistant].tool_calls.clone().unwrap_or_default();
        let unanswered = calls.iter().filter(|c| !answered.contains(&c.id));
        let (mut invocations, mut awaiting_confirmation) = (Vec::new(), false);
        for call in unanswered {
            match call.status {
                ToolCallStatus::Pending | ToolCallStatus::Running => {
                    invocations.push(ToolInvocation {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        args: call.args.clone(),
                        idempotency_key: None,
                    })
                }
                ToolCallStatus::RequiresConfirmation => awaiting_confirmation = true,
                _ => {}
            }
        }
        for invocation in &invocations {
            self.set_call(assistant, &invocation.id, |c| {
                c.status = ToolCallStatus::Pending;
                true
            });
        }
        self.bump();
        if !invocations.is_empty() {
            self.phase = Phase::Tools {
                assistant,
                outstanding: invocations.iter().map(|i| i.id.clone()).collect(),
                awaiting_confirmation,
            };
            return Ok(Action::RunTools(invocations));
        }
        if awaiting_confirmation {
            return Ok(self.finish(ChatStatus::Complete, None));
        }
        Ok(self.start_model_call(now_ms, ids))
    }

    /// Starts the turn by continuing the call `call_id`, which waits for confirmation in the
    /// conversation this controller was given (instead of `send`).
    pub fn resolve_call(
        &mut self,
        call_id: &str,
        resolution: CallResolution,
        now_ms: u64,
        ids: &mut dyn IdSource,
    ) -> Result<Action, ResolveCallError> {
        if !matches!(self.phase, Phase::Ready) {
            return Err(ResolveCallError::AlreadyStarted);
        }
        let waiting = waiting_calls(&self.state.messages)
            .iter()
            .any(|c| c.id == call_id);
        let assistant = self
            .state
            .messages
            .iter()
            .rposition(|m| m.tool_calls.iter().flatten().any(|c| c.id == call_id))
            .filter(|_| waiting)
            .ok_or(ResolveCallError::NotWaiting)?;
        let others_waiting = self.state.messages[assistant]
            .tool_calls
            .iter()
            .flatten()
            .any(|c| c.id != call_id && c.status == ToolCallStatus::RequiresConfirmation);
        self.state.status = ChatStatus::Streaming;
        let denial = match resolution {
            CallResolution::Approve { idempotency_key } => {
                let mut invocation = None;
                self.set_call(assistant, call_id, |c| {
                    c.status = ToolCallStatus::Pending;
                    invocation = Some(ToolInvocation {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        args: c.args.clone(),
                        idempotency_key: Some(idempotency_key),
                    });
                    true
                });
                self.phase = Phase::Tools {
                    assistant,
                    outstanding: vec![call_id.to_owned()],
                    awaiting_confirmation: others_waiting,
                };
                self.bump();
                return Ok(Action::RunTools(invocation.into_iter().collect()));
            }
            CallResolution::Reject { reason: None } => REJECTED.to_owned(),
            CallResolution::Reject {
                reason: Some(reason),
            } => format!("{REJECTED} Reason: {reason}"),
            CallResolution::Expire => CONFIRMATION_EXPIRED.to_owned(),
        };
        self.record_result(assistant, call_id, Err(denial), now_ms, ids);
        self.bump();
        if others_waiting {
            return Ok(self.finish(ChatStatus::Complete, None));
        }
        Ok(self.start_model_call(now_ms, ids))
    }

    /// One streamed piece of the model's answer. Returns `Done` when the chunk broke a limit
    /// and ended the turn (abort the stream), else `Continue`.
    pub fn on_chunk(&mut self, chunk: ModelChunk) -> Action {
        let Phase::Streaming { assistant, calls } = &mut self.phase else {
            return self.idle_action();
        };
        let assistant = *assistant;
        match chunk {
            ModelChunk::Text(text) => {
                let content_bytes = self.state.messages[assistant].content.len();
                if content_bytes + text.len() > ASSISTANT_CONTENT_BYTES_MAX {
                    return self.fail(ChatError::ResponseTooLarge);
                }
                self.append_text(assistant, &text);
            }
            ModelChunk::Reasoning(text) => {
                let reasoning_bytes = self.state.messages[assistant].reasoning().len();
                if reasoning_bytes + text.len() > REASONING_BYTES_MAX {
                    return self.fail(ChatError::ResponseTooLarge);
                }
                self.append_reasoning(assistant, &text);
            }
            ModelChunk::ToolCall {
                index,
                id,
                name,
                args_delta,
            } => {
                if let Err(error) = calls.add(index, id, name, &args_delta) {
                    return self.fail(error);
                }
            }
            ModelChunk::Finish { usage, .. } => self.add_usage(usage),
        }
        Action::Continue
    }

    /// The model call ended normally.
    pub fn on_model_end(&mut self, now_ms: u64, ids: &mut dyn IdSource) -> Action {
        let Phase::Streaming { assistant, calls } = &mut self.phase else {
            return self.idle_action();
        };
        let assistant = *assistant;
        let pending = std::mem::take(calls);
        self.message_mut(assistant).status = MessageStatus::Complete;
        if pending.is_empty() {
            return self.finish(ChatStatus::Complete, None);
        }
        self.tool_round(assistant, pending, now_ms, ids)
    }

    /// The model call failed (the adapter threw or its stream broke).
    pub fn on_model_error(&mut self) -> Action {
        let Phase::Streaming { .. } = self.phase else {
            return self.idle_action();
        };
        self.fail(ChatError::ModelFailed)
    }

    /// A tool of the current round started running.
    pub fn on_tool_started(&mut self, id: &str) -> Action {
        let Phase::Tools {
            assistant,
            outstanding,
            ..
        } = &self.phase
        else {
            return self.idle_action();
        };
        let assistant = *assistant;
        if outstanding.iter().any(|o| o == id)
            && self.set_call(assistant, id, |c| {
                let pending = c.status == ToolCallStatus::Pending;
                if pending {
                    c.status = ToolCallStatus::Running;
                }
                pending
            })
        {
            self.bump();
        }
        Action::Continue
    }

    /// A tool of the current round finished. Unknown or repeated ids are ignored.
    pub fn on_tool_result(
        &mut self,
        id: &str,
        outcome: ToolOutcome,
        now_ms: u64,
        ids: &mut dyn IdSource,
    ) -> Action {
        let Phase::Tools {
            assistant,
            outstanding,
            awaiting_confirmation,
        } = &mut self.phase
        else {
            return self.idle_action();
        };
        let Some(position) = outstanding.iter().position(|o| o == id) else {
            return Action::Continue;
        };
        outstanding.remove(position);
        let (assistant, settled, awaiting) =
            (*assistant, outstanding.is_empty(), *awaiting_confirmation);
        let outcome = outcome.and_then(|text| {
            if text.len() > TOOL_RESULT_BYTES_MAX {
                Err(RESULT_TOO_LARGE.to_owned())
            } else {
                Ok(text)
            }
        });
        self.record_result(assistant, id, outcome, now_ms, ids);
        self.bump();
        match (settled, awaiting) {
            (false, _) => Action::Continue,
            (true, true) => self.finish(ChatStatus::Complete, None),
            (true, false) => self.start_model_call(now_ms, ids),
        }
    }

    /// Ends the turn now (client abort, cancel or deadline). Partial text stays.
    pub fn stop(&mut self) -> Action {
        match std::mem::replace(&mut self.phase, Phase::Ended) {
            Phase::Ready | Phase::Ended => return Action::Done,
            Phase::Streaming { assistant, .. } => self.close_assistant(assistant),
            Phase::Tools {
                assistant,
                outstanding,
                ..
            } => {
                for id in &outstanding {
                    self.set_call(assistant, id, |c| {
                        c.status = ToolCallStatus::Error;
                        c.error = Some(STOPPED.to_owned());
                        true
                    });
                }
            }
        }
        self.state.status = ChatStatus::Complete;
        self.bump();
        Action::Done
    }

    // ---- transitions

    fn start_model_call(&mut self, now_ms: u64, ids: &mut dyn IdSource) -> Action {
        let request = ModelRequest {
            messages: self.state.messages.clone(),
            tools: self.config.tools.clone(),
            settings: self.config.settings.clone(),
        };
        let assistant = new_message(
            ids,
            now_ms,
            Role::Assistant,
            String::new(),
            MessageStatus::Streaming,
        );
        self.push_message(assistant);
        self.phase = Phase::Streaming {
            assistant: self.state.messages.len() - 1,
            calls: PendingCalls::default(),
        };
        self.bump();
        Action::CallModel(request)
    }

    fn tool_round(
        &mut self,
        assistant: usize,
        mut pending: PendingCalls,
        now_ms: u64,
        ids: &mut dyn IdSource,
    ) -> Action {
        self.tool_rounds = self.tool_rounds.saturating_add(1);
        let over_limit = self.tool_rounds > self.config.max_tool_iterations;
        let mut calls = Vec::new();
        let mut invocations = Vec::new();
        let mut awaiting_confirmation = false;
        let mut rejected = Vec::new();
        for call in pending.take() {
            let (mut tool_call, plan) = tool_calls::resolve(call, &self.config.tools, ids);
            match plan {
                _ if over_limit => {
                    tool_call.status = ToolCallStatus::Error;
                    tool_call.error = Some(ITERATIONS_EXCEEDED.to_owned());
                }
                CallPlan::Run(invocation) => invocations.push(invocation),
                CallPlan::AwaitConfirmation => awaiting_confirmation = true,
                CallPlan::Rejected(text) => rejected.push((tool_call.id.clone(), text)),
            }
            calls.push(tool_call);
        }
        self.message_mut(assistant).tool_calls = Some(calls);
        if over_limit {
            let max = self.config.max_tool_iterations;
            return self.finish(
                ChatStatus::Error,
                Some(ChatError::ToolIterationsExceeded { max }),
            );
        }
        for (id, text) in rejected {
            self.push_tool_message(&id, text.to_owned(), MessageStatus::Error, now_ms, ids);
        }
        let outstanding: Vec<String> = invocations.iter().map(|i| i.id.clone()).collect();
        if !outstanding.is_empty() {
            self.phase = Phase::Tools {
                assistant,
                outstanding,
                awaiting_confirmation,
            };
            self.bump();
            return Action::RunTools(invocations);
        }
        if awaiting_confirmation {
            return self.finish(ChatStatus::Complete, None);
        }
        self.bump();
        self.start_model_call(now_ms, ids) // every call was rejected: the model reads why
    }

    fn record_result(
        &mut self,
        assistant: usize,
        id: &str,
        outcome: ToolOutcome,
        now_ms: u64,
        ids: &mut dyn IdSource,
    ) {
        let (status, text) = match &outcome {
            Ok(text) => (MessageStatus::Complete, text.clone()),
            Err(text) => (MessageStatus::Error, text.clone()),
        };
        self.set_call(assistant, id, |c| {
            match outcome {
                Ok(text) => {
                    c.status = ToolCallStatus::Complete;
                    c.result = Some(text);
                }
                Err(text) => {
                    c.status = ToolCallStatus::Error;
                    c.error = Some(text);
                }
            }
            true
        });
        self.push_tool_message(id, text, status, now_ms, ids);
    }

    fn fail(&mut self, error: ChatError) -> Action {
        if let Phase::Streaming { assistant, .. } = self.phase {
            self.message_mut(assistant).status = MessageStatus::Error;
        }
        self.finish(ChatStatus::Error, Some(error))
    }

    fn finish(&mut self, status: ChatStatus, error: Option<ChatError>) -> Action {
        self.phase = Phase::Ended;
        self.state.status = status;
        self.state.error = error;
        self.bump();
        Action::Done
    }

    /// On stop: a streaming assistant message keeps its text (and reasoning) as `complete`, or
    /// goes if it has neither.
    fn close_assistant(&mut self, assistant: usize) {
        let message = &self.state.messages[assistant];
        if message.content.is_empty() && message.reasoning().is_empty() {
            self.remove_message(assistant);
        } else {
            self.message_mut(assistant).status = MessageStatus::Complete;
        }
    }

    // ---- small helpers

    fn idle_action(&self) -> Action {
        if self.is_done() {
            Action::Done
        } else {
            Action::Continue
        }
    }

    fn append_text(&mut self, assistant: usize, text: &str) {
        if !text.is_empty() {
            // Not message_mut: an append is the one change `rewritten_at` leaves out.
            self.changed_at[assistant] = self.revision + 1;
            self.state.messages[assistant].content.push_str(text);
            self.bump();
        }
    }

    /// Reasoning grows in the message's `metadata.reasoning` (AgentsKit's place for it): the
    /// wire's message has no reasoning part.
    fn append_reasoning(&mut self, assistant: usize, text: &str) {
        if !text.is_empty() {
            self.message_mut(assistant).append_reasoning(text);
            self.bump();
        }
    }

    fn add_usage(&mut self, usage: Option<Usage>) {
        if let Some(usage) = usage {
            let sum = self.state.usage.plus(usage);
            if sum != self.state.usage {
                self.state.usage = sum;
                self.bump();
            }
        }
    }

    /// Applies `change` to the call `id` of the assistant message; returns what `change` says.
    fn set_call(
        &mut self,
        assistant: usize,
        id: &str,
        change: impl FnOnce(&mut ToolCall) -> bool,
    ) -> bool {
        let Some(at) = self.state.messages[assistant]
            .tool_calls
            .iter()
            .flatten()
            .position(|c| c.id == id)
        else {
            return false;
        };
        let message = &mut self.state.messages[assistant];
        let changed = message
            .tool_calls
            .as_mut()
            .and_then(|calls| calls.get_mut(at))
            .is_some_and(change);
        if changed {
            self.changed_at[assistant] = self.revision + 1;
            self.rewritten_at[assistant] = self.revision + 1;
        }
        changed
    }

    fn push_tool_message(
        &mut self,
        call_id: &str,
        content: String,
        status: MessageStatus,
        now_ms: u64,
        ids: &mut dyn IdSource,
    ) {
        let mut message = new_message(ids, now_ms, Role::Tool, content, status);
        message.tool_call_id = Some(call_id.to_owned());
        self.push_message(message);
    }

    // ---- the only writes to messages besides append_text (they keep `changed_at` and
    // `rewritten_at`)

    /// A change is visible from the next revision on (every input that changes state bumps).
    fn message_mut(&mut self, at: usize) -> &mut Message {
        self.changed_at[at] = self.revision + 1;
        self.rewritten_at[at] = self.revision + 1;
        &mut self.state.messages[at]
    }

    fn push_message(&mut self, message: Message) {
        self.state.messages.push(message);
        self.changed_at.push(self.revision + 1);
        self.rewritten_at.push(self.revision + 1);
    }

    fn remove_message(&mut self, at: usize) {
        self.state.messages.remove(at);
        self.changed_at.remove(at);
        self.rewritten_at.remove(at);
        let next = self.revision + 1;
        self.changed_at[at..].fill(next);
        self.rewritten_at[at..].fill(next);
    }

    fn bump(&mut self) {
        self.revision += 1;
    }
}

/// The calls of `messages` that wait for a person (see [`ChatController::waiting_calls`]).
pub fn waiting_calls(messages: &[Message]) -> Vec<&ToolCall> {
    let answered: Vec<&str> = messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    messages
        .iter()
        .flat_map(|m| m.tool_calls.iter().flatten())
        .filter(|c| c.status == ToolCallStatus::RequiresConfirmation)
        .filter(|c| !answered.contains(&c.id.as_str()))
        .collect()
}

fn new_message(
    ids: &mut dyn IdSource,
    now_ms: u64,
    role: Role,
    content: String,
    status: MessageStatus,
) -> Message {
    Message {
        id: ids.next_id("msg"),
        role,
        content,
        status,
        created_at: format_iso_millis_at(now_ms),
        parts: None,
        tool_calls: None,
        tool_call_id: None,
        metadata: None,
    }
}
