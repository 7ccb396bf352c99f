//! Session envelope v1 (+ v0 migration), resume rules, turn lease, terminal history and
//! confirmations, as AgentsKit's `agentskit.chat.session` v1 defines them.
//!
//! Everything here is pure: the caller loads the stored value, calls one of these functions
//! with `now_ms`, and commits the returned envelope with a single CAS save
//! (`turnkeep_ports::session::SessionStorage`). The flow of one turn:
//! `resume_session` → `claim_turn` → save → (`record_journal` → save)* → `release_turn` → save
//! (`journal.rs`: how a retry of a crashed turn replays what it recorded instead of running its
//! tools again).
//! A turn that leaves tool calls waiting for a person releases with [`settle_turn`], which adds
//! their confirmation records; [`claim_resolution`] and [`settle_turn`] resolve one
//! (`resolution.rs` has the life of a record).

mod confirm;
mod conversation;
mod decode;
mod envelope;
mod fence;
mod journal;
mod lease;
mod resolution;
mod resume;
mod send;
mod write;

pub use confirm::{
    begin_approve, begin_reject, claim_status, final_status, finish_confirmation,
    propose_confirmation, upstream_action, ConfirmDecision, ConfirmError, ConfirmationProposal,
    UpstreamAction, CONFIRMATION_EXPIRED_REASON, CONFIRMATION_TOKEN_PREFIX,
    PROPOSAL_TOOL_CALL_PREFIX,
};
pub use conversation::{ChartRoute, ConversationChart};
pub use decode::{
    decode_confirmations, decode_session_snapshot, SessionDecodeCode, SessionDecodeError,
};
pub use envelope::{
    ActiveTurn, Confirmation, ConfirmationStatus, Conversation, Decision, DecisionKind,
    QueuedTurn, SessionEnvelope, TerminalTurn, TurnOutcome, SESSION_PROTOCOL, SESSION_VERSION,
};
pub use fence::check_fence;
pub use journal::{
    journal_of, record_journal, replay_history, tool_idempotency_key, HistoryMismatch,
    JournalError, TurnJournal,
};
pub use lease::{
    abandon_turn, advance_cursor, claim_turn, lapse_turn, release_turn, ClaimDecision, LeaseError,
};
pub use resolution::{
    abandon_resolution, claim_resolution, confirmation_action, confirmation_token,
    reconcile_confirmation, records_for_waiting_calls, settle_turn, stuck_confirmations,
    Reconciled, ResolutionClaim, TurnSettlement,
};
pub use resume::{new_session, resume_session, ResumeError, Resumed, SessionIdentity};
pub use send::{
    decide_send, leave_queue, rebase_on_queue, Joined, SendDecision, SendPolicy, SendRequest,
};
pub use write::{
    check_reread, check_write, ReadViolation, SessionWrite, WriteKind, WriteViolation,
};
