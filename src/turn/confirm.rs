//! `client.confirmation.resolve`: a person's decision about a tool call that waits for them,
//! host-independent (the shell only reads the request and writes the answer). The record's life
//! is in `core::session::resolution`; this is the I/O around it:
//!
//! 1. load and resume the session (as a turn's admission does);
//! 2. decide ([`claim_resolution`]): an unknown token is `CONFIRMATION_NOT_FOUND`; a record that
//!    is no longer pending is answered with its state, after waiting (bounded) for a processing
//!    record to become final; a session held by a running turn is `SESSION_BUSY`;
//! 3. write the claim (record → `approving` / `rejecting` / `expiring`, lease → the
//!    continuation, turn id = token) with one CAS. A lost race is read again (bounded): it was
//!    most likely another decision of the same record, whose state is then the answer;
//! 4. the winner opens the continuation: the saved conversation, the controller continued at
//!    the call ([`ChatController::resolve_call`]). The shell runs it with [`super::run`] like any
//!    turn (stream, session log, release), and its release finishes the record.
//!
//! Nothing before step 4 runs a tool, and step 3 is the only way to step 4: of any number of
//! concurrent decisions exactly one CAS wins, and a processing record is never claimed again.

use std::rc::Rc;

use super::admit::{abandon, load, write_claim, Claim};
use super::commit::{commit_session, SaveFailure, Saved, WriteBudget};
use super::context::{ChatSetup, Ports, Submission, TurnLimits};
use super::fault::{Refusal, Stage};
use super::interrupt::Interrupt;
use super::lease::HeldLease;
use super::open::{controller_over_history, Opened};
use super::race::{fired, race, Either};
use super::Turn;
use turnkeep_core::chat::controller::{CallResolution, ChatController, ResolveCallError};
use turnkeep_core::limits::{
    CONFIRMATION_CLAIM_ATTEMPTS_MAX, CONFIRMATION_SETTLE_POLL_MS, CONFIRMATION_SETTLE_POLL_MS_MAX,
    CONFIRMATION_SETTLE_WAIT_MS_MAX,
};
use turnkeep_core::protocol::BoundaryError;
use turnkeep_core::session::{
    claim_resolution, decode_session_snapshot, ConfirmError, Confirmation, ConfirmationStatus,
    ResolutionClaim, TurnOutcome, TurnSettlement,
};
use turnkeep_ports::PortError;

/// A validated `client.confirmation.resolve`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolveRequest {
    pub session_id: String,
    pub token: String,
    pub approve: bool,
    /// A rejection's reason, which the model reads.
    pub reason: Option<String>,
}

/// What a resolution came to.
pub enum Resolution {
    /// This request won the decision: run the continuation with [`super::run`] and stream it.
    Continue(Rc<Turn>),
    /// Nothing to run here: the record's state (final; or still processing when the request
    /// that claimed it did not finish within the wait).
    Answered(Confirmation),
}

/// Resolves `request` under `deadline` (see the module doc). A record that another request is
/// processing is answered once it is final (bounded).
pub async fn resolve(
    ports: &Ports,
    chat: &ChatSetup,
    request: &ResolveRequest,
    limits: &TurnLimits,
    deadline: &Interrupt,
) -> Result<Resolution, Refusal> {
    resolve_with(
        ports,
        chat,
        request,
        limits,
        deadline,
        SettleWait::UntilFinal,
    )
    .await
}

/// How a request that did not win the decision waits for the record's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettleWait {
    /// Until the record is final (bounded): the turn protocol answers with the final state.
    UntilFinal,
    /// Not at all: the answer is the record as found (a client that follows the winner's
    /// continuation in the session log, as the AI SDK's stream does).
    No,
}

/// [`resolve`], with the loser's wait chosen.
pub async fn resolve_with(
    ports: &Ports,
    chat: &ChatSetup,
    request: &ResolveRequest,
    limits: &TurnLimits,
    deadline: &Interrupt,
    wait: SettleWait,
) -> Result<Resolution, Refusal> {
    let mut seen = None;
    for _attempt in 0..CONFIRMATION_CLAIM_ATTEMPTS_MAX {
        let loaded = load(ports, chat, &request.session_id, deadline).await?;
        loaded.check_after(&mut seen)?;
        let resync = loaded.resync();
        let now_ms = ports.clock.now_ms();
        let envelope = &loaded.resumed.envelope;
        let decided = claim_resolution(
            envelope,
            &request.token,
            request.approve,
            now_ms,
            limits.lease_ms,
        );
        let (claimed, record) = match decided {
            Err(ConfirmError::UnknownToken(_)) => {
                return Err(BoundaryError::ConfirmationNotFound.into())
            }
            Err(e) => {
                return Err(Refusal::internal(
                    Stage::SessionResume,
                    PortError::new(e.to_string()),
                ))
            }
            Ok(ResolutionClaim::Busy) => return Err(BoundaryError::SessionBusy.into()),
            Ok(ResolutionClaim::Settled { record }) => {
                let record = match wait {
                    SettleWait::UntilFinal => settled(ports, request, record, deadline).await,
                    SettleWait::No => record,
                };
                return Ok(Resolution::Answered(record));
            }
            Ok(ResolutionClaim::Claimed { envelope, record }) => (envelope, record),
        };
        let written = write_claim(
            ports,
            &loaded.resumed,
            &request.token,
            &claimed,
            now_ms,
            limits,
            deadline,
        )
        .await?;
        if !written {
            continue; // lost to another writer: read again
        }
        let claim = Claim {
            envelope: claimed,
            log_tail: loaded.log_tail,
            resync,
            resolves: Some(record),
            retried: false,
        };
        return open_continuation(ports, chat, request, claim, limits, deadline).await;
    }
    Err(BoundaryError::SessionBusy.into())
}

/// Step 4: the continuation, or (when the call no longer waits in the conversation) the claim
/// given up or settled without running anything.
async fn open_continuation(
    ports: &Ports,
    chat: &ChatSetup,
    request: &ResolveRequest,
    claim: Claim,
    limits: &TurnLimits,
    deadline: &Interrupt,
) -> Result<Resolution, Refusal> {
    let Some(record) = claim.resolves.clone() else {
        return Err(BoundaryError::Internal.into());
    };
    let (mut controller, history) =
        match controller_over_history(ports, chat, &claim, None, deadline).await {
            Ok(opened) => opened,
            Err(refusal) => {
                abandon(ports, &claim.envelope, limits).await;
                return Err(refusal);
            }
        };
    let first = match continue_call(&mut controller, ports, request, &record) {
        Ok(first) => first,
        Err(ResolveCallError::NotWaiting | ResolveCallError::AlreadyStarted) => {
            return settle_orphan(ports, claim, record, limits).await;
        }
    };
    let opened: Opened = history.opened(controller, first);
    let submission = Submission::text(&request.session_id, &record.token, "");
    Ok(Resolution::Continue(Turn::new(
        ports.clone(),
        *limits,
        submission,
        claim,
        opened,
    )))
}

/// Feeds the decision the claim recorded to the controller.
fn continue_call(
    controller: &mut ChatController,
    ports: &Ports,
    request: &ResolveRequest,
    record: &Confirmation,
) -> Result<turnkeep_core::chat::Action, ResolveCallError> {
    let resolution = match record.status {
        ConfirmationStatus::Approving => CallResolution::Approve {
            idempotency_key: record.token.clone(),
        },
        ConfirmationStatus::Expiring => CallResolution::Expire,
        _ => CallResolution::Reject {
            reason: request.reason.clone(),
        },
    };
    let ids = ports.ids.as_ref();
    controller.resolve_call(
        &record.tool_call_id,
        resolution,
        ports.clock.now_ms(),
        &mut |p: &str| ids.next_id(p),
    )
}

/// The record's call does not wait in the saved conversation (its messages were lost or
/// rewritten). Nothing can run. An approval is given back (record `pending` again, answered
/// `CONFIRMATION_UNAVAILABLE`); a rejection or an expiry needs nothing to run, so the record is
/// finished at once.
async fn settle_orphan(
    ports: &Ports,
    claim: Claim,
    record: Confirmation,
    limits: &TurnLimits,
) -> Result<Resolution, Refusal> {
    if record.status == ConfirmationStatus::Approving {
        abandon(ports, &claim.envelope, limits).await;
        return Err(BoundaryError::ConfirmationUnavailable.into());
    }
    let settlement = TurnSettlement {
        outcome: TurnOutcome::Completed,
        resolved: Some(&record.token),
        proposed: &[],
    };
    let now_ms = ports.clock.now_ms();
    let held = HeldLease::new(&record.token, claim.envelope);
    let (write, _) = held
        .release(settlement, now_ms)
        .map_err(|e| Refusal::internal(Stage::SessionSave, PortError::new(e.to_string())))?;
    let next = write.next.clone();
    let saved = commit_session(&ports.session(limits), write, WriteBudget::Cleanup).await;
    match saved.map_err(SaveFailure::into_refusal)? {
        Saved::Written => {}
        Saved::Conflict => return Err(BoundaryError::SessionConflict.into()),
    }
    let finished = next
        .confirmations
        .into_iter()
        .find(|c| c.token == record.token)
        .unwrap_or(record);
    Ok(Resolution::Answered(finished))
}

/// The answer for a record that is not pending: final records as they are; a processing one
/// after waiting (re-reading the session with a growing pause, at most
/// `CONFIRMATION_SETTLE_WAIT_MS_MAX`, and never past the request's deadline) for the request
/// that claimed it to finish, else as it stands.
async fn settled(
    ports: &Ports,
    request: &ResolveRequest,
    record: Confirmation,
    deadline: &Interrupt,
) -> Confirmation {
    if !record.status.is_processing() {
        return record;
    }
    let mut latest = record;
    let waiting = async {
        let mut waited_ms = 0;
        let mut pause_ms = CONFIRMATION_SETTLE_POLL_MS;
        while waited_ms < CONFIRMATION_SETTLE_WAIT_MS_MAX {
            ports.sleep.sleep(pause_ms).await;
            waited_ms += pause_ms;
            pause_ms = (pause_ms * 2).min(CONFIRMATION_SETTLE_POLL_MS_MAX);
            let stored = ports
                .storage
                .load(&request.session_id, deadline.token())
                .await;
            let found = stored
                .ok()
                .flatten()
                .and_then(|value| decode_session_snapshot(&value).ok())
                .and_then(|env| {
                    env.confirmations
                        .into_iter()
                        .find(|c| c.token == request.token)
                });
            if let Some(now) = found {
                let done = !now.status.is_processing();
                latest = now;
                if done {
                    return;
                }
            }
        }
    };
    // Whether the record settled or the deadline ended the wait, the answer is what was seen last.
    let _: Either<(), ()> = race(waiting, fired(deadline.token())).await;
    latest
}
