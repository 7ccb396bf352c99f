//! The AI SDK's UI message stream protocol (`ai` 7: `useChat`, `DefaultChatTransport`,
//! assistant-ui and AI Elements sit on it), as a second wire of the same chat pipeline:
//!
//! - [`request`]: what the stock transport POSTs (`{ id, messages: UIMessage[], trigger,
//!   messageId, …body }`), decoded into a turn of the session (a user message sent, a
//!   regeneration, or tool approvals answered);
//! - [`messages`]: a conversation as `UIMessage[]` (first paint, and the state a resumed stream
//!   rebuilds), one UI assistant message per turn;
//! - [`chunks`]: the one mapping from a session log's chunks to UI message chunks, used by a
//!   turn's own answer (its chunks come from the same encoder the log is written with), by the
//!   resume route and by the browser transport;
//! - [`sse`]: the framing (`data: <chunk>\n\n`, then `data: [DONE]\n\n`) and the headers.
//!
//! What the client requires of a stream (AI SDK 7, `processUIMessageStream`): a `text-delta`
//! follows its `text-start`; a `tool-approval-request` or `tool-output-*` names a tool part the
//! message already has; a continuation keeps the assistant message's id (a new one makes the
//! client add a duplicate message); an `error` chunk puts the chat in its error state. Unknown
//! keys pass its schema, a missing required field fails the turn.

pub mod chunks;
pub mod messages;
pub mod request;
pub mod sse;

pub use chunks::UiStream;
pub use messages::{run_answer, turn_answer, ui_messages, ToolConfirmations};
pub use request::{
    decode_ui_request, ui_route, Approval, UiRequest, UiRequestError, UiRoute, UiTurn,
};
