//! Confirmations of chat turns: the records a turn leaves for its waiting tool calls, and their
//! resolution over HTTP as pure transitions (README.md, "Tool confirmations").
//!
//! The life of one record, each step one CAS save of the whole envelope:
//! 1. A turn ends with calls waiting for a person: its release ([`settle_turn`]) also adds one
//!    `pending` record per call, `token = confirm-<toolCallId>`. No lease is held while a
//!    person decides.
//! 2. `client.confirmation.resolve`: [`claim_resolution`] moves the record to `approving`
//!    (`expiring` past its expiry) or `rejecting` **and** takes the turn lease for the
//!    continuation, whose turn id is the token, in the same write. Exactly one request wins it;
//!    every other one finds the record no longer pending and answers with its state.
//! 3. The continuation runs like any turn (the tool only on approve) and its release
//!    ([`settle_turn`]) moves the record to `approved` / `rejected` / `expired`.
//!
//! A crash between 2 and 3 leaves the record in its processing state with a lease that lapses:
//! [`stuck_confirmations`] lists such records and [`reconcile_confirmation`] finishes them by
//! CAS. Nothing here retries or runs a tool; a processing record is never claimed again, which
//! is what makes the tool run at most once per token.

use super::confirm::{claim_status, final_status, ConfirmError, CONFIRMATION_TOKEN_PREFIX};
use super::envelope::{Confirmation, ConfirmationStatus, SessionEnvelope, TurnOutcome};
use super::lease::{abandon_turn, advance_cursor, claim_turn, release_turn, ClaimDecision};
use super::LeaseError;
use crate::chat::controller::is_confirmable_id;
use crate::checks::{is_safe_id, safe_add, within_bounds, BOUNDED_JSON};
use crate::limits::CONFIRMATIONS_MAX;
use crate::protocol::ToolCall;

/// The token of the confirmation of tool call `call_id` (a SafeId when the id is confirmable,
/// see [`is_confirmable_id`]). It is also the turn id of the continuation that resolves it.
pub fn confirmation_token(call_id: &str) -> String {
    format!("{CONFIRMATION_TOKEN_PREFIX}{call_id}")
}

/// A record's `action` (a SafeId) for a tool name (`[A-Za-z0-9_-]{1,64}`): the name itself, or
/// `tool:<name>` for a name that starts with `_` or `-` (tool names hold no `:`, so different
/// tools never share an action).
pub fn confirmation_action(tool_name: &str) -> String {
    if is_safe_id(tool_name) {
        tool_name.to_owned()
    } else {
        format!("tool:{tool_name}")
    }
}

/// The `pending` records for `calls` (the calls waiting for a person at a turn's end) that have
/// none yet, expiring at `now_ms + ttl_ms`. A call whose id or arguments cannot be bound to a
/// record (the controller prevents both) is skipped.
pub fn records_for_waiting_calls(
    env: &SessionEnvelope,
    calls: &[&ToolCall],
    now_ms: u64,
    ttl_ms: u64,
) -> Vec<Confirmation> {
    let Some(expires_at) = safe_add(now_ms, ttl_ms) else {
        return Vec::new();
    };
    let mut records: Vec<Confirmation> = Vec::new();
    for call in calls {
        let token = confirmation_token(&call.id);
        let known = env
            .confirmations
            .iter()
            .chain(records.iter())
            .any(|c| c.token == token || c.tool_call_id == call.id);
        let action = confirmation_action(&call.name);
        let input = serde_json::Value::Object(call.args.clone());
        if known
            || !is_confirmable_id(&call.id)
            || !is_safe_id(&action)
            || !within_bounds(&input, &BOUNDED_JSON)
        {
            continue;
        }
        records.push(Confirmation {
            token,
            action,
            input: call.args.clone(),
            tool_call_id: call.id.clone(),
            expires_at,
            status: ConfirmationStatus::Pending,
        });
    }
    records
}

/// What a `client.confirmation.resolve` may do with the session.
// Built once and moved straight to its one consumer; boxing buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum ResolutionClaim {
    /// CAS-save `envelope` on the loaded cursor: `record` is claimed (`approving`, `rejecting` or
    /// `expiring`) and the continuation (turn id = token) holds the lease.
    Claimed {
        envelope: SessionEnvelope,
        record: Confirmation,
    },
    /// The record is not pending (another request claimed it, or it is final): nothing to save;
    /// answer with its state.
    Settled { record: Confirmation },
    /// A turn holds the session (a token it may be about to store is unknown until then);
    /// nothing changed (retry later).
    Busy,
}

/// Decides a resolution of `token` (`approve`, or reject) at `now_ms`.
pub fn claim_resolution(
    env: &SessionEnvelope,
    token: &str,
    approve: bool,
    now_ms: u64,
    lease_ms: u64,
) -> Result<ResolutionClaim, ConfirmError> {
    let live_lease = env
        .active_turn
        .as_ref()
        .is_some_and(|a| a.expires_at > now_ms);
    let (index, record) = match find(env, token) {
        Ok(found) => found,
        // The turn that holds the session may be the one proposing it: its snapshot can reach a
        // client a moment before its release stores the record. Busy (retry), not unknown.
        Err(ConfirmError::UnknownToken(_)) if live_lease => return Ok(ResolutionClaim::Busy),
        Err(e) => return Err(e),
    };
    let Some(status) = claim_status(record, approve, now_ms) else {
        return Ok(ResolutionClaim::Settled {
            record: record.clone(),
        });
    };
    match claim_turn(env, token, now_ms, lease_ms).map_err(ConfirmError::Lease)? {
        ClaimDecision::Busy { .. } => Ok(ResolutionClaim::Busy),
        // The continuation already ran although the record is pending (it was put back by
        // hand): refuse to run it again.
        ClaimDecision::Replayed { .. } => Ok(ResolutionClaim::Settled {
            record: record.clone(),
        }),
        ClaimDecision::Claimed(mut envelope) => {
            envelope.confirmations[index].status = status;
            let record = envelope.confirmations[index].clone();
            Ok(ResolutionClaim::Claimed { envelope, record })
        }
    }
}

/// What a turn's release writes besides the lease and the terminal history.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TurnSettlement<'a> {
    pub outcome: TurnOutcome,
    /// The token a continuation resolved: its processing record becomes final.
    pub resolved: Option<&'a str>,
    /// New `pending` records ([`records_for_waiting_calls`]).
    pub proposed: &'a [Confirmation],
}

/// The release of a turn as one envelope: the lease cleared and the outcome recorded
/// ([`release_turn`]), the resolved record finished, the proposed records added. Final records
/// make room for new ones, oldest first; a proposal that still does not fit is returned in
/// `refused` (its call then has no record and cannot be approved; the caller reports it).
pub fn settle_turn(
    env: &SessionEnvelope,
    turn_id: &str,
    settlement: TurnSettlement<'_>,
    now_ms: u64,
) -> Result<(SessionEnvelope, Vec<Confirmation>), LeaseError> {
    let mut next = release_turn(env, turn_id, settlement.outcome, now_ms)?;
    if let Some(token) = settlement.resolved {
        if let Some(record) = next.confirmations.iter_mut().find(|c| c.token == token) {
            if let Some(done) = final_status(record.status) {
                record.status = done;
            }
        }
    }
    let mut refused = Vec::new();
    for record in settlement.proposed {
        let known = next
            .confirmations
            .iter()
            .any(|c| c.token == record.token || c.tool_call_id == record.tool_call_id);
        if known {
            continue;
        }
        if next.confirmations.len() >= CONFIRMATIONS_MAX {
            match next.confirmations.iter().position(|c| c.status.is_final()) {
                Some(oldest_final) => drop(next.confirmations.remove(oldest_final)),
                None => {
                    refused.push(record.clone());
                    continue;
                }
            }
        }
        next.confirmations.push(record.clone());
    }
    Ok((next, refused))
}

/// Gives a claim of `turn_id` up before its turn ran anything (its messages could not be
/// loaded, the call no longer waits): the lease is cleared ([`abandon_turn`]), and when the turn
/// is a continuation (its id is the token of a record in a processing state) the record goes
/// back to `pending`, so the decision may be sent again. Safe because the tool has not run.
pub fn abandon_resolution(
    env: &SessionEnvelope,
    turn_id: &str,
    now_ms: u64,
) -> Result<SessionEnvelope, LeaseError> {
    let mut next = abandon_turn(env, turn_id, now_ms)?;
    if let Some(record) = next.confirmations.iter_mut().find(|c| c.token == turn_id) {
        if record.status.is_processing() {
            record.status = ConfirmationStatus::Pending;
        }
    }
    Ok(next)
}

/// The records left in a processing state by a continuation that no longer runs: no live lease
/// of their continuation holds the session at `now_ms`.
pub fn stuck_confirmations(env: &SessionEnvelope, now_ms: u64) -> Vec<Confirmation> {
    env.confirmations
        .iter()
        .filter(|c| c.status.is_processing() && !continuation_live(env, &c.token, now_ms))
        .cloned()
        .collect()
}

/// What reconciling a record decided.
// Built once and moved straight to its one consumer; boxing buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Reconciled {
    /// CAS-save `envelope` on the loaded cursor; `record` is final.
    Transition {
        envelope: SessionEnvelope,
        record: Confirmation,
    },
    /// The record is final already (idempotent).
    Unchanged { record: Confirmation },
}

/// Finishes a stuck record: into `to` (a final status the host chose, e.g. `rejected` when it
/// knows the tool never ran), or by default the final status of its processing state
/// (`approving` → `approved`: the continuation got as far as its claim, so the tool may have
/// run; it is never run again). A lapsed lease of its continuation is cleared.
pub fn reconcile_confirmation(
    env: &SessionEnvelope,
    token: &str,
    to: Option<ConfirmationStatus>,
    now_ms: u64,
) -> Result<Reconciled, ConfirmError> {
    let (index, record) = find(env, token)?;
    if record.status.is_final() {
        return Ok(Reconciled::Unchanged {
            record: record.clone(),
        });
    }
    if record.status == ConfirmationStatus::Pending || continuation_live(env, token, now_ms) {
        return Err(ConfirmError::NotStuck {
            token: record.token.clone(),
            status: record.status,
        });
    }
    let target = match to {
        Some(status) if status.is_final() => status,
        Some(status) => {
            return Err(ConfirmError::InvalidResolution(format!(
                "{} is not a final status",
                status.as_str()
            )))
        }
        None => final_status(record.status).unwrap_or(record.status),
    };
    let mut envelope = advance_cursor(env, now_ms).map_err(ConfirmError::Lease)?;
    if envelope
        .active_turn
        .as_ref()
        .is_some_and(|a| a.turn_id == token)
    {
        envelope.active_turn = None;
    }
    envelope.confirmations[index].status = target;
    let record = envelope.confirmations[index].clone();
    Ok(Reconciled::Transition { envelope, record })
}

/// True while the continuation of `token` holds a live lease.
fn continuation_live(env: &SessionEnvelope, token: &str, now_ms: u64) -> bool {
    env.active_turn
        .as_ref()
        .is_some_and(|a| a.turn_id == token && a.expires_at > now_ms)
}

fn find<'a>(
    env: &'a SessionEnvelope,
    token: &str,
) -> Result<(usize, &'a Confirmation), ConfirmError> {
    env.confirmations
        .iter()
        .enumerate()
        .find(|(_, c)| c.token == token)
        .ok_or_else(|| {
            ConfirmError::UnknownToken(
                token
                    .chars()
                    .take(crate::limits::SAFE_ID_CHARS_MAX)
                    .collect(),
            )
        })
}
