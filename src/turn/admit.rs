//! Stage 1 of a turn: load the session, resume it, decide the claim and write it by CAS
//! (design §3 step 5). Nothing runs a model or a tool before this returns a [`Claim`].

use super::context::{ChatSetup, Ports, Submission, TurnLimits};
use super::fault::{Refusal, Stage};
use super::interrupt::Interrupt;
use super::race::{fired, join, race, Budget, Either};
use crate::core::protocol::BoundaryError;
use crate::core::session::{
    abandon_turn, claim_turn, resume_session, ClaimDecision, SessionEnvelope, TurnOutcome,
};
use crate::ports::log::ReadFrom;
use crate::ports::CancelToken;

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
}

impl Claim {
    /// The claim's generation: the cursor it wrote. A later claim of the same turn id (after
    /// this one lapsed) writes a larger cursor, so it is the producer epoch of the turn's log writes.
    pub fn generation(&self) -> u64 {
        self.envelope.cursor
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
    let token = deadline.token();
    let (stored, log_tail) = deadline
        .guard(async {
            let (stored, tail) = join(
                ports.storage.load(&submission.session_id, token),
                log_tail(ports, token),
            )
            .await;
            let stored = stored.map_err(|e| Refusal::internal(Stage::SessionLoad, e))?;
            Ok((stored, tail))
        })
        .await?;
    let now_ms = ports.clock.now_ms();
    let resumed = resume_session(stored.as_ref(), &chat.identity, now_ms).map_err(|e| {
        Refusal::internal(
            Stage::SessionResume,
            crate::ports::PortError::new(e.to_string()),
        )
    })?;
    let envelope = &resumed.envelope;
    let resync = envelope.active_turn.is_some()
        || envelope
            .terminal_turns
            .last()
            .is_some_and(|t| t.outcome == TurnOutcome::Indeterminate);
    let claimed = match claim_turn(
        &resumed.envelope,
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
                crate::ports::PortError::new(e.to_string()),
            ))
        }
    };
    write_claim(ports, &claimed, resumed.expected_cursor, limits, deadline).await?;
    Ok(Claim {
        envelope: claimed,
        log_tail,
        resync,
    })
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

/// The claim's one CAS write; a lost race is busy, never a retry loop. Not simply raced against
/// the deadline: a claim still in flight when the deadline fires may land a moment later, and a
/// lease no turn runs under would keep the session busy until it lapses. So after the deadline
/// the write's answer is still awaited (within the cleanup budget) and a claim that went through
/// is abandoned before the 408/499 goes out.
async fn write_claim(
    ports: &Ports,
    claimed: &SessionEnvelope,
    expected_cursor: Option<u64>,
    limits: &TurnLimits,
    deadline: &Interrupt,
) -> Result<(), Refusal> {
    let value = claimed.to_value();
    let mut save = Box::pin(
        ports
            .storage
            .save(&value, expected_cursor, deadline.token()),
    );
    let written = match race(save.as_mut(), fired(deadline.token())).await {
        Either::Left(written) => written,
        Either::Right(()) => {
            let late = Budget::new(ports.sleep.as_ref(), limits.cleanup_budget_ms);
            if let Some(Ok(true)) = late.run(save).await {
                abandon(ports, claimed, limits).await;
            }
            return Err(deadline
                .cause()
                .map_or(BoundaryError::Cancelled, |c| c.refusal())
                .into());
        }
    };
    match written {
        Ok(true) => Ok(()),
        Ok(false) => Err(BoundaryError::SessionBusy.into()),
        Err(e) if deadline.is_fired() => Err(Refusal {
            error: deadline
                .cause()
                .map_or(BoundaryError::Cancelled, |c| c.refusal()),
            replayed: None,
            fault: Some(super::fault::Fault::new(Stage::SessionSave, e)),
        }),
        Err(e) => Err(Refusal::internal(Stage::SessionSave, e)),
    }
}

/// Gives a claimed lease up without running the turn (a failure before the stream started):
/// the lease is cleared by CAS at once, and the turn id stays free for a retry. Bounded by the
/// cleanup budget. A failure here is reported; the lease then lapses at its expiry.
pub async fn abandon(ports: &Ports, claimed: &SessionEnvelope, limits: &TurnLimits) {
    let Some(active) = &claimed.active_turn else {
        return;
    };
    let Ok(next) = abandon_turn(claimed, &active.turn_id, ports.clock.now_ms()) else {
        return;
    };
    let value = next.to_value();
    let budget = Budget::new(ports.sleep.as_ref(), limits.cleanup_budget_ms);
    let saved = budget
        .run(
            ports
                .storage
                .save(&value, Some(claimed.cursor), budget.token()),
        )
        .await;
    if let Some(Err(e)) = saved {
        ports
            .faults
            .report(&super::fault::Fault::new(Stage::SessionSave, e));
    }
}
