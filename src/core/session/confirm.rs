//! Confirmation records (AgentsKit's two-step confirmations) as pure transitions.
//!
//! Approving or rejecting is two CAS saves around the upstream call: first claim a processing
//! state (`approving`, `rejecting`, or `expiring` for a lapsed approval), then call upstream,
//! then finish into the final state. A crash between the steps leaves the processing state in
//! storage, inert, for the host to reconcile; nothing here retries. A record that is not pending
//! is returned unchanged, so replays are idempotent.

use serde_json::{Map, Value};

use super::envelope::{Confirmation, ConfirmationStatus, SessionEnvelope};
use super::lease::{advance_cursor, LeaseError};
use crate::checks::{is_safe_id, safe_add, within_bounds, BOUNDED_JSON};
use crate::limits;

/// Reason passed to the upstream `deny` when an approval came too late. `wire`
pub const CONFIRMATION_EXPIRED_REASON: &str = "confirmation expired";
/// Prefix of the upstream tool call id of a proposal. `wire`
pub const PROPOSAL_TOOL_CALL_PREFIX: &str = "app-";
/// Prefix of a confirmation token. `wire`
pub const CONFIRMATION_TOKEN_PREFIX: &str = "confirm-";

/// The outcome of a confirmation step; the caller commits `Transition` by CAS.
// A decision is built once and moved straight to its one consumer; boxing buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum ConfirmDecision {
    /// Save `envelope` with the loaded cursor as expected cursor; `record` is its new state.
    Transition {
        envelope: SessionEnvelope,
        record: Confirmation,
    },
    /// Nothing to save: the record is already past this step (idempotent replay).
    Unchanged { record: Confirmation },
}

/// What the caller must ask the upstream chat to do after a successful claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpstreamAction {
    Approve,
    /// Deny with the caller's reason.
    Deny,
    /// Deny with `CONFIRMATION_EXPIRED_REASON`.
    DenyExpired,
}

/// A confirmation step that cannot be taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfirmError {
    /// No record has this token.
    UnknownToken(String),
    /// The caller named another session than the envelope's.
    ForeignSession { expected: String, actual: String },
    /// `finish` on a record that was never claimed (still pending).
    NotClaimed { token: String },
    /// A proposal that would break the envelope's limits (bad id, input too large, duplicate,
    /// too many records).
    InvalidProposal(String),
    /// The session cursor cannot advance.
    CursorExhausted,
    /// The claim's lease cannot be written (cursor or expiry past the safe range).
    Lease(LeaseError),
    /// Reconciliation of a record that is pending, or whose continuation still holds a live lease.
    NotStuck {
        token: String,
        status: ConfirmationStatus,
    },
    /// Reconciliation into a status that is not final.
    InvalidResolution(String),
}

impl std::fmt::Display for ConfirmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnknownToken(t) => write!(f, "unknown confirmation token {t:?}"),
            Self::ForeignSession { expected, actual } => {
                write!(
                    f,
                    "confirmation of session {actual:?} used with session {expected:?}"
                )
            }
            Self::NotClaimed { token } => write!(f, "confirmation {token:?} was never claimed"),
            Self::InvalidProposal(detail) => write!(f, "invalid confirmation proposal: {detail}"),
            Self::CursorExhausted => f.write_str("session cursor cannot advance past 2^53-1"),
            Self::Lease(e) => write!(f, "{e}"),
            Self::NotStuck { token, status } => write!(
                f,
                "confirmation {token:?} is {} and not stuck: nothing to reconcile",
                status.as_str()
            ),
            Self::InvalidResolution(detail) => write!(f, "invalid reconciliation: {detail}"),
        }
    }
}

impl std::error::Error for ConfirmError {}

/// A tool call the chat wants a person to confirm.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfirmationProposal {
    /// `^[A-Za-z0-9][A-Za-z0-9._:-]{0,119}$`; the token is `confirm-<suffix>`, the upstream tool
    /// call id `app-<suffix>`.
    pub suffix: String,
    pub action: String,
    pub input: Map<String, Value>,
}

/// Claims approval: `pending` becomes `approving`, or `expiring` when `now_ms >= expiresAt`.
pub fn begin_approve(
    env: &SessionEnvelope,
    session_id: &str,
    token: &str,
    now_ms: u64,
) -> Result<ConfirmDecision, ConfirmError> {
    step(env, session_id, token, now_ms, |record| {
        claim_status(record, true, now_ms).map_or(Step::Keep, Step::To)
    })
}

/// Claims rejection: `pending` becomes `rejecting`. Expiry is not checked (rejecting a lapsed
/// confirmation is harmless).
pub fn begin_reject(
    env: &SessionEnvelope,
    session_id: &str,
    token: &str,
    now_ms: u64,
) -> Result<ConfirmDecision, ConfirmError> {
    step(env, session_id, token, now_ms, |record| {
        claim_status(record, false, now_ms).map_or(Step::Keep, Step::To)
    })
}

/// Finishes a claimed record after the upstream call succeeded: `approving` → `approved`,
/// `rejecting` → `rejected`, `expiring` → `expired`. A final record is returned unchanged.
pub fn finish_confirmation(
    env: &SessionEnvelope,
    session_id: &str,
    token: &str,
    now_ms: u64,
) -> Result<ConfirmDecision, ConfirmError> {
    step(env, session_id, token, now_ms, |record| {
        match (record.status, final_status(record.status)) {
            (ConfirmationStatus::Pending, _) => Step::Refuse,
            (_, Some(status)) => Step::To(status),
            (_, None) => Step::Keep,
        }
    })
}

/// The processing state a decision claims for a `pending` record: `approving` (or `expiring`
/// once `now_ms >= expiresAt`) for an approval, `rejecting` for a rejection (expiry is not
/// checked: rejecting a lapsed confirmation is harmless). `None` when the record is not pending.
pub fn claim_status(
    record: &Confirmation,
    approve: bool,
    now_ms: u64,
) -> Option<ConfirmationStatus> {
    match record.status {
        ConfirmationStatus::Pending if !approve => Some(ConfirmationStatus::Rejecting),
        ConfirmationStatus::Pending if now_ms >= record.expires_at => {
            Some(ConfirmationStatus::Expiring)
        }
        ConfirmationStatus::Pending => Some(ConfirmationStatus::Approving),
        _ => None,
    }
}

/// The final state a processing state finishes in: `approving` → `approved`, `rejecting` →
/// `rejected`, `expiring` → `expired`. `None` for `pending` and for final states.
pub fn final_status(status: ConfirmationStatus) -> Option<ConfirmationStatus> {
    match status {
        ConfirmationStatus::Approving => Some(ConfirmationStatus::Approved),
        ConfirmationStatus::Rejecting => Some(ConfirmationStatus::Rejected),
        ConfirmationStatus::Expiring => Some(ConfirmationStatus::Expired),
        _ => None,
    }
}

/// The upstream call that belongs to a claimed processing state.
pub fn upstream_action(status: ConfirmationStatus) -> Option<UpstreamAction> {
    match status {
        ConfirmationStatus::Approving => Some(UpstreamAction::Approve),
        ConfirmationStatus::Rejecting => Some(UpstreamAction::Deny),
        ConfirmationStatus::Expiring => Some(UpstreamAction::DenyExpired),
        _ => None,
    }
}

/// Adds a proposal's record: `pending` when upstream marked the tool call
/// `requires_confirmation`, otherwise `rejected`; it expires at `now_ms + ttl_ms`.
pub fn propose_confirmation(
    env: &SessionEnvelope,
    proposal: ConfirmationProposal,
    upstream_requires_confirmation: bool,
    now_ms: u64,
    ttl_ms: u64,
) -> Result<(SessionEnvelope, Confirmation), ConfirmError> {
    let record = proposal_record(proposal, upstream_requires_confirmation, now_ms, ttl_ms)?;
    if env.confirmations.len() >= limits::CONFIRMATIONS_MAX {
        return Err(ConfirmError::InvalidProposal(format!(
            "the session already holds {} confirmations",
            limits::CONFIRMATIONS_MAX
        )));
    }
    if env
        .confirmations
        .iter()
        .any(|c| c.token == record.token || c.tool_call_id == record.tool_call_id)
    {
        return Err(ConfirmError::InvalidProposal(format!(
            "token {:?} is already used",
            record.token
        )));
    }
    let mut next = advance_cursor(env, now_ms).map_err(cursor_exhausted)?;
    next.confirmations.push(record.clone());
    Ok((next, record))
}

/// What a step does with the record it found.
enum Step {
    To(ConfirmationStatus),
    Keep,
    Refuse,
}

fn step(
    env: &SessionEnvelope,
    session_id: &str,
    token: &str,
    now_ms: u64,
    decide: impl Fn(&Confirmation) -> Step,
) -> Result<ConfirmDecision, ConfirmError> {
    if env.session_id != session_id {
        return Err(ConfirmError::ForeignSession {
            expected: session_id.to_owned(),
            actual: env.session_id.clone(),
        });
    }
    let index = env
        .confirmations
        .iter()
        .position(|c| c.token == token)
        .ok_or_else(|| {
            ConfirmError::UnknownToken(token.chars().take(limits::SAFE_ID_CHARS_MAX).collect())
        })?;
    let record = &env.confirmations[index];
    match decide(record) {
        Step::Keep => Ok(ConfirmDecision::Unchanged {
            record: record.clone(),
        }),
        Step::Refuse => Err(ConfirmError::NotClaimed {
            token: record.token.clone(),
        }),
        Step::To(status) => {
            let mut envelope = advance_cursor(env, now_ms).map_err(cursor_exhausted)?;
            envelope.confirmations[index].status = status;
            let record = envelope.confirmations[index].clone();
            Ok(ConfirmDecision::Transition { envelope, record })
        }
    }
}

/// `advance_cursor` fails only when the cursor is exhausted.
fn cursor_exhausted(_: LeaseError) -> ConfirmError {
    ConfirmError::CursorExhausted
}

fn proposal_record(
    proposal: ConfirmationProposal,
    upstream_requires_confirmation: bool,
    now_ms: u64,
    ttl_ms: u64,
) -> Result<Confirmation, ConfirmError> {
    let invalid = |d: String| ConfirmError::InvalidProposal(d);
    if !is_safe_id(&proposal.suffix)
        || proposal.suffix.len() > limits::CONFIRMATION_SUFFIX_CHARS_MAX
    {
        return Err(invalid(format!(
            "suffix {:?} is not a SafeId of at most {} characters",
            proposal.suffix,
            limits::CONFIRMATION_SUFFIX_CHARS_MAX
        )));
    }
    if !is_safe_id(&proposal.action) {
        return Err(invalid(format!(
            "action {:?} is not a SafeId",
            proposal.action
        )));
    }
    let input = Value::Object(proposal.input);
    if !within_bounds(&input, &BOUNDED_JSON) {
        return Err(invalid("input exceeds the bounded-JSON limits".into()));
    }
    let expires_at =
        safe_add(now_ms, ttl_ms).ok_or_else(|| invalid("expiry is beyond 2^53-1 ms".into()))?;
    let Value::Object(input) = input else {
        return Err(invalid("input must be a plain object".into()));
    };
    Ok(Confirmation {
        token: format!("{CONFIRMATION_TOKEN_PREFIX}{}", proposal.suffix),
        action: proposal.action,
        input,
        tool_call_id: format!("{PROPOSAL_TOOL_CALL_PREFIX}{}", proposal.suffix),
        expires_at,
        status: if upstream_requires_confirmation {
            ConfirmationStatus::Pending
        } else {
            ConfirmationStatus::Rejected
        },
    })
}
