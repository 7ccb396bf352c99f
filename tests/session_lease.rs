//! Turn lease (wire facts §5 steps 7 and cleanup 4): claim, busy, replay, release, and a seeded
//! simulation of racing clients over the in-memory CAS storage.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use std::collections::HashSet;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use serde_json::{json, Map};
use turnkeep::core::session::{
    advance_cursor, claim_turn, decode_session_snapshot, new_session, propose_confirmation,
    release_turn, resume_session, ActiveTurn, ClaimDecision, Confirmation, ConfirmationProposal,
    LeaseError, SessionEnvelope, SessionIdentity, TerminalTurn, TurnOutcome,
};
use turnkeep::ports::session::SessionStorage;
use turnkeep::ports::CancelToken;
use turnkeep::storage::MemorySessionStorage;

const NOW_MS: u64 = 1_783_738_800_000;
const LEASE_MS: u64 = 45_000;
const SAFE_MAX: u64 = 9_007_199_254_740_991;

fn identity() -> SessionIdentity {
    SessionIdentity {
        session_id: "s1".into(),
        definition_id: "d1".into(),
        definition_revision: 1,
        conversation: None,
    }
}

/// A session at cursor 5 holding one pending confirmation (to prove it is carried through).
fn session() -> SessionEnvelope {
    let mut env = new_session(&identity(), NOW_MS);
    env.cursor = 4;
    let proposal = ConfirmationProposal {
        suffix: "x1".into(),
        action: "transfer".into(),
        input: Map::from_iter([("amount".to_string(), json!(5))]),
    };
    propose_confirmation(&env, proposal, true, NOW_MS, 300_000)
        .expect("propose")
        .0
}

fn done(ids: &[&str]) -> Vec<TerminalTurn> {
    ids.iter()
        .map(|id| TerminalTurn {
            turn_id: id.to_string(),
            outcome: TurnOutcome::Completed,
        })
        .collect()
}

fn active(id: &str, expires_at: u64) -> Option<ActiveTurn> {
    Some(ActiveTurn {
        turn_id: id.into(),
        expires_at,
    })
}

/// Expected claim result, without the envelope (checked separately for `Claimed`).
#[derive(Debug, PartialEq)]
enum Claim {
    Claimed,
    Busy(String, u64),
    Replayed(TurnOutcome),
    Error(LeaseError),
}

fn check_claim(label: &str, env: &SessionEnvelope, turn_id: &str, now_ms: u64, expected: Claim) {
    let got = match claim_turn(env, turn_id, now_ms, LEASE_MS) {
        Ok(ClaimDecision::Claimed(next)) => {
            assert_eq!(next.cursor, env.cursor + 1, "{label}");
            assert_eq!(
                next.active_turn,
                active(turn_id, now_ms + LEASE_MS),
                "{label}"
            );
            assert_eq!(
                next.updated_at,
                turnkeep::core::checks::format_iso_millis(now_ms as i64),
                "{label}"
            );
            assert_eq!(
                next.confirmations, env.confirmations,
                "{label}: confirmations carried"
            );
            assert_eq!(
                next.terminal_turns, env.terminal_turns,
                "{label}: history untouched"
            );
            Claim::Claimed
        }
        Ok(ClaimDecision::Busy {
            active_turn_id,
            expires_at_ms,
        }) => {
            assert_eq!(
                Some(active_turn_id.as_str()),
                env.active_turn.as_ref().map(|a| a.turn_id.as_str())
            );
            Claim::Busy(active_turn_id, expires_at_ms)
        }
        Ok(ClaimDecision::Replayed { outcome }) => Claim::Replayed(outcome),
        Err(e) => Claim::Error(e),
    };
    assert_eq!(got, expected, "{label}");
}

#[test]
fn claim_cases() {
    let base = session();
    let with = |edit: &dyn Fn(&mut SessionEnvelope)| {
        let mut env = base.clone();
        edit(&mut env);
        env
    };
    let live = NOW_MS + 1;
    let cases: Vec<(&str, SessionEnvelope, &str, u64, Claim)> = vec![
        ("free session", base.clone(), "t1", NOW_MS, Claim::Claimed),
        (
            "unexpired lease",
            with(&|e| e.active_turn = active("other", live)),
            "t1",
            NOW_MS,
            Claim::Busy("other".into(), live),
        ),
        // A turn never re-enters its own live lease.
        (
            "same turn while live",
            with(&|e| e.active_turn = active("t1", live)),
            "t1",
            NOW_MS,
            Claim::Busy("t1".into(), live),
        ),
        (
            "lease expiring exactly now is expired",
            with(&|e| e.active_turn = active("other", NOW_MS)),
            "t1",
            NOW_MS,
            Claim::Claimed,
        ),
        (
            "lapsed lease is overwritten",
            with(&|e| e.active_turn = active("other", NOW_MS - 1)),
            "t1",
            NOW_MS,
            Claim::Claimed,
        ),
        (
            "replay",
            with(&|e| e.terminal_turns = done(&["t0", "t1"])),
            "t1",
            NOW_MS,
            Claim::Replayed(TurnOutcome::Completed),
        ),
        (
            "replay is checked before busy",
            with(&|e| {
                e.terminal_turns = vec![TerminalTurn {
                    turn_id: "t1".into(),
                    outcome: TurnOutcome::Indeterminate,
                }];
                e.active_turn = active("other", live);
            }),
            "t1",
            NOW_MS,
            Claim::Replayed(TurnOutcome::Indeterminate),
        ),
        (
            "turn id not SafeId",
            base.clone(),
            "bad id",
            NOW_MS,
            Claim::Error(LeaseError::InvalidTurnId("bad id".into())),
        ),
        (
            "cursor exhausted",
            with(&|e| e.cursor = SAFE_MAX),
            "t1",
            NOW_MS,
            Claim::Error(LeaseError::CursorExhausted),
        ),
        (
            "expiry beyond 2^53-1",
            base.clone(),
            "t1",
            SAFE_MAX - 10,
            Claim::Error(LeaseError::ExpiryOutOfRange),
        ),
    ];
    for (label, env, turn_id, now_ms, expected) in cases {
        check_claim(label, &env, turn_id, now_ms, expected);
    }
}

#[test]
fn release_clears_only_its_own_lease_and_records_the_outcome() {
    let mut env = session();
    env.active_turn = active("t1", NOW_MS + 5);
    env.terminal_turns = done(&["a", "t1", "b"]);
    let next = release_turn(&env, "t1", TurnOutcome::Indeterminate, NOW_MS + 9).expect("release");
    assert_eq!(next.active_turn, None);
    assert_eq!(next.cursor, env.cursor + 1);
    assert_eq!(next.updated_at, "2026-07-11T03:00:00.009Z");
    let ids: Vec<_> = next
        .terminal_turns
        .iter()
        .map(|t| t.turn_id.as_str())
        .collect();
    assert_eq!(
        ids,
        ["a", "b", "t1"],
        "the older entry of t1 is replaced by the newest"
    );
    assert_eq!(next.terminal_turns[2].outcome, TurnOutcome::Indeterminate);
    assert_eq!(next.confirmations, env.confirmations);

    // A lapsed lease now held by another turn stays with that turn.
    env.active_turn = active("t2", NOW_MS + 50_000);
    let next = release_turn(&env, "t1", TurnOutcome::Completed, NOW_MS).expect("release");
    assert_eq!(next.active_turn, env.active_turn);
    assert_eq!(
        release_turn(&env, "", TurnOutcome::Completed, NOW_MS),
        Err(LeaseError::InvalidTurnId(String::new()))
    );
}

#[test]
fn history_keeps_the_newest_64() {
    let mut env = session();
    for i in 0..70 {
        env =
            release_turn(&env, &format!("t{i}"), TurnOutcome::Completed, NOW_MS).expect("release");
    }
    assert_eq!(env.terminal_turns.len(), 64);
    assert_eq!(
        env.terminal_turns.first().map(|t| t.turn_id.as_str()),
        Some("t6")
    );
    assert_eq!(
        env.terminal_turns.last().map(|t| t.turn_id.as_str()),
        Some("t69")
    );
    assert_eq!(env.cursor, 5 + 70);
    // t5 fell out of the window, so it may run again; t6 is still a replay.
    assert!(matches!(
        claim_turn(&env, "t5", NOW_MS, LEASE_MS),
        Ok(ClaimDecision::Claimed(_))
    ));
    assert!(matches!(
        claim_turn(&env, "t6", NOW_MS, LEASE_MS),
        Ok(ClaimDecision::Replayed { .. })
    ));
    // Every intermediate envelope stays decodable.
    assert!(decode_session_snapshot(&env.to_value()).is_ok());
}

#[test]
fn advance_changes_only_cursor_and_time() {
    let mut env = session();
    env.active_turn = active("t1", NOW_MS + 5);
    let next = advance_cursor(&env, NOW_MS + 1_000).expect("advance");
    assert_eq!(next.cursor, env.cursor + 1);
    assert_eq!(next.updated_at, "2026-07-11T03:00:01.000Z");
    assert_eq!(
        SessionEnvelope {
            cursor: env.cursor,
            updated_at: env.updated_at.clone(),
            ..next
        },
        env
    );
    env.cursor = SAFE_MAX;
    assert_eq!(
        advance_cursor(&env, NOW_MS),
        Err(LeaseError::CursorExhausted)
    );
}

// ---- Seeded simulation -------------------------------------------------------------------

fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
    }
}

/// xorshift64*: deterministic, no crate needed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

enum Op {
    Claim(String),
    Release(String, TurnOutcome),
    Advance,
}

enum Client {
    Idle,
    /// Loaded and decided; the save happens on a later step, so others can interleave.
    Prepared {
        op: Op,
        next: Box<SessionEnvelope>,
        expected: Option<u64>,
        holding: Option<(String, u64)>,
    },
    Holding {
        turn_id: String,
        expires_at: u64,
    },
}

#[derive(Default)]
struct Tally {
    claims: usize,
    busy: usize,
    replays: usize,
    conflicts: usize,
    releases: usize,
}

/// The newest `n` distinct turn ids of the release log: the replay window.
fn window(log: &[(String, TurnOutcome)], n: usize) -> Vec<(String, TurnOutcome)> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (id, outcome) in log.iter().rev() {
        if out.len() == n {
            break;
        }
        if seen.insert(id.clone()) {
            out.push((id.clone(), *outcome));
        }
    }
    out
}

fn load<S: SessionStorage>(store: &S) -> Option<serde_json::Value> {
    block_on(store.load("s1", &CancelToken::new())).expect("load")
}

fn simulate<S: SessionStorage>(store: S, seed: u64, tally: &mut Tally) {
    const CLIENTS: usize = 6;
    const STEPS: usize = 1_500;
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut now = NOW_MS;
    // The session starts with a confirmation that no lease operation may touch.
    let seeded = session();
    let seeded = SessionEnvelope {
        cursor: 0,
        ..seeded
    };
    assert!(block_on(store.save(&seeded.to_value(), None, &CancelToken::new())).expect("seed"));
    let confirmations: Vec<Confirmation> = seeded.confirmations.clone();
    let mut last_cursor = 0u64;
    let mut released: Vec<(String, TurnOutcome)> = Vec::new();
    let mut clients: Vec<Client> = (0..CLIENTS).map(|_| Client::Idle).collect();
    let mut counter = 0u64;

    for _ in 0..STEPS {
        now += rng.below(8_000);
        let c = rng.below(CLIENTS as u64) as usize;
        let state = std::mem::replace(&mut clients[c], Client::Idle);
        clients[c] = match state {
            Client::Idle => {
                let resumed =
                    resume_session(load(&store).as_ref(), &identity(), now).expect("resume");
                let turn_id = if !released.is_empty() && rng.below(4) == 0 {
                    released[rng.below(released.len() as u64) as usize]
                        .0
                        .clone()
                } else {
                    counter += 1;
                    format!("t{seed}-{counter}")
                };
                match claim_turn(&resumed.envelope, &turn_id, now, LEASE_MS).expect("claim") {
                    ClaimDecision::Claimed(next) => {
                        let recent = window(&released, 64);
                        assert!(
                            recent.iter().all(|(id, _)| *id != turn_id),
                            "seed {seed}: {turn_id} re-ran inside the window"
                        );
                        Client::Prepared {
                            op: Op::Claim(turn_id),
                            next: Box::new(next),
                            expected: resumed.expected_cursor,
                            holding: None,
                        }
                    }
                    ClaimDecision::Busy { expires_at_ms, .. } => {
                        assert!(expires_at_ms > now);
                        tally.busy += 1;
                        Client::Idle
                    }
                    ClaimDecision::Replayed { outcome } => {
                        let recent = window(&released, 64);
                        assert!(
                            recent.contains(&(turn_id.clone(), outcome)),
                            "seed {seed}: bogus replay of {turn_id}"
                        );
                        tally.replays += 1;
                        Client::Idle
                    }
                }
            }
            Client::Holding {
                turn_id,
                expires_at,
            } => {
                let roll = rng.below(10);
                if roll < 2 {
                    Client::Idle // crashed: the lease lapses on its own
                } else {
                    let resumed =
                        resume_session(load(&store).as_ref(), &identity(), now).expect("resume");
                    let (op, next) = if roll < 6 {
                        let outcome = if rng.below(3) == 0 {
                            TurnOutcome::Indeterminate
                        } else {
                            TurnOutcome::Completed
                        };
                        let next = release_turn(&resumed.envelope, &turn_id, outcome, now)
                            .expect("release");
                        (Op::Release(turn_id.clone(), outcome), next)
                    } else {
                        (
                            Op::Advance,
                            advance_cursor(&resumed.envelope, now).expect("advance"),
                        )
                    };
                    Client::Prepared {
                        op,
                        next: Box::new(next),
                        expected: resumed.expected_cursor,
                        holding: Some((turn_id, expires_at)),
                    }
                }
            }
            Client::Prepared {
                op,
                next,
                expected,
                holding,
            } => {
                let saved = block_on(store.save(&next.to_value(), expected, &CancelToken::new()))
                    .expect("save");
                if saved {
                    assert_eq!(
                        next.cursor,
                        last_cursor + 1,
                        "seed {seed}: cursor must advance by one per save"
                    );
                    last_cursor = next.cursor;
                    let stored =
                        decode_session_snapshot(&load(&store).expect("stored")).expect("decode");
                    assert!(stored.terminal_turns.len() <= 64);
                    let ids: HashSet<_> =
                        stored.terminal_turns.iter().map(|t| &t.turn_id).collect();
                    assert_eq!(
                        ids.len(),
                        stored.terminal_turns.len(),
                        "seed {seed}: duplicate terminal turn"
                    );
                    assert_eq!(
                        stored.confirmations, confirmations,
                        "seed {seed}: confirmations changed"
                    );
                }
                match (op, saved) {
                    (Op::Claim(turn_id), true) => {
                        tally.claims += 1;
                        // Nobody else may still hold a live lease.
                        for (i, other) in clients.iter().enumerate() {
                            let live = match other {
                                Client::Holding { expires_at, .. } => *expires_at > now,
                                Client::Prepared {
                                    holding: Some((_, e)),
                                    ..
                                } => *e > now,
                                _ => false,
                            };
                            assert!(!live, "seed {seed}: client {i} still holds a live lease while {c} claimed");
                        }
                        Client::Holding {
                            turn_id,
                            expires_at: next.active_turn.as_ref().expect("lease").expires_at,
                        }
                    }
                    (Op::Claim(_), false) => {
                        tally.conflicts += 1;
                        Client::Idle
                    }
                    (Op::Release(turn_id, outcome), true) => {
                        tally.releases += 1;
                        released.push((turn_id, outcome));
                        Client::Idle
                    }
                    (Op::Release(..) | Op::Advance, false) => {
                        tally.conflicts += 1;
                        let (turn_id, expires_at) = holding.expect("a holder");
                        Client::Holding {
                            turn_id,
                            expires_at,
                        }
                    }
                    (Op::Advance, true) => {
                        let (turn_id, expires_at) = holding.expect("a holder");
                        Client::Holding {
                            turn_id,
                            expires_at,
                        }
                    }
                }
            }
        };
    }
}

#[test]
fn seeded_clients_never_share_a_lease() {
    let mut tally = Tally::default();
    for seed in 1..=16 {
        simulate(MemorySessionStorage::new(), seed, &mut tally);
    }
    // The schedules must actually exercise every branch, or the invariants proved nothing.
    assert!(tally.claims > 100, "claims {}", tally.claims);
    assert!(tally.busy > 10, "busy {}", tally.busy);
    assert!(tally.replays > 10, "replays {}", tally.replays);
    assert!(tally.conflicts > 10, "conflicts {}", tally.conflicts);
    assert!(tally.releases > 64, "releases {}", tally.releases);
}

/// Last-write-wins: ignores the expected cursor. Non-conformant on purpose.
#[derive(Default)]
struct LastWriteWins(std::cell::RefCell<Option<serde_json::Value>>);

impl SessionStorage for LastWriteWins {
    fn load<'a>(
        &'a self,
        _: &'a str,
        _: &'a CancelToken,
    ) -> turnkeep::ports::LocalFuture<
        'a,
        Result<Option<serde_json::Value>, turnkeep::ports::PortError>,
    > {
        Box::pin(std::future::ready(Ok(self.0.borrow().clone())))
    }
    fn save<'a>(
        &'a self,
        snapshot: &'a serde_json::Value,
        _: Option<u64>,
        _: &'a CancelToken,
    ) -> turnkeep::ports::LocalFuture<'a, Result<bool, turnkeep::ports::PortError>> {
        *self.0.borrow_mut() = Some(snapshot.clone());
        Box::pin(std::future::ready(Ok(true)))
    }
}

#[test]
fn the_simulation_catches_last_write_wins_storage() {
    // Same schedules over storage without CAS: the invariant checks must trip.
    let caught = (1..=16).any(|seed| {
        std::panic::catch_unwind(|| simulate(LastWriteWins::default(), seed, &mut Tally::default()))
            .is_err()
    });
    assert!(
        caught,
        "the simulation did not notice last-write-wins storage"
    );
}
