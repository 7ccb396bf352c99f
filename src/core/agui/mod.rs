//! AG-UI's run wire (the protocol TanStack AI's client, CopilotKit and assistant-ui speak), for
//! the same chat pipeline and session log:
//!
//! - [`request`]: a `RunAgentInput` (`{ threadId, runId, messages, tools, state,
//!   forwardedProps, resume? }`) decoded into a turn of the session: thread id = session id,
//!   run id = turn id, the user's message with the client's id, `resume[]` entries as
//!   confirmation decisions;
//! - [`hydrate`]: what a TanStack client restores from a session (`hydrate(threadId)` →
//!   `{ messages, activeRun, interrupts }`) and the chunks that rebuild a running turn's answer
//!   for a client that joins it late (`joinRun`), both from the log's one projection.
//!
//! - [`events`]: one run of the log as strict AG-UI events, the answer of a `RunAgentInput` to a
//!   client that reads it (`HttpAgent`).
//!
//! The log itself already holds AG-UI events (`core::projection::chunks`): TanStack's client,
//! following it live, reads them as they are.

pub mod events;
pub mod hydrate;
pub mod request;

pub use events::{prefers_json, AgUiStream};
pub use hydrate::{hydration, RunJoin};
pub use request::{decode_run_input, decode_transport_send, is_run_input};
