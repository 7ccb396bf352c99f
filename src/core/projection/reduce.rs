//! The one projection: a session log's chunks → the conversation (one reducer per concern:
//! nothing else reads a log). Server-side rendering, `GET /api/sessions/:id`, the browser client and
//! the publisher's own check all run this reducer, compiled once.
//!
//! Incremental: feed chunks in log order, read the state at any point; feeding a prefix and then
//! the suffix gives the same state as feeding the whole log. Lenient: a chunk it cannot read
//! (unknown type, missing id, wrong field types) changes nothing, so a log written by another
//! client never breaks a reader. It reads logs written by turnkeep (canonical fidelity: ids,
//! `createdAt`, statuses, tool calls and their results) and by TanStack AI clients (text and
//! tool calls; what those chunks do not say gets a stated default: `createdAt` from the chunk's
//! `timestamp`, status `complete` once the message or the run ended). Reasoning (AG-UI's
//! `REASONING_*`) goes to its message's `metadata.reasoning`.

mod in_flight;

use crate::hash::FixedHashMap;

use serde_json::{Map, Value};

use super::chunks::*;
use super::confirmations::{Confirmations, LogConfirmation};
use crate::checks::format_iso_millis_at;
use crate::protocol::message::decode_messages;
use crate::protocol::{Message, MessageStatus, Role, ToolCall, ToolCallStatus};

/// One message of the projection.
#[derive(Clone, Debug, PartialEq)]
struct Entry {
    message: Message,
    /// The message as a native batch carried it (kept whole: parts and metadata a reader of
    /// this projection does not know survive), until a later chunk changes the message.
    native: Option<Value>,
    /// Started and not yet ended.
    open: bool,
}

/// The conversation a log projects to, so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Projection {
    entries: Vec<Entry>,
    by_id: FixedHashMap<String, usize>,
    /// Tool call id → (entry, call index).
    calls: FixedHashMap<String, (usize, usize)>,
    /// Tool call id → its argument text so far (TOOL_CALL_ARGS deltas).
    args_text: FixedHashMap<String, String>,
    /// Reasoning span id (AG-UI's reasoning `messageId`) → the entry whose reasoning it is.
    reasoning: FixedHashMap<String, usize>,
    /// Reasoning spans started and not yet ended, in order.
    open_reasoning: Vec<String>,
    /// The newest chunk `timestamp` seen: the `createdAt` of messages whose chunks carry none.
    last_ms: u64,
    chunks: u64,
    /// The run (turn) started and not yet finished or failed, if any.
    active_run: Option<String>,
    /// The run that started last (running or ended), so a late reader can tell a run that
    /// ended from one the log has not seen start yet.
    last_run: Option<String>,
    /// How many messages there were when the last run started: the run's own come after.
    last_run_from: usize,
    /// Tool confirmations the log asked for, and their states (a native batch keeps them).
    confirmations: Confirmations,
}

impl Projection {
    pub fn new() -> Self {
        Self::default()
    }

    /// A projection that starts from `messages` (what a log is known to project to already).
    pub(crate) fn from_messages(messages: &[Message]) -> Self {
        let mut projection = Self::new();
        projection.replace_all(messages.iter().map(|m| Entry {
            message: m.clone(),
            native: None,
            open: false,
        }));
        projection
    }

    /// A projection that starts from messages a client already holds (a seed's `messages`, its
    /// `nativeMessages`, or any TanStack UI messages): canonical messages keep every field,
    /// anything else is read as a native batch would be (`MESSAGES_SNAPSHOT`).
    /// `active_run`: the run the client knows is still going (a seed's `activeRunId`).
    pub fn from_initial(messages: &Value, active_run: Option<&str>) -> Self {
        let mut projection = match decode_messages(messages) {
            Ok(decoded) => Self::from_messages(&decoded),
            Err(_) => {
                let mut projection = Self::new();
                if messages.is_array() {
                    projection.snapshot(&serde_json::json!({ "messages": messages }));
                }
                projection
            }
        };
        projection.active_run = active_run.filter(|r| !r.is_empty()).map(str::to_owned);
        projection
    }

    /// The same projection, knowing the tool confirmations a client holds already (a seed's
    /// `confirmations`: what the chunks before the seed's offset said about them).
    pub fn with_confirmations(mut self, seed: &Value) -> Self {
        self.confirmations = Confirmations::from_seed(seed);
        self
    }

    /// Chunks fed so far.
    pub fn chunk_count(&self) -> u64 {
        self.chunks
    }

    /// The `runId` of the run that started last and has not finished or failed yet (for a
    /// turnkeep log, the running turn's id: what `client.turn.stop` names). A run whose writer
    /// died without ending it stays active until the next run starts.
    pub fn active_run(&self) -> Option<&str> {
        self.active_run.as_deref()
    }

    /// The run that started last in what was fed (running or ended).
    pub fn last_run(&self) -> Option<&str> {
        self.last_run.as_deref()
    }

    /// The messages the last run added so far (none when it has written none yet).
    pub fn last_run_messages(&self) -> impl Iterator<Item = &Message> {
        let from = self.last_run_from.min(self.entries.len());
        self.entries[from..].iter().map(|e| &e.message)
    }

    /// The tool confirmations the log shows, in order of first appearance.
    pub fn confirmations(&self) -> &[LogConfirmation] {
        self.confirmations.list()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The messages, in order.
    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.entries.iter().map(|e| &e.message)
    }

    pub fn to_messages(&self) -> Vec<Message> {
        self.messages().cloned().collect()
    }

    /// The conversation as TanStack UI messages: each message as a native batch carried it when
    /// nothing changed it since, else built from the canonical message (tool results anchored on
    /// the assistant message that made the call, as TanStack readers expect).
    pub fn native_messages(&self) -> Vec<Value> {
        if self.entries.iter().all(|e| e.native.is_none()) {
            return ui_messages(&self.to_messages());
        }
        let mut out = Vec::with_capacity(self.entries.len());
        let mut run: Vec<Message> = Vec::new();
        for entry in &self.entries {
            match &entry.native {
                Some(native) => {
                    out.extend(ui_messages(&run));
                    run.clear();
                    out.push(native.clone());
                }
                None => run.push(entry.message.clone()),
            }
        }
        out.extend(ui_messages(&run));
        out
    }

    /// Feeds one chunk.
    pub fn feed(&mut self, chunk: &Value) {
        self.chunks += 1;
        if let Some(ms) = chunk_timestamp(chunk) {
            self.last_ms = self.last_ms.max(ms);
        }
        let Some(kind) = chunk_type(chunk) else {
            return;
        };
        match kind {
            TEXT_MESSAGE_START => self.message_start(chunk),
            TEXT_MESSAGE_CONTENT => self.message_content(chunk),
            TEXT_MESSAGE_END => self.message_end(chunk),
            TOOL_CALL_START => self.tool_call_start(chunk),
            TOOL_CALL_ARGS => self.tool_call_args(chunk),
            TOOL_CALL_END => self.tool_call_end(chunk),
            TOOL_CALL_RESULT => self.tool_call_result(chunk),
            CUSTOM => self.custom(chunk),
            RUN_STARTED => {
                self.active_run = str_field(chunk, "runId").map(str::to_owned);
                self.last_run.clone_from(&self.active_run);
                self.last_run_from = self.entries.len();
            }
            RUN_FINISHED => {
                self.active_run = None;
                self.open_reasoning.clear();
                self.close_open(MessageStatus::Complete);
                self.interrupted(chunk);
            }
            RUN_ERROR => {
                self.active_run = None;
                self.open_reasoning.clear();
                self.close_open(MessageStatus::Error)
            }
            MESSAGES_SNAPSHOT => self.snapshot(chunk),
            REASONING_START | REASONING_MESSAGE_START => {
                self.reasoning_entry(chunk);
            }
            REASONING_MESSAGE_CONTENT => self.reasoning_content(chunk),
            REASONING_MESSAGE_END | REASONING_END => {
                if let Some(id) = str_field(chunk, "messageId") {
                    self.open_reasoning.retain(|open| open != id);
                }
            }
            _ => {}
        }
    }

    /// The reasoning span of message `message_id` that is open, if any (for the encoder).
    pub(crate) fn open_reasoning_of(&self, message_id: &str) -> Option<&str> {
        let at = *self.by_id.get(message_id)?;
        self.open_reasoning
            .iter()
            .find(|id| self.reasoning.get(id.as_str()) == Some(&at))
            .map(String::as_str)
    }

    /// Every reasoning span still open (for the encoder, which closes them before a run ends).
    pub(crate) fn open_reasoning_spans(&self) -> &[String] {
        &self.open_reasoning
    }

    /// How many reasoning spans message `message_id` has had (for the encoder's next id).
    pub(crate) fn reasoning_spans_of(&self, message_id: &str) -> usize {
        self.by_id
            .get(message_id)
            .map_or(0, |at| self.reasoning.values().filter(|e| *e == at).count())
    }

    /// Feeds chunks in order.
    pub fn feed_all<'a>(&mut self, chunks: impl IntoIterator<Item = &'a Value>) {
        for chunk in chunks {
            self.feed(chunk);
        }
    }

    // ---- messages

    fn message_start(&mut self, chunk: &Value) {
        let Some(id) = str_field(chunk, "messageId") else {
            return;
        };
        if let Some(&at) = self.by_id.get(id) {
            let entry = &mut self.entries[at];
            entry.open = true;
            entry.native = None;
            return;
        }
        let role = role_of(str_field(chunk, "role").unwrap_or("assistant"));
        let created_at = chunk_created_at(chunk, self.last_ms);
        self.push(new_message(id, role, created_at), true);
    }

    fn message_content(&mut self, chunk: &Value) {
        let Some(id) = str_field(chunk, "messageId") else {
            return;
        };
        let at = self.ensure_assistant(id, chunk);
        let entry = &mut self.entries[at];
        entry.native = None;
        match (str_field(chunk, "delta"), str_field(chunk, "content")) {
            (Some(delta), _) => entry.message.content.push_str(delta),
            // A writer that sends the accumulated text instead of deltas.
            (None, Some(content)) => content.clone_into(&mut entry.message.content),
            (None, None) => {}
        }
    }

    fn message_end(&mut self, chunk: &Value) {
        let Some(at) = str_field(chunk, "messageId").and_then(|id| self.by_id.get(id).copied())
        else {
            return;
        };
        let status = str_field(chunk, "status")
            .and_then(parse_message_status)
            .unwrap_or(MessageStatus::Complete);
        let entry = &mut self.entries[at];
        entry.message.status = status;
        entry.open = false;
        entry.native = None;
    }

    /// Ends every open message (a run finished or failed) with `status`.
    fn close_open(&mut self, status: MessageStatus) {
        for entry in self.entries.iter_mut().filter(|e| e.open) {
            entry.open = false;
            entry.message.status = status;
            entry.native = None;
        }
    }

    // ---- reasoning

    /// The entry a reasoning span belongs to, recorded on its first chunk: the message its
    /// `parentMessageId` names (turnkeep's), else the open assistant message, else the last one
    /// (TanStack's processor attaches reasoning to the active assistant message), else a new one.
    fn reasoning_entry(&mut self, chunk: &Value) -> Option<usize> {
        let id = str_field(chunk, "messageId")?;
        if let Some(&at) = self.reasoning.get(id) {
            return Some(at);
        }
        let at = match str_field(chunk, "parentMessageId") {
            Some(parent) => self.ensure_assistant(parent, chunk),
            None => {
                let assistant = |e: &Entry| e.message.role == Role::Assistant;
                match self
                    .entries
                    .iter()
                    .rposition(|e| assistant(e) && e.open)
                    .or_else(|| self.entries.iter().rposition(assistant))
                {
                    Some(at) => at,
                    None => self.ensure_assistant(&format!("assistant-{id}"), chunk),
                }
            }
        };
        self.reasoning.insert(id.to_owned(), at);
        self.open_reasoning.push(id.to_owned());
        Some(at)
    }

    fn reasoning_content(&mut self, chunk: &Value) {
        let Some(delta) = str_field(chunk, "delta") else {
            return;
        };
        let Some(at) = self.reasoning_entry(chunk) else {
            return;
        };
        let entry = &mut self.entries[at];
        entry.message.append_reasoning(delta);
        entry.native = None;
    }

    // ---- tool calls

    fn tool_call_start(&mut self, chunk: &Value) {
        let Some(call_id) = str_field(chunk, "toolCallId") else {
            return;
        };
        if self.calls.contains_key(call_id) {
            return;
        }
        let name = str_field(chunk, "toolCallName")
            .or_else(|| str_field(chunk, "toolName"))
            .unwrap_or(crate::chat::controller::UNNAMED);
        let at = match str_field(chunk, "parentMessageId") {
            Some(parent) => self.ensure_assistant(parent, chunk),
            None => match self.entries.last() {
                Some(last) if last.message.role == Role::Assistant => self.entries.len() - 1,
                _ => self.ensure_assistant(&format!("assistant-{call_id}"), chunk),
            },
        };
        let entry = &mut self.entries[at];
        entry.native = None;
        let calls = entry.message.tool_calls.get_or_insert_with(Vec::new);
        calls.push(ToolCall {
            id: call_id.to_owned(),
            name: name.to_owned(),
            args: Map::new(),
            status: ToolCallStatus::Pending,
            result: None,
            error: None,
        });
        self.calls.insert(call_id.to_owned(), (at, calls.len() - 1));
    }

    fn tool_call_args(&mut self, chunk: &Value) {
        let (Some(call_id), Some(delta)) =
            (str_field(chunk, "toolCallId"), str_field(chunk, "delta"))
        else {
            return;
        };
        if !self.calls.contains_key(call_id) {
            return;
        }
        let text = self.args_text.entry(call_id.to_owned()).or_default();
        text.push_str(delta);
        if let Ok(Value::Object(args)) = serde_json::from_str::<Value>(text) {
            self.with_call(call_id, |call| call.args = args);
        }
    }

    fn tool_call_end(&mut self, chunk: &Value) {
        let Some(call_id) = str_field(chunk, "toolCallId") else {
            return;
        };
        self.args_text.remove(call_id);
        let input = chunk.get("input").and_then(Value::as_object).cloned();
        let status = str_field(chunk, "status").and_then(parse_tool_status);
        let error = str_field(chunk, "error").map(str::to_owned);
        // Older TanStack writers put a server tool's output on the end chunk; turnkeep writes a
        // failure there as `{ error }`.
        let failure = chunk
            .pointer("/result/error")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let result = chunk
            .get("result")
            .filter(|_| failure.is_none())
            .map(value_text);
        self.with_call(call_id, |call| {
            if let Some(args) = input {
                call.args = args;
            }
            if let Some(status) = status {
                call.status = status;
            }
            if error.is_some() {
                call.error = error;
            }
            if let Some(result) = result {
                call.status = ToolCallStatus::Complete;
                call.result = Some(result);
            }
            if let Some(failure) = failure {
                call.status = ToolCallStatus::Error;
                call.error = Some(failure);
                call.result = None;
            }
        });
    }

    fn tool_call_result(&mut self, chunk: &Value) {
        let Some(call_id) = str_field(chunk, "toolCallId") else {
            return;
        };
        let failed = str_field(chunk, "state") == Some("output-error")
            || chunk
                .pointer("/metadata/tanstack/state")
                .and_then(Value::as_str)
                == Some("output-error");
        let content = chunk.get("content").map(value_text).unwrap_or_default();
        let content = if failed {
            result_error(&content)
        } else {
            content
        };
        self.with_call(call_id, |call| {
            if failed {
                call.status = ToolCallStatus::Error;
                call.error = Some(content.clone());
                call.result = None;
            } else {
                call.status = ToolCallStatus::Complete;
                call.result = Some(content.clone());
                call.error = None;
            }
        });
        // turnkeep names the `tool` message; TanStack names the assistant message that made
        // the call (its results are parts of that message), which must keep its own text.
        let message_id = str_field(chunk, "messageId")
            .filter(|id| {
                self.by_id
                    .get(*id)
                    .is_none_or(|&at| self.entries[at].message.role == Role::Tool)
            })
            .map(str::to_owned)
            .unwrap_or_else(|| format!("tool-{call_id}"));
        let status = if failed {
            MessageStatus::Error
        } else {
            MessageStatus::Complete
        };
        match self.by_id.get(&message_id).copied() {
            Some(at) => {
                let entry = &mut self.entries[at];
                entry.message.content = content;
                entry.message.status = status;
                entry.native = None;
            }
            None => {
                let created_at = chunk_created_at(chunk, self.last_ms);
                let mut message = new_message(&message_id, Role::Tool, created_at);
                message.content = content;
                message.status = status;
                message.tool_call_id = Some(call_id.to_owned());
                self.push(message, false);
            }
        }
    }

    /// A run that ended waiting for approvals: the calls it names wait for a person.
    fn interrupted(&mut self, chunk: &Value) {
        let known = self.confirmations.list().len();
        self.confirmations.run_finished(chunk);
        let waiting: Vec<String> = self.confirmations.list()[known..]
            .iter()
            .map(|c| c.tool_call_id.clone())
            .collect();
        for call_id in waiting {
            self.with_call(&call_id, |call| {
                if matches!(call.status, ToolCallStatus::Pending) {
                    call.status = ToolCallStatus::RequiresConfirmation;
                }
            });
        }
    }

    fn custom(&mut self, chunk: &Value) {
        let value = chunk.get("value").unwrap_or(&Value::Null);
        self.confirmations.custom(str_field(chunk, "name"), value);
        let Some(call_id) = str_field(value, "toolCallId") else {
            return;
        };
        match str_field(chunk, "name") {
            Some(APPROVAL_REQUESTED) => self.with_call(call_id, |call| {
                call.status = ToolCallStatus::RequiresConfirmation;
            }),
            Some(TOOL_CALL_STATUS) => {
                let Some(status) = str_field(value, "status").and_then(parse_tool_status) else {
                    return;
                };
                let result = str_field(value, "result").map(str::to_owned);
                let error = str_field(value, "error").map(str::to_owned);
                self.with_call(call_id, |call| {
                    call.status = status;
                    call.result = result;
                    call.error = error;
                });
            }
            _ => {}
        }
    }

    // ---- native batches

    /// A native batch replaces the whole conversation: from its `canonical` list when it carries
    /// a valid one (turnkeep wrote it), else from its UI / AG-UI messages, each kept whole.
    fn snapshot(&mut self, chunk: &Value) {
        if let Some(canonical) = chunk.get("canonical").filter(|c| c.is_array()) {
            if let Ok(messages) = decode_messages(canonical) {
                self.replace_all(messages.into_iter().map(|message| Entry {
                    message,
                    native: None,
                    open: false,
                }));
                return;
            }
        }
        let Some(list) = chunk.get("messages").and_then(Value::as_array) else {
            return;
        };
        let fallback_ms = self.last_ms;
        let entries: Vec<Entry> = list
            .iter()
            .filter_map(|item| snapshot_message(item, fallback_ms))
            .collect();
        self.replace_all(entries);
    }

    // ---- helpers

    fn replace_all(&mut self, entries: impl IntoIterator<Item = Entry>) {
        self.entries.clear();
        self.by_id.clear();
        self.calls.clear();
        self.args_text.clear();
        self.reasoning.clear();
        self.open_reasoning.clear();
        for entry in entries {
            if self.by_id.contains_key(&entry.message.id) {
                continue; // a batch that names an id twice keeps the first
            }
            let at = self.entries.len();
            self.by_id.insert(entry.message.id.clone(), at);
            for (i, call) in entry.message.tool_calls.iter().flatten().enumerate() {
                self.calls.entry(call.id.clone()).or_insert((at, i));
            }
            self.entries.push(entry);
        }
    }

    fn push(&mut self, message: Message, open: bool) -> usize {
        let at = self.entries.len();
        self.by_id.insert(message.id.clone(), at);
        self.entries.push(Entry {
            message,
            native: None,
            open,
        });
        at
    }

    /// The message `id`, created as an open assistant message when it does not exist yet.
    fn ensure_assistant(&mut self, id: &str, chunk: &Value) -> usize {
        if let Some(&at) = self.by_id.get(id) {
            return at;
        }
        let created_at = chunk_created_at(chunk, self.last_ms);
        self.push(new_message(id, Role::Assistant, created_at), true)
    }

    fn with_call(&mut self, call_id: &str, change: impl FnOnce(&mut ToolCall)) {
        let Some(&(at, i)) = self.calls.get(call_id) else {
            return;
        };
        let entry = &mut self.entries[at];
        if let Some(call) = entry.message.tool_calls.as_mut().and_then(|c| c.get_mut(i)) {
            change(call);
            entry.native = None;
        }
    }
}

fn new_message(id: &str, role: Role, created_at: String) -> Message {
    Message {
        id: id.to_owned(),
        role,
        content: String::new(),
        status: MessageStatus::Streaming,
        created_at,
        parts: None,
        tool_calls: None,
        tool_call_id: None,
        metadata: None,
    }
}

fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn role_of(role: &str) -> Role {
    match role {
        "user" => Role::User,
        "system" => Role::System,
        "tool" => Role::Tool,
        _ => Role::Assistant,
    }
}

/// A result as text: strings as they are, anything else as its JSON.
fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One message of a native batch: its canonical form when it carries a valid one, else what its
/// TanStack / AG-UI fields say. `None` for an item without an id.
fn snapshot_message(item: &Value, fallback_ms: u64) -> Option<Entry> {
    let native = Some(item.clone());
    let id = str_field(item, "id")?;
    let created_at = match item.get("createdAt").and_then(Value::as_str) {
        Some(at) if crate::checks::is_iso_millis_utc(at) => at.to_owned(),
        _ => format_iso_millis_at(fallback_ms),
    };
    let mut message = new_message(
        id,
        role_of(str_field(item, "role").unwrap_or("user")),
        created_at,
    );
    message.status = MessageStatus::Complete;
    let parts = item.get("parts").and_then(Value::as_array);
    message.content = match str_field(item, "content") {
        Some(text) => text.to_owned(),
        None => parts
            .into_iter()
            .flatten()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| str_field(p, "content").or_else(|| str_field(p, "text")))
            .collect(),
    };
    let calls: Vec<ToolCall> = parts
        .into_iter()
        .flatten()
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("tool-call"))
        .filter_map(ui_tool_call)
        .collect();
    if !calls.is_empty() {
        message.tool_calls = Some(calls);
    }
    message.tool_call_id = str_field(item, "toolCallId").map(str::to_owned);
    message.metadata = item.get("metadata").and_then(Value::as_object).cloned();
    Some(Entry {
        message,
        native,
        open: false,
    })
}

/// A TanStack `tool-call` part as a canonical call.
fn ui_tool_call(part: &Value) -> Option<ToolCall> {
    let id = str_field(part, "id")?;
    let args = match part.get("input") {
        Some(Value::Object(input)) => input.clone(),
        _ => str_field(part, "arguments")
            .and_then(|text| serde_json::from_str::<Value>(text).ok())
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default(),
    };
    let output = part.get("output");
    let error = output
        .and_then(|o| o.get("error"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let status = match str_field(part, "state") {
        Some("approval-requested") => ToolCallStatus::RequiresConfirmation,
        Some("error") | Some("output-error") => ToolCallStatus::Error,
        _ if error.is_some() => ToolCallStatus::Error,
        _ if output.is_some() => ToolCallStatus::Complete,
        Some("complete") | Some("output-available") => ToolCallStatus::Complete,
        _ => ToolCallStatus::Pending,
    };
    let result = match (status, output) {
        (ToolCallStatus::Complete, Some(o)) => Some(value_text(o)),
        _ => None,
    };
    Some(ToolCall {
        id: id.to_owned(),
        name: str_field(part, "name")
            .unwrap_or(crate::chat::controller::UNNAMED)
            .to_owned(),
        args,
        status,
        result,
        error,
    })
}
