//! Turn protocol v1, wire-compatible with AgentsKit Chat (`agentskit.chat.turn`).
//!
//! - [`event`]: the envelope and the three v1 events (submit, snapshot, diagnostic).
//! - [`decode`] / [`encode`]: the codec, with the reference decoder's diagnostic order.
//! - [`message`]: the chat message wire format carried by snapshots.
//! - [`diagnostic`]: TurnDiagnostic and the one table of boundary failures.
//! - [`cursor`]: the client's snapshot cursor (first snapshot, then strictly newer only).
//! - [`submit`]: the user's whole message on a submit (turnkeep's additive `payload.message`).
//! - [`field`]: the precise field-level errors every decoder here returns.
//! - [`component`], [`content`]: component frames (`agentskit.chat.component`) and the ordered
//!   assistant content envelope (`agentskit.chat.content`) that carries them.

pub mod component;
pub mod content;
pub mod cursor;
pub mod decode;
pub mod diagnostic;
pub mod encode;
pub mod event;
pub mod field;
pub mod message;
pub mod request;
pub mod submit;

pub use cursor::{CursorDecision, IgnoreReason, TurnSnapshotCursor};
pub use decode::{decode_turn_event, decode_turn_event_text, DecodeCode, DecodeDiagnostic};
pub use diagnostic::{
    is_diagnostic_code, BoundaryError, BoundaryRow, ExtendedDiagnostic, TurnDiagnostic,
    DIAGNOSTIC_VERSION,
};
pub use encode::{
    encode_turn_event, encode_turn_event_line, write_snapshot_tail, SnapshotHead, SnapshotParts,
};
pub use event::{
    Envelope, EventBody, EventKind, Lineage, LineageSource, SnapshotPayload, TurnEvent, TurnStatus,
    Usage, TURN_PROTOCOL, TURN_PROTOCOL_VERSION,
};
pub use field::FieldError;
pub use message::{
    decode_messages, message_to_value, messages_to_value, FilePart, ImageDetail, ImagePart,
    MediaPart, Message, MessageStatus, MessagesError, Part, Role, ToolCall, ToolCallStatus,
};
pub use request::{decode_client_request, resolve_answer, ClientRequest, RequestKind};
