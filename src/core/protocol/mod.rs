//! Turn protocol v1, wire-compatible with AgentsKit Chat (`agentskit.chat.turn`).
//!
//! - [`message`]: the chat message wire format carried by snapshots.
//! - [`field`]: the precise field-level errors every decoder here returns.

pub mod field;
pub mod message;

pub use field::FieldError;
pub use message::{
    decode_messages, message_to_value, messages_to_value, FilePart, ImageDetail, ImagePart,
    MediaPart, Message, MessageStatus, MessagesError, Part, Role, ToolCall, ToolCallStatus,
};
