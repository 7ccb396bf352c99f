//! The send policy: what a send does while another turn holds the session (Cloudflare
//! AIChatAgent's `messageConcurrency` names; turnkeep's `latest` also stops the running turn).
//!
//! - `reject` (the default): [`claim_turn`] as it is, a busy session answers `SESSION_BUSY`.
//! - `queue`: the send joins the session's queue (`queuedTurns`, turnkeep's additive envelope
//!   field) and claims once every send queued before it has run or left and no turn holds a live
//!   lease. At most `SEND_QUEUE_TURNS_MAX` wait; each entry expires when its waiter gives up.
//! - `latest`: the send asks the running turn to stop and takes the queue's one place (an older
//!   waiting send is superseded: it never runs); it claims as soon as the session is free.
//!
//! Every decision here is pure and decided on the envelope as loaded; the waiter writes what it
//! returns with one compare-and-set and decides again on its next read, so two waiters can never
//! both claim, nor overtake each other: the queue's order is whatever order their joins landed in.
//! A claim goes through [`claim_turn`], so a finished turn id never runs again, queued or not.

use super::envelope::{QueuedTurn, SessionEnvelope};
use super::lease::{advance_cursor, claim_turn, ClaimDecision, LeaseError};
use crate::limits;

/// What a send does while a turn runs (`sendPolicy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SendPolicy {
    #[default]
    Reject,
    Queue,
    Latest,
}

impl SendPolicy {
    /// The option's literal: `reject`, `queue` or `latest`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "reject" => Some(Self::Reject),
            "queue" => Some(Self::Queue),
            "latest" => Some(Self::Latest),
            _ => None,
        }
    }
}

/// One decision of a send under a policy, on the session as loaded at `now_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendRequest<'a> {
    pub turn_id: &'a str,
    pub policy: SendPolicy,
    pub now_ms: u64,
    pub lease_ms: u64,
    /// When this send's wait ends: its queue entry's expiry.
    pub wait_until_ms: u64,
    /// What the waiter knows of its own join (it decides again on every read).
    pub joined: Joined<'a>,
}

/// What a waiter knows of its own join of the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Joined<'a> {
    /// It has not joined.
    No,
    /// Its join was written (or seen stored): an entry gone since means it will not run.
    Yes,
    /// Its join's answer was lost: it may have landed (and been replaced since) or not. `over`
    /// are the turns in the session when it was decided (the running one and those waiting):
    /// under `latest`, any other turn there now entered after it, so this send is superseded
    /// rather than joining again over a newer one.
    Unknown { over: &'a [String] },
}

/// What a send does next.
#[derive(Clone, Debug, PartialEq)]
pub enum SendDecision {
    /// [`claim_turn`]'s answer. A `Claimed` envelope has this send's entry, and every expired
    /// one, off the queue (for `latest`: the whole queue).
    Claim(ClaimDecision),
    /// Wait and decide again on the next read. `join` is the envelope to CAS-save first (this
    /// send joins the queue; nothing to write when it waits there already). `stop` is the turn
    /// `latest` asks to stop (through the session log's stop request).
    Wait {
        join: Option<SessionEnvelope>,
        stop: Option<String>,
    },
    /// `latest`: a newer send took this one's place before it ran.
    Superseded,
    /// `queue`: `SEND_QUEUE_TURNS_MAX` sends wait already.
    QueueFull,
    /// This send's wait is over (its entry expired) before its turn came.
    TimedOut,
}

/// Decides what `request`'s send does with `env`. Pure: the caller commits a `Claim` or a
/// `Wait`'s `join` with one compare-and-set against the loaded cursor.
pub fn decide_send(
    env: &SessionEnvelope,
    request: &SendRequest<'_>,
) -> Result<SendDecision, LeaseError> {
    let claim = claim_turn(env, request.turn_id, request.now_ms, request.lease_ms)?;
    let running = match &claim {
        ClaimDecision::Replayed { .. } => return Ok(SendDecision::Claim(claim)),
        _ if request.policy == SendPolicy::Reject => return Ok(SendDecision::Claim(claim)),
        // The same turn id runs under another request (a retry): never twice.
        ClaimDecision::Busy { active_turn_id, .. } if active_turn_id == request.turn_id => {
            return Ok(SendDecision::Claim(claim))
        }
        ClaimDecision::Busy { active_turn_id, .. } => Some(active_turn_id.clone()),
        ClaimDecision::Claimed(_) => None,
    };
    let live = live_queue(env, request.now_ms);
    let place = live.iter().position(|q| q.turn_id == request.turn_id);
    let gone = match request.joined {
        Joined::No => false,
        // Under `queue` an entry goes only with its wait (a retry of the same turn id shares the
        // entry of the request it retries, and may wait longer than that one): a waiter whose
        // wait is not over joins again, at the end, rather than never run.
        Joined::Yes if request.policy == SendPolicy::Queue => {
            place.is_none() && request.now_ms >= request.wait_until_ms
        }
        Joined::Yes => place.is_none(),
        Joined::Unknown { over } => {
            let mut present = live.iter().map(|q| &q.turn_id).chain(running.as_ref());
            place.is_none()
                && request.policy == SendPolicy::Latest
                && present.any(|id| id != request.turn_id && !over.contains(id))
        }
    };
    if gone {
        // The entry is gone (or a newer send is in): it expired with this send's wait, or a
        // newer `latest` send took its place.
        return Ok(if request.now_ms >= request.wait_until_ms {
            SendDecision::TimedOut
        } else {
            SendDecision::Superseded
        });
    }
    let decision = match request.policy {
        SendPolicy::Latest => decide_latest(env, request, claim, running, place, &live)?,
        _ => decide_queue(env, request, claim, running, place, &live)?,
    };
    // A wait that is over never joins (an entry expiring at once) nor waits on.
    Ok(match decision {
        SendDecision::Wait { .. } if request.now_ms >= request.wait_until_ms => {
            SendDecision::TimedOut
        }
        decision => decision,
    })
}

/// `queue`: first come, first served; a newcomer never overtakes a live entry.
fn decide_queue(
    env: &SessionEnvelope,
    request: &SendRequest<'_>,
    claim: ClaimDecision,
    running: Option<String>,
    place: Option<usize>,
    live: &[QueuedTurn],
) -> Result<SendDecision, LeaseError> {
    let first = place == Some(0) || (place.is_none() && live.is_empty());
    if running.is_none() && first {
        let rest = live.iter().filter(|q| q.turn_id != request.turn_id);
        return Ok(SendDecision::Claim(with_queue(
            claim,
            rest.cloned().collect(),
        )));
    }
    if place.is_some() {
        return Ok(SendDecision::Wait {
            join: None,
            stop: None,
        });
    }
    if live.len() >= limits::SEND_QUEUE_TURNS_MAX {
        return Ok(SendDecision::QueueFull);
    }
    let mut queue = live.to_vec();
    queue.push(entry(request));
    Ok(SendDecision::Wait {
        join: Some(joined(env, request.now_ms, queue)?),
        stop: None,
    })
}

/// `latest`: the newest send holds the queue's one place and stops whatever runs.
fn decide_latest(
    env: &SessionEnvelope,
    request: &SendRequest<'_>,
    claim: ClaimDecision,
    running: Option<String>,
    place: Option<usize>,
    live: &[QueuedTurn],
) -> Result<SendDecision, LeaseError> {
    let Some(running) = running else {
        return Ok(SendDecision::Claim(with_queue(claim, Vec::new())));
    };
    if place.is_some_and(|at| at + 1 < live.len()) {
        return Ok(SendDecision::Superseded);
    }
    let join = match place {
        Some(_) => None,
        None => Some(joined(env, request.now_ms, vec![entry(request)])?),
    };
    Ok(SendDecision::Wait {
        join,
        stop: Some(running),
    })
}

/// The queue without `turn_id` (a waiter that gives up early: its deadline fired, its client
/// left), or `None` when it holds no such entry. Save it like any write, against the loaded
/// cursor; when it loses, the entry still expires at its waiter's `wait_until_ms`.
pub fn leave_queue(
    env: &SessionEnvelope,
    turn_id: &str,
    now_ms: u64,
) -> Result<Option<SessionEnvelope>, LeaseError> {
    if !env.queued_turns.iter().any(|q| q.turn_id == turn_id) {
        return Ok(None);
    }
    let rest = live_queue(env, now_ms)
        .into_iter()
        .filter(|q| q.turn_id != turn_id)
        .collect();
    joined(env, now_ms, rest).map(Some)
}

/// A lease holder's own last write moved onto `stored`, when every write since was the queue's
/// (joins and leaves change the cursor, `updatedAt` and `queuedTurns`, nothing else): the
/// holder never reloads (its last write's cursor fences it), so without this a send joining
/// while a turn runs would make that turn's release a conflict. `None` when anything else
/// changed, the lease above all: another claim (a newer one of the same turn id has a later
/// expiry) owns what the holder decided on, and its write must lose.
pub fn rebase_on_queue(
    written: &SessionEnvelope,
    stored: &SessionEnvelope,
) -> Option<SessionEnvelope> {
    let rebased = SessionEnvelope {
        cursor: stored.cursor,
        updated_at: stored.updated_at.clone(),
        queued_turns: stored.queued_turns.clone(),
        ..written.clone()
    };
    (rebased == *stored && stored.cursor > written.cursor).then_some(rebased)
}

/// The entries whose waiters are still waiting, oldest first.
fn live_queue(env: &SessionEnvelope, now_ms: u64) -> Vec<QueuedTurn> {
    env.queued_turns
        .iter()
        .filter(|q| q.expires_at > now_ms)
        .cloned()
        .collect()
}

fn entry(request: &SendRequest<'_>) -> QueuedTurn {
    QueuedTurn {
        turn_id: request.turn_id.to_owned(),
        expires_at: request.wait_until_ms,
    }
}

/// A plain save (the lease untouched) whose queue is `queue`.
fn joined(
    env: &SessionEnvelope,
    now_ms: u64,
    queue: Vec<QueuedTurn>,
) -> Result<SessionEnvelope, LeaseError> {
    let mut next = advance_cursor(env, now_ms)?;
    next.queued_turns = queue;
    Ok(next)
}

fn with_queue(claim: ClaimDecision, queue: Vec<QueuedTurn>) -> ClaimDecision {
    match claim {
        ClaimDecision::Claimed(mut next) => {
            next.queued_turns = queue;
            ClaimDecision::Claimed(next)
        }
        other => other,
    }
}
