//! The session log's one projection (one reducer per concern: nothing else reads a log): chunks in, `{ messages, renderParts }` out, the same compiled code for
//! server rendering, the session view and the live browser client.
//!
//! - [`chunks`]: the chunk vocabulary (TanStack AI / AG-UI events plus turnkeep's additive
//!   fields), constructors and recognizers.
//! - [`reduce`]: [`Projection`], the incremental reducer.
//! - [`render`]: render parts (message text and tool cards) from the projected messages.
//! - [`encode`]: the inverse, controller states → chunks, checked against the same reducer.
//! - [`confirmations`]: the tool confirmations a log shows (tokens and states).
//! - [`html`]: render parts as markup (server-rendered first paint and the live page alike).
//! - [`identity`]: the session and definition revision a renderer was prepared for, and the
//!   chunks and snapshots it refuses.

pub mod chunks;
pub mod confirmations;
pub mod encode;
pub mod html;
pub mod identity;
pub mod native;
pub mod reduce;
pub mod render;

pub use confirmations::LogConfirmation;
pub use encode::{merge_queued, TurnEncoder};
pub use identity::{Identity, IdentityMismatch};
pub use reduce::Projection;
pub use render::{render_parts, RenderPart};
