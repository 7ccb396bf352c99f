//! A turn lease this process holds, and the writes its holder may decide.
//!
//! A holder decides every later write of its turn on the envelope its own last write stored and
//! fences it with that envelope's cursor; it never reloads. The lease is matched by turn id
//! only, so a release decided on a fresh load after the lease lapsed could clear the lease of a
//! newer request for the same turn id (a client's retry); decided on the holder's own write it
//! is a conflict instead. The seeded lease simulation drives these writes through
//! [`super::commit::commit_session`] (tests/lease_sim), with a holder that reloads as the
//! control it must catch (tests/session_lease.rs,
//! `the_simulation_catches_a_holder_that_reloads_before_releasing`).

use turnkeep_core::protocol::Message;
use turnkeep_core::session::{
    abandon_resolution, claim_turn, lapse_turn, record_journal, settle_turn, ClaimDecision,
    Confirmation, JournalError, LeaseError, SessionEnvelope, SessionWrite, TurnSettlement,
    WriteKind,
};

/// The lease of `turn_id`, as this process's last write of it stored the envelope.
#[derive(Clone, Debug, PartialEq)]
pub struct HeldLease {
    turn_id: String,
    written: SessionEnvelope,
}

impl HeldLease {
    /// The lease `written` (a claim this process saved) gives `turn_id`.
    pub fn new(turn_id: &str, written: SessionEnvelope) -> Self {
        Self {
            turn_id: turn_id.to_owned(),
            written,
        }
    }

    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// The envelope the holder's last write stored.
    pub fn envelope(&self) -> &SessionEnvelope {
        &self.written
    }

    /// True once the lease this holder wrote has lapsed at `now_ms` ([`lapsed_at`]).
    pub fn lapsed_at(&self, now_ms: u64) -> bool {
        lapsed_at(&self.written, now_ms)
    }

    /// When the lease lapses (0 when the envelope holds no lease).
    pub fn expires_at(&self) -> u64 {
        self.written
            .active_turn
            .as_ref()
            .map_or(0, |a| a.expires_at)
    }

    /// The holder after `write` (one of its own) was stored.
    pub fn stored(&self, write: &SessionWrite) -> Self {
        Self::new(&self.turn_id, write.next.clone())
    }

    /// The lease taken back after it lapsed: the same claim again (`claim_turn` re-claims an
    /// expired lease of the same turn id). `None` when there is nothing to take back (the
    /// lease is still live, or the claim cannot be decided).
    pub fn retake(&self, at_ms: u64, lease_ms: u64) -> Option<SessionWrite> {
        match claim_turn(&self.written, &self.turn_id, at_ms, lease_ms) {
            Ok(ClaimDecision::Claimed(next)) => Some(self.write(claim_kind, next, at_ms)),
            _ => None,
        }
    }

    /// The turn's release ([`settle_turn`]) and the proposed records that did not fit.
    pub fn release(
        &self,
        settlement: TurnSettlement<'_>,
        at_ms: u64,
    ) -> Result<(SessionWrite, Vec<Confirmation>), LeaseError> {
        let (next, refused) = settle_turn(&self.written, &self.turn_id, settlement, at_ms)?;
        Ok((self.write(release_kind, next, at_ms), refused))
    }

    /// The turn's journal recorded ([`record_journal`]): the lease and everything else kept.
    pub fn record(
        &self,
        history_len: usize,
        messages: &[Message],
        at_ms: u64,
    ) -> Result<SessionWrite, JournalError> {
        let next = record_journal(&self.written, &self.turn_id, history_len, messages, at_ms)?;
        Ok(self.write(record_kind, next, at_ms))
    }

    /// The lease given up before its turn ran anything ([`abandon_resolution`]).
    pub fn abandon(&self, at_ms: u64) -> Result<SessionWrite, LeaseError> {
        let next = abandon_resolution(&self.written, &self.turn_id, at_ms)?;
        Ok(self.write(release_kind, next, at_ms))
    }

    /// The lease given up lapsed, after the turn may have saved its user message
    /// ([`lapse_turn`]): free at once, and the next claim re-syncs.
    pub fn lapse(&self, at_ms: u64) -> Result<SessionWrite, LeaseError> {
        let next = lapse_turn(&self.written, &self.turn_id, at_ms)?;
        Ok(self.write(lapse_kind, next, at_ms))
    }

    fn write(
        &self,
        kind: fn(String) -> WriteKind,
        next: SessionEnvelope,
        at_ms: u64,
    ) -> SessionWrite {
        SessionWrite::on_stored(kind(self.turn_id.clone()), &self.written, next, at_ms)
    }
}

/// True once `envelope`'s lease has lapsed at `now_ms`: another claim may have taken the session
/// since. The one rule for a holder's own lease (its claim, or its last write).
pub(crate) fn lapsed_at(envelope: &SessionEnvelope, now_ms: u64) -> bool {
    envelope
        .active_turn
        .as_ref()
        .is_some_and(|active| now_ms >= active.expires_at)
}

fn claim_kind(turn_id: String) -> WriteKind {
    WriteKind::Claim { turn_id }
}

fn record_kind(turn_id: String) -> WriteKind {
    WriteKind::Record { turn_id }
}

fn lapse_kind(turn_id: String) -> WriteKind {
    WriteKind::Lapse { turn_id }
}

fn release_kind(turn_id: String) -> WriteKind {
    WriteKind::Release { turn_id }
}
