//! Stage 1 under a send policy (`core::session::send`): a send while a turn runs joins the
//! session's queue (`queue`), or takes its one place and asks the running turn to stop
//! (`latest`), then reads the session every `SEND_QUEUE_POLL_INTERVAL_MS` and decides again
//! until its claim is written, it is told it will not run, or its wait (`wait_ms`, within the
//! request's deadline) is over. Every write is the core's decision, committed by
//! `commit::commit_session` against the cursor it was decided on; a lost race only means
//! deciding again on the next read.
//!
//! The request is held open meanwhile: its response starts when its turn does, as any turn's
//! (a `useChat` client shows the message as submitted until then).

use super::admit::{admit, load, write_claim, Claim, Loaded};
use super::commit::{commit_session, WriteBudget};
use super::context::{ChatSetup, Ports, Submission, TurnLimits};
use super::fault::{Fault, Refusal, Stage};
use super::interrupt::Interrupt;
use super::lease::HeldLease;
use super::stop_request::request_stop;
use turnkeep_core::limits::{SEND_QUEUE_LEAVE_ATTEMPTS_MAX, SEND_QUEUE_POLL_INTERVAL_MS};
use turnkeep_core::protocol::BoundaryError;
use turnkeep_core::session::{
    decide_send, decode_session_snapshot, leave_queue, rebase_on_queue, ClaimDecision, Joined,
    LeaseError, SendDecision, SendPolicy, SendRequest, SessionEnvelope, SessionWrite, WriteKind,
};
use turnkeep_ports::PortError;

/// A handler's send policy and how long a send may wait for its turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendRules {
    pub policy: SendPolicy,
    /// At most the request's deadline: the wait counts against it.
    pub wait_ms: u64,
}

impl Default for SendRules {
    fn default() -> Self {
        Self {
            policy: SendPolicy::Reject,
            wait_ms: turnkeep_core::limits::SEND_QUEUE_WAIT_MS_DEFAULT,
        }
    }
}

/// The decision rule a waiter follows: [`decide_send`], or a broken one a simulation must catch.
pub type DecideSend = fn(&SessionEnvelope, &SendRequest<'_>) -> Result<SendDecision, LeaseError>;

/// [`admit`] under `rules`: `reject` is [`admit`] itself.
pub async fn admit_send(
    ports: &Ports,
    chat: &ChatSetup,
    submission: &Submission,
    limits: &TurnLimits,
    rules: &SendRules,
    deadline: &Interrupt,
) -> Result<Claim, Refusal> {
    admit_send_with(
        ports,
        chat,
        submission,
        limits,
        rules,
        deadline,
        decide_send,
    )
    .await
}

/// [`admit_send`] with the decision rule given (the simulations' broken rules).
pub async fn admit_send_with(
    ports: &Ports,
    chat: &ChatSetup,
    submission: &Submission,
    limits: &TurnLimits,
    rules: &SendRules,
    deadline: &Interrupt,
    decide: DecideSend,
) -> Result<Claim, Refusal> {
    if rules.policy == SendPolicy::Reject {
        return admit(ports, chat, submission, limits, deadline).await;
    }
    let mut waiter = Waiter {
        ports,
        chat,
        submission,
        limits,
        rules,
        deadline,
        wait_until_ms: ports.clock.now_ms().saturating_add(rules.wait_ms),
        joined: JoinState::No,
        stopped: None,
        seen: None,
    };
    let admitted = waiter.wait(decide).await;
    if admitted.is_err() && waiter.joined != JoinState::No {
        waiter.leave().await;
    }
    admitted
}

/// The holder `held` moved onto the stored envelope after its write lost to writes that only
/// moved the queue ([`rebase_on_queue`]): `None` when the session changed otherwise (the loss
/// stands) or could not be read within the cleanup budget. Used by `turn::run`'s cleanup writes.
pub(crate) async fn rebase_held(
    ports: &Ports,
    limits: &TurnLimits,
    held: &HeldLease,
) -> Option<HeldLease> {
    let session_id = &held.envelope().session_id;
    let budget = super::race::Budget::new(ports.sleep.as_ref(), limits.cleanup_budget_ms);
    let loaded = budget
        .run(ports.storage.load(session_id, budget.token()))
        .await;
    let Some(Ok(Some(stored))) = loaded else {
        return None;
    };
    // No resume: the stored envelope must equal the holder's own but for the queue.
    let stored = decode_session_snapshot(&stored).ok()?;
    let rebased = rebase_on_queue(held.envelope(), &stored)?;
    Some(HeldLease::new(held.turn_id(), rebased))
}

/// The stored session, resumed, read within one cleanup budget (`None`: absent, unreadable).
async fn load_within_cleanup(
    ports: &Ports,
    chat: &ChatSetup,
    limits: &TurnLimits,
    session_id: &str,
) -> Option<turnkeep_core::session::Resumed> {
    let budget = super::race::Budget::new(ports.sleep.as_ref(), limits.cleanup_budget_ms);
    let loaded = budget
        .run(ports.storage.load(session_id, budget.token()))
        .await;
    let Some(Ok(Some(stored))) = loaded else {
        return None;
    };
    let now_ms = ports.clock.now_ms();
    turnkeep_core::session::resume_session(Some(&stored), &chat.identity, now_ms).ok()
}

/// What a waiter knows of its own join ([`Joined`], owned).
#[derive(Clone, Debug, PartialEq, Eq)]
enum JoinState {
    No,
    Yes,
    /// A join whose answer was lost, decided over these turns.
    Unknown(Vec<String>),
}

/// The turns in the session at `now_ms`: the one holding a live lease, and those waiting.
fn in_session(envelope: &SessionEnvelope, now_ms: u64) -> Vec<String> {
    let running = envelope
        .active_turn
        .iter()
        .filter(|a| a.expires_at > now_ms);
    let waiting = envelope
        .queued_turns
        .iter()
        .filter(|q| q.expires_at > now_ms);
    running
        .map(|a| a.turn_id.clone())
        .chain(waiting.map(|q| q.turn_id.clone()))
        .collect()
}

struct Waiter<'a> {
    ports: &'a Ports,
    chat: &'a ChatSetup,
    submission: &'a Submission,
    limits: &'a TurnLimits,
    rules: &'a SendRules,
    deadline: &'a Interrupt,
    wait_until_ms: u64,
    /// What this send knows of its own join.
    joined: JoinState,
    /// The running turn this send asked to stop (`latest`): asked once per turn.
    stopped: Option<String>,
    /// The newest cursor read, for [`Loaded::check_after`].
    seen: Option<u64>,
}

impl Waiter<'_> {
    /// Reads and decides until the send is claimed or refused; at most one read per poll
    /// interval of the wait, plus the first.
    async fn wait(&mut self, decide: DecideSend) -> Result<Claim, Refusal> {
        let reads_max = self.rules.wait_ms / SEND_QUEUE_POLL_INTERVAL_MS + 2;
        for read in 0..reads_max {
            if read > 0 {
                self.pause().await?;
            }
            let loaded = match load(
                self.ports,
                self.chat,
                &self.submission.session_id,
                self.deadline,
            )
            .await
            {
                Ok(loaded) => loaded,
                // A store fault while waiting costs this read, not the place in the queue.
                Err(refusal) if self.joined != JoinState::No && !self.deadline.is_fired() => {
                    self.report(refusal.fault);
                    continue;
                }
                Err(refusal) => return Err(refusal),
            };
            loaded.check_after(&mut self.seen)?;
            if let Some(claim) = self.decide_once(decide, loaded).await? {
                return Ok(claim);
            }
        }
        Err(BoundaryError::SendQueueTimeout.into())
    }

    /// One decision on one read: `Some` claimed, `None` wait on.
    async fn decide_once(
        &mut self,
        decide: DecideSend,
        loaded: Loaded,
    ) -> Result<Option<Claim>, Refusal> {
        let envelope = &loaded.resumed.envelope;
        let turn_id = &self.submission.turn_id;
        if envelope.queued_turns.iter().any(|q| &q.turn_id == turn_id) {
            self.joined = JoinState::Yes;
        }
        let now_ms = self.ports.clock.now_ms();
        let request = SendRequest {
            turn_id,
            policy: self.rules.policy,
            now_ms,
            lease_ms: self.limits.lease_ms,
            wait_until_ms: self.wait_until_ms,
            joined: match &self.joined {
                JoinState::No => Joined::No,
                JoinState::Yes => Joined::Yes,
                JoinState::Unknown(over) => Joined::Unknown { over },
            },
        };
        let decision = decide(envelope, &request)
            .map_err(|e| Refusal::internal(Stage::SessionResume, PortError::new(e.to_string())))?;
        let over = in_session(envelope, now_ms);
        match decision {
            SendDecision::Claim(ClaimDecision::Claimed(claimed)) => {
                self.claim(loaded, claimed, now_ms).await
            }
            SendDecision::Claim(ClaimDecision::Busy { .. }) => {
                Err(BoundaryError::SessionBusy.into())
            }
            SendDecision::Claim(ClaimDecision::Replayed { outcome }) => {
                Err(Refusal::replayed(outcome))
            }
            SendDecision::Wait { join, stop } => {
                if let Some(join) = join {
                    self.join(&loaded, join, over, now_ms).await?;
                }
                if let Some(running) = stop {
                    self.stop(running).await;
                }
                Ok(None)
            }
            SendDecision::Superseded => Err(BoundaryError::TurnSuperseded.into()),
            SendDecision::QueueFull => Err(BoundaryError::SendQueueFull.into()),
            SendDecision::TimedOut => Err(BoundaryError::SendQueueTimeout.into()),
        }
    }

    /// The claim's CAS write; a lost race decides again on the next read.
    async fn claim(
        &mut self,
        loaded: Loaded,
        claimed: SessionEnvelope,
        now_ms: u64,
    ) -> Result<Option<Claim>, Refusal> {
        let resync = loaded.resync();
        let retried = loaded.retries(&self.submission.turn_id);
        let written = write_claim(
            self.ports,
            &loaded.resumed,
            &self.submission.turn_id,
            &claimed,
            now_ms,
            self.limits,
            self.deadline,
        )
        .await?;
        Ok(written.then(|| Claim {
            envelope: claimed,
            log_tail: loaded.log_tail,
            resync,
            resolves: None,
            retried,
        }))
    }

    /// Joins the queue (a plain save: the lease untouched). A lost race or a store fault only
    /// means deciding again on the next read (which also shows whether a join whose
    /// acknowledgement was lost landed).
    async fn join(
        &mut self,
        loaded: &Loaded,
        joined: SessionEnvelope,
        over: Vec<String>,
        now_ms: u64,
    ) -> Result<(), Refusal> {
        let write = SessionWrite::on_loaded(
            WriteKind::Keep,
            &loaded.resumed.envelope,
            loaded.resumed.expected_cursor,
            joined,
            now_ms,
        );
        let session = self.ports.session(self.limits);
        match commit_session(&session, write, WriteBudget::Deadline(self.deadline)).await {
            Ok(saved) => {
                if saved == super::commit::Saved::Written {
                    self.joined = JoinState::Yes;
                }
                Ok(())
            }
            Err(failure) if self.deadline.is_fired() => Err(failure.into_refusal()),
            Err(failure) => {
                // It may have landed: the next read tells, and who is in by then says whether
                // a newer send came in over it (`Joined::Unknown`).
                failure.report(self.ports.faults.as_ref());
                if self.joined == JoinState::No {
                    self.joined = JoinState::Unknown(over);
                }
                Ok(())
            }
        }
    }

    /// `latest`: asks `running` to stop through the session log (`turn::stop_request`), once
    /// per running turn; a failed request is asked again on the next read. Without a log the
    /// running turn cannot be stopped from here: the send then waits for it, as `queue` does.
    async fn stop(&mut self, running: String) {
        if self.stopped.as_ref() == Some(&running) {
            return;
        }
        let session_id = &self.submission.session_id;
        match request_stop(self.ports, self.chat, session_id, &running, self.deadline).await {
            Ok(_) => self.stopped = Some(running),
            Err(refusal) if refusal.error == BoundaryError::StopUnavailable => {
                self.stopped = Some(running)
            }
            Err(refusal) if refusal.error == BoundaryError::TurnNotRunning => {
                self.stopped = Some(running)
            }
            Err(refusal) => self.report(refusal.fault),
        }
    }

    /// The pause between reads, under the deadline.
    async fn pause(&self) -> Result<(), Refusal> {
        let sleep = self.ports.sleep.clone();
        self.deadline
            .guard(async move {
                sleep.sleep(SEND_QUEUE_POLL_INTERVAL_MS).await;
                Ok(())
            })
            .await
    }

    /// Takes this send's entry off the queue when it gives up early (best effort, each attempt
    /// within the cleanup budget: its entry expires at `wait_until_ms` anyway).
    async fn leave(&self) {
        for _ in 0..SEND_QUEUE_LEAVE_ATTEMPTS_MAX {
            if self.leave_once().await != Some(false) {
                return;
            }
        }
    }

    /// One attempt: `Some(true)` done (written, or nothing to take off), `Some(false)` to try
    /// again (another writer saved first, or the store failed: an entry left behind would hold
    /// every send behind it up until it expires), `None` the session cannot be read.
    async fn leave_once(&self) -> Option<bool> {
        let session_id = &self.submission.session_id;
        let resumed = load_within_cleanup(self.ports, self.chat, self.limits, session_id).await?;
        let now_ms = self.ports.clock.now_ms();
        let Some(next) = leave_queue(&resumed.envelope, &self.submission.turn_id, now_ms).ok()?
        else {
            return Some(true);
        };
        let write = SessionWrite::on_loaded(
            WriteKind::Keep,
            &resumed.envelope,
            resumed.expected_cursor,
            next,
            now_ms,
        );
        let session = self.ports.session(self.limits);
        match commit_session(&session, write, WriteBudget::Cleanup).await {
            Ok(saved) => Some(saved == super::commit::Saved::Written),
            Err(failure) => {
                failure.report(self.ports.faults.as_ref());
                Some(false)
            }
        }
    }

    fn report(&self, fault: Option<Fault>) {
        if let Some(fault) = fault {
            self.ports.faults.report(&fault);
        }
    }
}
