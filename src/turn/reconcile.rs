//! Crash safety for confirmations, for the host: a continuation that crashed (or whose release
//! failed) between its claim and its release leaves its record in a processing state
//! (`approving`, `rejecting`, `expiring`) once its lease lapsed. [`list_stuck`] finds such
//! records; [`reconcile`] finishes one by CAS (by default into the final state of its processing
//! state; the host may choose another final state when it knows better, e.g. `rejected` when its
//! tool's own records show the effect never happened). Neither ever runs a tool: a record that
//! was claimed is never claimed again, so the tool ran at most once.

use super::admit::load;
use super::commit::{commit_session, SaveFailure, Saved, WriteBudget};
use super::context::{ChatSetup, Ports, TurnLimits};
use super::fault::{Refusal, Stage};
use super::interrupt::Interrupt;
use turnkeep_core::limits::CONFIRMATION_CLAIM_ATTEMPTS_MAX;
use turnkeep_core::protocol::BoundaryError;
use turnkeep_core::session::{
    reconcile_confirmation, stuck_confirmations, ConfirmError, Confirmation, ConfirmationStatus,
    Reconciled, SessionWrite, WriteKind,
};
use turnkeep_ports::PortError;

/// Why a reconciliation was refused (besides the refusals loading a session can give).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReconcileError {
    /// The session has no record with this token.
    NotFound,
    /// The record is pending, or its continuation still holds a live lease.
    NotStuck(ConfirmationStatus),
    /// The requested status is not a final one.
    InvalidResolution,
    /// Loading or saving the session failed, or other writers kept winning.
    Refused(Refusal),
}

impl From<Refusal> for ReconcileError {
    fn from(refusal: Refusal) -> Self {
        ReconcileError::Refused(refusal)
    }
}

/// The session's stuck confirmations (see the module doc).
pub async fn list_stuck(
    ports: &Ports,
    chat: &ChatSetup,
    session_id: &str,
    deadline: &Interrupt,
) -> Result<Vec<Confirmation>, Refusal> {
    let loaded = load(ports, chat, session_id, deadline).await?;
    Ok(stuck_confirmations(
        &loaded.resumed.envelope,
        ports.clock.now_ms(),
    ))
}

/// Finishes the stuck record `token` into `to` (or its natural final state) and returns it; a
/// record that is final already is returned as it is.
pub async fn reconcile(
    ports: &Ports,
    chat: &ChatSetup,
    session_id: &str,
    token: &str,
    to: Option<ConfirmationStatus>,
    limits: &TurnLimits,
    deadline: &Interrupt,
) -> Result<Confirmation, ReconcileError> {
    let mut seen = None;
    for _attempt in 0..CONFIRMATION_CLAIM_ATTEMPTS_MAX {
        let loaded = load(ports, chat, session_id, deadline).await?;
        loaded.check_after(&mut seen)?;
        let now_ms = ports.clock.now_ms();
        let decided = reconcile_confirmation(&loaded.resumed.envelope, token, to, now_ms);
        let (envelope, record) = match decided {
            Ok(Reconciled::Unchanged { record }) => return Ok(record),
            Ok(Reconciled::Transition { envelope, record }) => (envelope, record),
            Err(ConfirmError::UnknownToken(_)) => return Err(ReconcileError::NotFound),
            Err(ConfirmError::NotStuck { status, .. }) => {
                return Err(ReconcileError::NotStuck(status))
            }
            Err(ConfirmError::InvalidResolution(_)) => {
                return Err(ReconcileError::InvalidResolution)
            }
            Err(e) => {
                let cause = PortError::new(e.to_string());
                return Err(Refusal::internal(Stage::SessionResume, cause).into());
            }
        };
        let kind = WriteKind::Release {
            turn_id: token.to_owned(),
        };
        let expected = loaded.resumed.expected_cursor;
        let base = &loaded.resumed.envelope;
        let write = SessionWrite::on_loaded(kind, base, expected, envelope, now_ms);
        let session = ports.session(limits);
        let saved = commit_session(&session, write, WriteBudget::Deadline(deadline)).await;
        let written = saved.map_err(SaveFailure::into_refusal)? == Saved::Written;
        if written {
            return Ok(record);
        }
    }
    Err(Refusal::from(BoundaryError::SessionBusy).into())
}
