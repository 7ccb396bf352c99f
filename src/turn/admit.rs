//! Stage 1 of a turn: load the session, resume it, decide the claim and write it by CAS
//! (`core::session::claim_turn`, written by `commit::commit_session`). Nothing runs a model or a tool before this returns a [`Claim`].

use super::commit::{abandon_claim, commit_session, give_up_claim, GiveUp, Saved, WriteBudget};
use super::context::{ChatSetup, Ports, Submission, TurnLimits};
use super::fault::{Refusal, Stage};
use super::interrupt::Interrupt;
use super::race::join;
use turnkeep_core::protocol::BoundaryError;
use turnkeep_core::session::{
    check_reread, claim_turn, resume_session, ClaimDecision, Confirmation, ResumeError, Resumed,
    SessionEnvelope, SessionWrite, TurnOutcome, WriteKind,
};
use turnkeep_ports::log::ReadFrom;
use turnkeep_ports::{CancelToken, PortError};

/// A turn whose lease is ours: the claim was CAS-saved.
#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    /// The envelope as the claim saved it.
    pub envelope: SessionEnvelope,
    /// The session log's tail just before the claim (`None`: empty, or no log). A stop request
    /// needs the claim to be visible, so it lands after this offset: watching from here misses none.
    pub log_tail: Option<String>,
    /// The turn before this one may have left the log ahead of the saved messages: its lease
    /// lapsed (the writer crashed or hung) or its messages could not be saved (`indeterminate`).
    /// The log is then re-synchronised with one native batch before this turn publishes.
    pub resync: bool,
    /// For the continuation of a confirmation: the record as the claim saved it (`approving`,
    /// `rejecting` or `expiring`); the turn's release finishes it.
    pub resolves: Option<Confirmation>,
    /// This turn's own lapsed lease was claimed again (its client retried after the lapse): its
    /// user message may be saved already, by the earlier claim's `open`.
    pub retried: bool,
}

impl Claim {
    /// The claim's generation: the cursor it wrote. A later claim of the same turn id (after
    /// this one lapsed) writes a larger cursor, so it is the producer epoch of the turn's log writes.
    pub fn generation(&self) -> u64 {
        self.envelope.cursor
    }

    /// True once the claimed lease has lapsed at `now_ms`: another claim may have taken the
    /// session since.
    pub fn lapsed_at(&self, now_ms: u64) -> bool {
        super::lease::lapsed_at(&self.envelope, now_ms)
    }
}

/// A session as loaded before a claim: resumed, and the log's tail at that moment.
pub(crate) struct Loaded {
    pub resumed: Resumed,
    pub log_tail: Option<String>,
}

impl Loaded {
    /// Checks this load against the earlier loads of the same request ([`check_reread`]: the
    /// stored cursor never goes back) and moves `seen` on. A violation refuses the request as
    /// internal, with the violation for the operator: nothing is decided on such a read.
    pub(crate) fn check_after(&self, seen: &mut Option<u64>) -> Result<(), Refusal> {
        *seen = check_reread(*seen, self.resumed.expected_cursor).map_err(|violation| {
            Refusal::internal(Stage::SessionLoad, PortError::new(violation.to_string()))
        })?;
        Ok(())
    }

    /// True when a claim of `turn_id` on this load takes the turn's own lapsed lease again
    /// (see [`Claim::retried`]).
    pub(crate) fn retries(&self, turn_id: &str) -> bool {
        self.resumed
            .envelope
            .active_turn
            .as_ref()
            .is_some_and(|a| a.turn_id == turn_id)
    }

    /// See [`Claim::resync`].
    pub(crate) fn resync(&self) -> bool {
        let envelope = &self.resumed.envelope;
        envelope.active_turn.is_some()
            || envelope
                .terminal_turns
                .last()
                .is_some_and(|t| t.outcome == TurnOutcome::Indeterminate)
    }
}

/// Loads, resumes, decides and writes the claim, all under `deadline`.
pub async fn admit(
    ports: &Ports,
    chat: &ChatSetup,
    submission: &Submission,
    limits: &TurnLimits,
    deadline: &Interrupt,
) -> Result<Claim, Refusal> {
    let loaded = load(ports, chat, &submission.session_id, deadline).await?;
    let resync = loaded.resync();
    let retried = loaded.retries(&submission.turn_id);
    let now_ms = ports.clock.now_ms();
    let claimed = match claim_turn(
        &loaded.resumed.envelope,
        &submission.turn_id,
        now_ms,
        limits.lease_ms,
    ) {
        Ok(ClaimDecision::Claimed(envelope)) => envelope,
        Ok(ClaimDecision::Busy { .. }) => return Err(BoundaryError::SessionBusy.into()),
        Ok(ClaimDecision::Replayed { outcome }) => return Err(Refusal::replayed(outcome)),
        Err(e) => {
            return Err(Refusal::internal(
                Stage::SessionResume,
                PortError::new(e.to_string()),
            ))
        }
    };
    match write_claim(
        ports,
        &loaded.resumed,
        &submission.turn_id,
        &claimed,
        now_ms,
        limits,
        deadline,
    )
    .await?
    {
        true => Ok(Claim {
            envelope: claimed,
            log_tail: loaded.log_tail,
            resync,
            resolves: None,
            retried,
        }),
        false => Err(BoundaryError::SessionBusy.into()),
    }
}

/// Loads the session and the log's tail (side by side) under `deadline`, and resumes it.
pub(crate) async fn load(
    ports: &Ports,
    chat: &ChatSetup,
    session_id: &str,
    deadline: &Interrupt,
) -> Result<Loaded, Refusal> {
    let token = deadline.token();
    let (stored, log_tail) = deadline
        .guard(async {
            let (stored, tail) = join(
                ports.storage.load(session_id, token),
                log_tail(ports, token),
            )
            .await;
            let stored = stored.map_err(|e| Refusal::internal(Stage::SessionLoad, e))?;
            Ok((stored, tail))
        })
        .await?;
    let resumed = resume_session(stored.as_ref(), &chat.identity, ports.clock.now_ms())
        .map_err(resume_refusal)?;
    Ok(Loaded { resumed, log_tail })
}

/// What a client is told about a stored session that cannot be resumed: a definition that
/// cannot accept it is the typed `SESSION_INCOMPATIBLE_DEFINITION`; anything else (a corrupt or
/// foreign record: the store's fault, not the client's) is internal. The detail goes to the
/// operator either way.
pub fn resume_refusal(e: ResumeError) -> Refusal {
    let error = match e {
        ResumeError::IncompatibleDefinition { .. } => BoundaryError::SessionIncompatible,
        _ => BoundaryError::Internal,
    };
    Refusal {
        error,
        replayed: None,
        fault: Some(super::fault::Fault::new(
            Stage::SessionResume,
            PortError::new(e.to_string()),
        )),
    }
}

/// The log's tail offset, or `None` (empty log, no log, or it could not be read: then the stop
/// watcher starts from the beginning, which is slower but misses nothing).
async fn log_tail(ports: &Ports, token: &CancelToken) -> Option<String> {
    let log = ports.log.as_ref()?;
    match log.read(ReadFrom::Now, 0, token).await {
        Ok(read) => read.offset,
        Err(e) => {
            ports
                .faults
                .report(&super::fault::Fault::new(Stage::SessionLog, e.port_error()));
            None
        }
    }
}

/// The claim's one CAS write, under the request's deadline (see [`WriteBudget::Deadline`]:
/// a claim the deadline overtakes is abandoned if it landed): `true` written, `false` lost to
/// another writer (busy, never a retry loop).
pub(crate) async fn write_claim(
    ports: &Ports,
    loaded: &Resumed,
    turn_id: &str,
    claimed: &SessionEnvelope,
    at_ms: u64,
    limits: &TurnLimits,
    deadline: &Interrupt,
) -> Result<bool, Refusal> {
    let kind = WriteKind::Claim {
        turn_id: turn_id.to_owned(),
    };
    let write = SessionWrite::on_loaded(
        kind,
        &loaded.envelope,
        loaded.expected_cursor,
        claimed.clone(),
        at_ms,
    );
    let saved = commit_session(
        &ports.session(limits),
        write,
        WriteBudget::Deadline(deadline),
    )
    .await;
    match saved {
        Ok(saved) => Ok(saved == Saved::Written),
        Err(failure) => Err(failure.into_refusal()),
    }
}

/// Gives a claimed lease up without running the turn (a failure before the stream started):
/// see [`super::commit::abandon_claim`].
pub async fn abandon(ports: &Ports, claimed: &SessionEnvelope, limits: &TurnLimits) {
    abandon_claim(&ports.session(limits), claimed).await;
}

/// Gives a claimed lease up lapsed, after the turn may have saved its user message but before it
/// was acknowledged: see [`super::commit::GiveUp::Lapse`].
pub(crate) async fn lapse(ports: &Ports, claimed: &SessionEnvelope, limits: &TurnLimits) {
    give_up_claim(&ports.session(limits), claimed, GiveUp::Lapse).await;
}
