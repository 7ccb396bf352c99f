//! The chat controller and what it exchanges with the world.
//!
//! - [`model`]: model requests and streamed chunks, tool specs, usage — the vocabulary shared
//!   by the controller and every model adapter, so the core needs no port to speak of them.
//! - [`controller`]: the turn state machine: inputs in, the next [`Action`] out.
//! - [`demo`]: the deterministic demo model and its two tools, as pure scripts.
//! - [`openai`]: pure translation to and from an OpenAI-compatible streaming endpoint.
//! - [`agentskit`]: the chunks an AgentsKit adapter streams, as [`ModelChunk`]s.

pub mod agentskit;
pub mod controller;
pub mod demo;
pub mod model;
pub mod openai;

pub use controller::{
    Action, CallResolution, ChatConfig, ChatController, ChatError, ChatState, ChatStatus, IdSource,
    ResolveCallError, SendError, ToolInvocation, ToolOutcome,
};
pub use model::{FinishReason, ModelChunk, ModelRequest, ToolSpec, Usage};
