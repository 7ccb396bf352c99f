//! The chat controller and what it exchanges with the world.
//!
//! - [`model`]: model requests and streamed chunks, tool specs, usage — the vocabulary shared
//!   by the controller and every model adapter, so the core needs no port to speak of them.
//! - [`controller`]: the turn state machine: inputs in, the next [`Action`] out.
//! - [`demo`]: the deterministic demo model and its two tools, as pure scripts.
//! - [`openai`]: pure translation to and from an OpenAI-compatible streaming endpoint.
//! - [`agentskit`]: the chunks an AgentsKit adapter streams, as [`ModelChunk`]s.
//! - [`aisdk`]: AI SDK language models (`doStream`): call options out, stream parts in.
//! - [`settings`]: a definition's call settings (instructions, temperature, ...), bounded.
//! - [`input_schema`]: tool input checked against the tool's JSON Schema before it runs.
//! - [`definition`]: the options a chat definition may have, by shape (turnkeep's, AgentsKit's).

pub mod agentskit;
pub mod aisdk;
pub mod controller;
pub mod definition;
pub mod demo;
pub mod input_schema;
pub mod model;
pub mod openai;
pub mod rate_limit;
pub mod settings;

pub use controller::{
    Action, CallResolution, ChatConfig, ChatController, ChatError, ChatState, ChatStatus, IdSource,
    ResolveCallError, SendError, ToolInvocation, ToolOutcome,
};
pub use model::{FinishReason, ModelChunk, ModelRequest, ToolSpec, Usage};
pub use settings::{CallSettings, Setting, ToolChoice};
