//! ChatMemory, ModelAdapter and Tool: the ports of the chat controller, plus the Clock, Ids
//! and Sleep ports a driver needs to feed it time, ids and pauses.
//!
//! The vocabulary (messages, model requests and chunks, tool specs) is defined in the core
//! (`turnkeep_core::protocol`, `turnkeep_core::chat::model`) so the core never depends on a port.
//! All futures are `LocalFuture`s: not `Send`, because wasm is single-threaded and a JS host
//! object may stand behind any of these traits.

use std::rc::Rc;

use serde_json::{Map, Value};

pub use super::CancelToken;
use super::{LocalFuture, PortError};
use turnkeep_core::chat::input_schema::InputIssues;
use turnkeep_core::chat::model::{ModelChunk, ModelRequest, ToolSpec};
use turnkeep_core::protocol::{Message, ToolCall};

/// Where the canonical messages of a session live between turns.
pub trait ChatMemory {
    /// The saved conversation; empty when nothing was saved yet.
    fn load<'a>(
        &'a self,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Vec<Message>, PortError>>;
    /// Replaces the saved conversation with `messages`. A turn's saves carry `fence`, its
    /// claim's generation (the cursor the claim wrote, which grows from claim to claim): a store
    /// that can compare keeps the highest fence it saved under and refuses a save with a lower
    /// one (an `Err`, nothing written), so a save that outlived its turn's lease and lands after
    /// a newer turn's cannot overwrite that turn's conversation (`core::session::check_fence`).
    /// `None` (a save outside a turn) always saves; a store that cannot compare saves either way.
    fn save<'a>(
        &'a self,
        messages: &'a [Message],
        fence: Option<u64>,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<(), PortError>>;
}

/// A language model that streams its answer.
pub trait ModelAdapter {
    /// Starts one model call. An `Err` means the call could not start at all.
    fn start(
        &self,
        request: ModelRequest,
    ) -> LocalFuture<'_, Result<Box<dyn ModelStream>, PortError>>;

    /// Which model this is, for the operator's traces (`gen_ai.request.model`); unknown by
    /// default.
    fn describe(&self) -> ModelInfo {
        ModelInfo::default()
    }
}

/// What a model says of itself: names only, never a credential or an endpoint.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelInfo {
    /// The provider, as the OpenTelemetry GenAI conventions name it (`openai`, `anthropic`).
    pub provider: Option<String>,
    /// The model's name as requested (`gpt-4o-mini`).
    pub model: Option<String>,
}

/// One model call in progress.
pub trait ModelStream {
    /// The next chunk; `None` when the call ended normally, `Some(Err)` when it failed (after
    /// which the driver stops asking).
    fn next_chunk(&mut self) -> LocalFuture<'_, Option<Result<ModelChunk, PortError>>>;
    /// Stops the call now (the user pressed stop, the deadline fired, the turn failed).
    /// Idempotent; `next_chunk` afterwards returns `None`.
    fn abort(&mut self);
}

/// A tool the model may call.
pub trait Tool {
    /// Name, description, JSON Schema of the arguments and whether it needs approval.
    fn spec(&self) -> &ToolSpec;
    /// Runs the tool. `Ok` is the result text the model reads. A [`ToolFailure::Failed`] is
    /// recorded on the call as a fixed "tool failed" text: its message is for logs only; a
    /// [`ToolFailure::InvalidInput`] (input the host's own schema refused before running it)
    /// is what the model reads. `context.cancel` fires when the turn stops; a tool should give
    /// up promptly then.
    fn execute(
        &self,
        args: Map<String, Value>,
        context: ToolContext,
    ) -> LocalFuture<'_, Result<String, ToolFailure>>;
}

/// Why a tool gave no result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolFailure {
    /// It threw, rejected or returned what cannot be a result.
    Failed(PortError),
    /// Its input broke a schema the host checks (a Standard Schema object); it did not run.
    InvalidInput(InputIssues),
}

impl From<PortError> for ToolFailure {
    fn from(error: PortError) -> Self {
        Self::Failed(error)
    }
}

/// What a tool run is given besides its arguments.
#[derive(Clone, Debug)]
pub struct ToolContext {
    /// Fires when the turn stops.
    pub cancel: CancelToken,
    /// The id of the tool call being run.
    pub tool_call_id: String,
    /// The same for every run of this call: `core::session::tool_idempotency_key`, or for a
    /// call a person approved its confirmation token. A call runs again only when its turn is
    /// retried after its process died between the call's start and the record of its result
    /// (`core::session::journal`), and then with this key: a tool whose effect must not happen
    /// twice records the key with its effect and answers a key it has seen with its result.
    /// `None` only for a tool run outside a turn.
    pub idempotency_key: Option<String>,
    /// The conversation when the tool runs (AgentsKit tools are handed it).
    pub messages: Rc<[Message]>,
    /// The call being run, as the conversation holds it.
    pub call: Option<ToolCall>,
}

impl ToolContext {
    /// A context with only a cancel token (tests, tools run outside a turn).
    pub fn new(cancel: CancelToken, tool_call_id: &str) -> Self {
        Self {
            cancel,
            tool_call_id: tool_call_id.to_owned(),
            idempotency_key: None,
            messages: Rc::from(Vec::new()),
            call: None,
        }
    }
}

/// Wall-clock time in epoch milliseconds.
pub trait Clock {
    fn now_ms(&self) -> u64;
}

/// Fresh ids, e.g. `msg-<epochMs>-<counter>`. `prefix` says what the id is for (`msg`, `call`).
pub trait Ids {
    fn next_id(&self, prefix: &str) -> String;

    /// A fresh `eventId` for a turn event (a SafeId). Hosts with an id source of their own
    /// (`createId`) return its ids unprefixed, as AgentsKit does.
    fn event_id(&self) -> String {
        self.next_id("evt")
    }
}

/// A pause (the demo model's delay between chunks).
pub trait Sleep {
    fn sleep(&self, ms: u64) -> LocalFuture<'_, ()>;
}
