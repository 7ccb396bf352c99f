//! Idempotent producer validation (`core::streams::producer`), as a sequence of requests from
//! one producer id (retries, restarts with a new epoch, zombies with an old one, gaps).
//!
//! Properties over the whole sequence:
//! - only `Accepted` moves the state, and then exactly to its `next`;
//! - the epoch never goes down; within an epoch the accepted seqs are 0, 1, 2... with no gap;
//! - an accepted `(epoch, seq)` is never accepted again (a retry is a duplicate or stale), so a
//!   retried append is stored at most once;
//! - every decision's status and headers say what the decision is (204 duplicate echoes the
//!   highest accepted seq, 409 gap names the expected seq...).

use std::collections::HashSet;

use turnkeep::core::limits::INTEGER_SAFE_MAX;
use turnkeep::core::streams::producer::{
    commit_producer, validate_producer, ProducerDecision, ProducerHeaders, ProducerState,
};

use super::gen::Gen;

pub fn run(data: &[u8]) {
    // Every input drives the generator: raw bytes mean nothing to a state machine.
    let mut g = Gen::new(data);
    let mut state: Option<ProducerState> = None;
    let mut accepted: HashSet<(u64, u64)> = HashSet::new();
    for _ in 0..g.below(64) + 1 {
        let headers = request(&mut g, state);
        let decision = validate_producer(state.as_ref(), &headers);
        check_decision(state, &headers, &decision);
        let next = commit_producer(state.as_ref(), &decision);
        match decision {
            ProducerDecision::Accepted { next: moved, .. } => {
                assert_eq!(next, Some(moved));
                assert!(
                    accepted.insert((headers.epoch, headers.seq)),
                    "accepted twice: {headers:?}"
                );
            }
            _ => assert_eq!(next, state, "only Accepted moves the state"),
        }
        state = next;
    }
}

/// The next request: usually the right next seq, often a retry, sometimes a restart (new
/// epoch), a zombie (older epoch) or a jump ahead.
fn request(g: &mut Gen<'_>, state: Option<ProducerState>) -> ProducerHeaders {
    let (epoch, last) = state.map_or((g.u64_in(0, 3), None), |s| (s.epoch, Some(s.last_seq)));
    let (epoch, seq) = match g.below(8) {
        0 | 1 | 2 => (epoch, last.map_or(0, |l| l.saturating_add(1))),
        3 => (epoch, last.map_or(0, |l| l.saturating_sub(g.u64_in(0, 2)))),
        4 => (epoch.saturating_add(1), g.pick(&[0, 0, 1])),
        5 => (epoch.saturating_sub(1), g.u64_in(0, 3)),
        6 => (epoch, last.unwrap_or(0).saturating_add(g.u64_in(2, 5))),
        _ => (
            g.pick(&[0, INTEGER_SAFE_MAX, epoch]),
            g.pick(&[0, INTEGER_SAFE_MAX, INTEGER_SAFE_MAX - 1]),
        ),
    };
    ProducerHeaders {
        id: "p1".into(),
        epoch,
        seq,
        items: None,
    }
}

fn check_decision(state: Option<ProducerState>, h: &ProducerHeaders, decision: &ProducerDecision) {
    let headers = decision.response_headers();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.parse::<u64>().expect("numeric header"))
    };
    match *decision {
        ProducerDecision::Accepted { next, .. } => {
            assert_eq!(decision.status(), 200);
            assert_eq!((next.epoch, next.last_seq), (h.epoch, h.seq));
            match state {
                None => assert_eq!(h.seq, 0),
                Some(s) if h.epoch == s.epoch => assert_eq!(h.seq, s.last_seq + 1, "no gap"),
                Some(s) => assert!(h.epoch > s.epoch && h.seq == 0, "new epoch starts at 0"),
            }
            assert_eq!(
                (header("Producer-Epoch"), header("Producer-Seq")),
                (Some(h.epoch), Some(h.seq))
            );
        }
        ProducerDecision::Duplicate { epoch, highest_seq } => {
            let s = state.expect("a duplicate of something");
            assert_eq!(decision.status(), 204);
            assert_eq!((epoch, highest_seq), (s.epoch, s.last_seq));
            assert!(h.epoch == s.epoch && h.seq <= s.last_seq);
            assert_eq!(header("Producer-Seq"), Some(s.last_seq));
        }
        ProducerDecision::StaleEpoch { current_epoch } => {
            let s = state.expect("stale against something");
            assert_eq!(decision.status(), 403);
            assert!(h.epoch < s.epoch && current_epoch == s.epoch);
            assert_eq!(header("Producer-Epoch"), Some(s.epoch));
        }
        ProducerDecision::NewEpochSeqNotZero { epoch, seq } => {
            assert_eq!(decision.status(), 400);
            assert!(state.is_some_and(|s| epoch > s.epoch) && seq != 0);
        }
        ProducerDecision::SequenceGap { expected, received } => {
            assert_eq!(decision.status(), 409);
            assert_eq!(received, h.seq);
            assert_eq!(expected, state.map_or(0, |s| s.last_seq + 1));
            assert!(received > expected);
            assert_eq!(header("Producer-Expected-Seq"), Some(expected));
        }
    }
}
