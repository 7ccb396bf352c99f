//! The lines of the sender's NDJSON response: full `server.turn.snapshot` events built from the
//! controller's state when a reader takes one (design §3 step 6), and the closing diagnostic.

use crate::core::chat::controller::{ChatState, ChatStatus};
use crate::core::checks::format_iso_millis_at;
use crate::core::protocol::{
    encode_turn_event_line, BoundaryError, Envelope, EventBody, Lineage, SnapshotPayload,
    TurnDiagnostic, TurnEvent, TurnStatus, Usage,
};
use crate::core::sequence::{CursorTooLarge, TurnSequencer};
use crate::core::session::Confirmation;
use crate::ports::chat::{Clock, Ids};

/// One line of the response body, encoded when a reader takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line {
    /// The controller's state as it is at that moment.
    State,
    /// The line that closes a response after a failure or an interruption.
    Diagnostic(BoundaryError),
}

/// Encodes this turn's lines with their sequences (`claim_cursor × stride + index`).
#[derive(Debug)]
pub struct LineEncoder {
    session_id: String,
    turn_id: String,
    sequencer: TurnSequencer,
}

impl LineEncoder {
    /// For the turn whose claim wrote `claim_cursor`.
    pub fn new(session_id: &str, turn_id: &str, claim_cursor: u64) -> Result<Self, CursorTooLarge> {
        Ok(Self {
            session_id: session_id.to_owned(),
            turn_id: turn_id.to_owned(),
            sequencer: TurnSequencer::new(claim_cursor)?,
        })
    }

    /// The NDJSON line for `line`, or `None` when an intermediate snapshot has no sequence left
    /// (a newer one follows; the last line always has one). `confirmations` go into a snapshot
    /// as they are (see [`snapshot_payload`]).
    pub fn encode(
        &mut self,
        line: Line,
        is_last: bool,
        state: &ChatState,
        confirmations: &[Confirmation],
        clock: &dyn Clock,
        ids: &dyn Ids,
    ) -> Option<String> {
        let sequence = if is_last {
            Some(self.sequencer.next_final())
        } else {
            self.sequencer.next_intermediate()
        }?;
        let envelope = Envelope {
            event_id: ids.event_id(),
            session_id: self.session_id.clone(),
            turn_id: self.turn_id.clone(),
            sequence,
            emitted_at: format_iso_millis_at(clock.now_ms()),
        };
        let body = match line {
            Line::State => EventBody::Snapshot(snapshot_payload(state, confirmations)),
            Line::Diagnostic(error) => EventBody::Diagnostic(in_stream(error)),
        };
        Some(encode_turn_event_line(&TurnEvent { envelope, body }))
    }
}

/// The snapshot payload of a state: its messages, status, usage and error, and the session's
/// confirmations the turn shows (its [`crate::turn::Turn::confirmations`]).
pub fn snapshot_payload(state: &ChatState, confirmations: &[Confirmation]) -> SnapshotPayload {
    let status = match state.status {
        ChatStatus::Error => TurnStatus::Error,
        ChatStatus::Streaming => TurnStatus::Streaming,
        _ if state.messages.is_empty() => TurnStatus::Idle,
        _ => TurnStatus::Complete,
    };
    SnapshotPayload {
        messages: state.messages.clone(),
        status,
        usage: Usage {
            prompt_tokens: state.usage.prompt_tokens,
            completion_tokens: state.usage.completion_tokens,
            total_tokens: state.usage.total_tokens,
        },
        error: state
            .error
            .map(|_| BoundaryError::ChatTurnFailed.diagnostic()),
        lineage: Some(Lineage::Submit),
        confirmations: confirmations.to_vec(),
    }
}

/// In-stream diagnostics are always retryable (the response had already started).
fn in_stream(error: BoundaryError) -> TurnDiagnostic {
    TurnDiagnostic {
        retryable: true,
        ..error.diagnostic()
    }
}
