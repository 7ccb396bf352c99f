//! A deterministic simulation of chat requests racing for one session's turn lease.
//!
//! Six clients load the session, decide with the core's pure lease rules (a holder's writes with
//! `turn::HeldLease`, as a running turn decides them) and save through the one commit site
//! (`turn::commit_session`, as the chat handler does), with their steps interleaved by one
//! seeded PRNG, which also drives every fault:
//! - **conflicts**: another writer saves the session between a client's load and its save;
//! - **lost acknowledgements**: the write happens, the writer sees an error;
//! - **failed writes**: the write does not happen, the writer sees an error;
//! - **crashes**: a client forgets everything it held in memory (a claimed lease, a decided
//!   save), e.g. between its claim and its release;
//! - **the clock**: it repeats the same instant, jumps forward past leases, or lands exactly on a
//!   lease's recorded expiry.
//!
//! How often each fault strikes is drawn per seed, so some seeds hammer one kind.
//!
//! After every step the simulation loads what storage really holds and checks:
//! 1. at most one client holds a live lease, and storage holds exactly that lease;
//! 2. every acknowledged write is in storage, and each applied write moves the cursor by one;
//! 3. the terminal history is the newest 64 released turns, and a turn id in it never runs
//!    again; pending confirmations are never touched;
//! 4. a lease nobody releases (a crash, a lost acknowledgement) keeps its recorded expiry: a
//!    `Busy` answer names a lease the run claimed, with that expiry, still in the future; and
//!    at the end of the run, at the last lease's recorded expiry, the session accepts a new turn.
//!
//! A broken invariant stops the run with a [`Failure`]: the seed and the steps that led there.

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use serde_json::{json, Map, Value};
use turnkeep::core::limits::TERMINAL_TURNS_MAX;
use turnkeep::core::session::{
    advance_cursor, claim_turn, decode_session_snapshot, new_session, propose_confirmation,
    release_turn, resume_session, ClaimDecision, Confirmation, ConfirmationProposal, LeaseError,
    SessionEnvelope, SessionIdentity, SessionWrite, TurnOutcome, TurnSettlement, WriteKind,
};
use turnkeep::ports::chat::{Clock, Sleep};
use turnkeep::ports::session::SessionStorage;
use turnkeep::ports::{CancelToken, LocalFuture, PortError};
use turnkeep::turn::{
    commit_session, HeldLease, IgnoreFaults, Interrupt, SaveFailure, Saved, SessionPorts,
    WriteBudget,
};

pub const LEASE_MS: u64 = 45_000;
const START_MS: u64 = 1_783_738_800_000;
const CLIENTS: usize = 6;
/// Steps of the trace a failure prints.
const TRACE_STEPS: usize = 40;

pub fn identity() -> SessionIdentity {
    SessionIdentity {
        session_id: "s1".into(),
        definition_id: "d1".into(),
        definition_revision: 1,
        conversation: None,
    }
}

pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
    }
}

/// xorshift64*: the simulation's only randomness, seeded.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }
}

/// How often each fault strikes, in percent of the chances it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Faults {
    /// Of saves: another writer saves first.
    pub conflict: u64,
    /// Of saves: written, but the writer sees an error.
    pub lost_ack: u64,
    /// Of saves: not written, and the writer sees an error.
    pub failed_write: u64,
    /// Of steps of a busy client: it forgets everything.
    pub crash: u64,
    /// Of steps: the clock does not move.
    pub clock_repeat: u64,
    /// Of steps: the clock jumps past the lease time, or onto a lease's expiry.
    pub clock_jump: u64,
}

impl Faults {
    /// Every fault kind, rarely: long runs whose turns mostly finish.
    pub const MILD: Faults = Faults {
        conflict: 2,
        lost_ack: 2,
        failed_write: 2,
        crash: 2,
        clock_repeat: 2,
        clock_jump: 1,
    };

    /// A fault mix for one seed: each kind off, rare or frequent. The clock gets a chance
    /// on every step, so its levels are lower (a jump lapses every lease).
    pub fn draw(rng: &mut Rng) -> Faults {
        let mut level = |levels: [u64; 6]| levels[rng.below(6) as usize];
        const PER_SAVE: [u64; 6] = [0, 0, 2, 5, 15, 30];
        const PER_STEP: [u64; 6] = [0, 0, 1, 2, 5, 10];
        Faults {
            conflict: level(PER_SAVE),
            lost_ack: level(PER_SAVE),
            failed_write: level(PER_SAVE),
            crash: level(PER_SAVE),
            clock_repeat: level(PER_STEP),
            clock_jump: level(PER_STEP),
        }
    }
}

/// The claim rule under test: `claim_turn`, or a deliberately broken one.
pub type ClaimRule = fn(&SessionEnvelope, &str, u64, u64) -> Result<ClaimDecision, LeaseError>;

#[derive(Clone, Copy)]
pub struct Config {
    pub steps: usize,
    /// `None`: draw the faults from the seed.
    pub faults: Option<Faults>,
    pub claim: ClaimRule,
    /// Holders save against their own last write, as the chat handler does (see [`Lease`]).
    pub fenced: bool,
}

impl Config {
    pub fn new(steps: usize) -> Self {
        Config {
            steps,
            faults: None,
            claim: claim_turn,
            fenced: true,
        }
    }
}

/// What the runs exercised, so a test can prove every branch was reached.
#[derive(Debug, Default)]
pub struct Tally {
    pub steps: u64,
    pub claims: u64,
    pub busy: u64,
    pub replays: u64,
    pub conflicts: u64,
    pub releases: u64,
    pub lost_acks: u64,
    pub failed_writes: u64,
    pub crashes: u64,
    pub clock_repeats: u64,
    pub clock_jumps: u64,
    /// Claims that took over a lease nobody released, after its expiry.
    pub lapsed_taken_over: u64,
}

/// A broken invariant: the seed, what broke, and the last steps before it.
#[derive(Debug)]
pub struct Failure {
    pub seed: u64,
    /// The shortest run of this seed that fails the same way: up to the failing step (the
    /// runs of one seed share their prefix), or the whole run when the final check failed.
    pub steps: usize,
    pub faults: Faults,
    pub message: String,
    pub trace: Vec<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "lease simulation seed {} failed after {} steps: {}",
            self.seed, self.steps, self.message
        )?;
        writeln!(f, "faults: {:?}", self.faults)?;
        writeln!(
            f,
            "last {} steps (time in ms after the start):",
            self.trace.len()
        )?;
        for line in &self.trace {
            writeln!(f, "  {line}")?;
        }
        write!(
            f,
            "replay: TURNKEEP_LEASE_SEED={} TURNKEEP_LEASE_STEPS={} cargo test --test session_lease \
             one_seed -- --nocapture\n\
             keep it: add ({}, {}) to REGRESSION_SEEDS in tests/session_lease.rs",
            self.seed, self.steps, self.seed, self.steps
        )
    }
}

/// A write a client decided and has not saved yet.
#[derive(Clone, Debug)]
enum Op {
    /// Claim `turn_id`, decided at `at_ms`.
    Claim {
        turn_id: String,
        at_ms: u64,
    },
    Release(String, TurnOutcome),
    Advance,
}

/// A lease a client believes it holds: the chat handler's holder (`turn::HeldLease`), which
/// decides every write of its turn on the envelope its own last save wrote and never reloads,
/// so a save after anyone else's write is a conflict.
#[derive(Clone)]
struct Lease(HeldLease);

impl Lease {
    fn turn_id(&self) -> &str {
        self.0.turn_id()
    }
    fn expires_at(&self) -> u64 {
        self.0.expires_at()
    }
}

impl fmt::Debug for Lease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} until {}", self.turn_id(), self.expires_at())
    }
}

enum Client {
    Idle,
    /// Loaded and decided; the save comes on a later step, so others interleave.
    Prepared {
        op: Op,
        write: Box<SessionWrite>,
        lease: Option<Lease>,
        /// The client still runs its turn (false for a release retry).
        running: bool,
    },
    Holding(Lease),
    /// Its turn ended but the release save failed: it retries the release (and no longer
    /// runs anything, so it counts as no holder even while the stored lease is live).
    Releasing(Lease, TurnOutcome),
}

impl Client {
    /// The lease of the turn this client is running.
    fn lease(&self) -> Option<&Lease> {
        match self {
            Client::Holding(lease) => Some(lease),
            Client::Prepared {
                lease,
                running: true,
                ..
            } => lease.as_ref(),
            _ => None,
        }
    }
}

/// What a save did, as the writer saw it and as it really was.
enum Fault {
    None,
    Conflict,
    LostAck,
    FailedWrite,
}

/// One run's state: storage, clients, clock, and the model of what storage must hold.
struct Sim<'a, S: SessionStorage> {
    store: &'a S,
    /// Never fired: cancellation is not one of the simulated faults.
    cancel: CancelToken,
    config: Config,
    faults: Faults,
    rng: Rng,
    now: u64,
    clients: Vec<Client>,
    /// Every turn id ever released (retries of finished turns are drawn from it).
    released: Vec<String>,
    /// The model of the terminal history: the newest 64 distinct released turns, oldest
    /// first, each with its latest outcome.
    history: VecDeque<(String, TurnOutcome)>,
    /// What storage holds, reloaded after every write attempt (the simulation is the only
    /// writer, so it is what storage holds at every step).
    stored: Option<SessionEnvelope>,
    /// The expiry each turn id's latest applied claim recorded.
    claimed: HashMap<String, u64>,
    /// Turn ids claimed but never released (crashed, failed, abandoned): they may run again.
    unfinished: Vec<String>,
    /// The cursor storage must hold: one more per applied write.
    cursor: u64,
    confirmations: Vec<Confirmation>,
    counter: u64,
    trace: VecDeque<String>,
    step: usize,
}

type Check = Result<(), String>;

fn fail(message: impl Into<String>) -> Check {
    Err(message.into())
}

pub fn simulate<S: SessionStorage>(
    store: &S,
    seed: u64,
    config: Config,
    tally: &mut Tally,
) -> Result<(), Failure> {
    let mut rng = Rng::new(seed);
    let faults = config.faults.unwrap_or_else(|| Faults::draw(&mut rng));
    let mut sim = Sim {
        store,
        cancel: CancelToken::new(),
        config,
        faults,
        rng,
        now: START_MS,
        clients: (0..CLIENTS).map(|_| Client::Idle).collect(),
        released: Vec::new(),
        history: VecDeque::new(),
        stored: None,
        claimed: HashMap::new(),
        unfinished: Vec::new(),
        cursor: 0,
        confirmations: Vec::new(),
        counter: 0,
        trace: VecDeque::new(),
        step: 0,
    };
    let result = sim.run(tally);
    let finished = sim.step + 1 == config.steps || config.steps == 0;
    result.map_err(|message| Failure {
        seed,
        steps: if finished { config.steps } else { sim.step + 1 },
        faults,
        message,
        trace: sim.trace.into_iter().collect(),
    })
}

impl<S: SessionStorage> Sim<'_, S> {
    fn run(&mut self, tally: &mut Tally) -> Check {
        self.seed_session()?;
        for step in 0..self.config.steps {
            self.step = step;
            tally.steps += 1;
            self.tick(tally);
            let c = self.pick_client();
            self.act(c, tally)?;
            self.check_storage()?;
        }
        self.check_a_new_turn_is_accepted(tally)
    }

    /// Half the steps go to a client that is in the middle of something (so turns finish
    /// within their lease unless a fault intervenes), the rest to anyone.
    fn pick_client(&mut self) -> usize {
        let busy: Vec<usize> = (0..CLIENTS)
            .filter(|c| !matches!(self.clients[*c], Client::Idle))
            .collect();
        if !busy.is_empty() && self.rng.below(2) == 0 {
            busy[self.rng.below(busy.len() as u64) as usize]
        } else {
            self.rng.below(CLIENTS as u64) as usize
        }
    }

    fn note(&mut self, c: Option<usize>, what: String) {
        if self.trace.len() == TRACE_STEPS {
            self.trace.pop_front();
        }
        let who = c.map_or("--".to_owned(), |c| format!("c{c}"));
        self.trace.push_back(format!(
            "#{:<5} t+{:<9} {who} {what}",
            self.step,
            self.now - START_MS
        ));
    }

    /// The session starts saved, holding one confirmation no lease operation may touch.
    fn seed_session(&mut self) -> Check {
        let env = new_session(&identity(), self.now);
        let proposal = ConfirmationProposal {
            suffix: "x1".into(),
            action: "transfer".into(),
            input: Map::from_iter([("amount".to_string(), json!(5))]),
        };
        let (env, _) = propose_confirmation(&env, proposal, true, self.now, 300_000)
            .map_err(|e| format!("propose: {e:?}"))?;
        let env = SessionEnvelope { cursor: 0, ..env };
        self.confirmations = env.confirmations.clone();
        match block_on(self.store.save(&env.to_value(), None, &self.cancel)) {
            Ok(true) => self.reload(),
            other => fail(format!("the first save answered {other:?}")),
        }
    }

    fn tick(&mut self, tally: &mut Tally) {
        let roll = self.rng.below(100);
        if roll < self.faults.clock_repeat {
            tally.clock_repeats += 1;
            return;
        }
        if roll < self.faults.clock_repeat + self.faults.clock_jump {
            tally.clock_jumps += 1;
            let expiry = self
                .stored
                .as_ref()
                .and_then(|e| e.active_turn.as_ref())
                .map(|a| a.expires_at);
            match expiry {
                Some(at) if self.rng.below(2) == 0 => self.now = self.now.max(at),
                _ => self.now += LEASE_MS + self.rng.below(LEASE_MS),
            }
            let what = "clock jump".to_owned();
            self.note(None, what);
            return;
        }
        self.now += self.rng.below(1_000);
    }

    fn load(&self) -> Result<Option<SessionEnvelope>, String> {
        let stored =
            block_on(self.store.load("s1", &self.cancel)).map_err(|e| format!("load: {e:?}"))?;
        stored
            .map(|v| decode_session_snapshot(&v).map_err(|e| format!("stored session: {e}")))
            .transpose()
    }

    fn reload(&mut self) -> Check {
        self.stored = self.load()?;
        Ok(())
    }

    fn resume(&self) -> Result<(SessionEnvelope, Option<u64>), String> {
        let stored =
            block_on(self.store.load("s1", &self.cancel)).map_err(|e| format!("load: {e:?}"))?;
        let resumed = resume_session(stored.as_ref(), &identity(), self.now)
            .map_err(|e| format!("resume: {e:?}"))?;
        Ok((resumed.envelope, resumed.expected_cursor))
    }

    fn act(&mut self, c: usize, tally: &mut Tally) -> Check {
        let busy = !matches!(self.clients[c], Client::Idle);
        if busy && self.rng.percent(self.faults.crash) {
            tally.crashes += 1;
            if let Some(lease) = self.clients[c].lease() {
                let what = format!(
                    "crash, forgets lease {} (expires t+{})",
                    lease.turn_id(),
                    lease.expires_at() - START_MS
                );
                self.note(Some(c), what);
            } else {
                self.note(Some(c), "crash before its save".into());
            }
            self.clients[c] = Client::Idle;
            return Ok(());
        }
        match std::mem::replace(&mut self.clients[c], Client::Idle) {
            // An idle client submits a turn now and then, not on every chance it gets.
            Client::Idle if self.rng.below(2) == 0 => Ok(()),
            Client::Idle => self.start_turn(c, tally),
            Client::Holding(lease) => self.continue_turn(c, lease),
            Client::Releasing(lease, outcome) => self.release(c, lease, outcome, false),
            Client::Prepared {
                op, write, lease, ..
            } => self.save(c, op, *write, lease, tally),
        }
    }

    /// An idle client submits a turn: new, or a retry of a finished or unfinished one.
    fn start_turn(&mut self, c: usize, tally: &mut Tally) -> Check {
        let (env, expected) = self.resume()?;
        let turn_id = match self.rng.below(8) {
            0 | 1 if !self.released.is_empty() => {
                let i = self.rng.below(self.released.len() as u64) as usize;
                self.released[i].clone()
            }
            2 if !self.unfinished.is_empty() => {
                let i = self.rng.below(self.unfinished.len() as u64) as usize;
                self.unfinished[i].clone()
            }
            _ => {
                self.counter += 1;
                format!("t{}", self.counter)
            }
        };
        let decision = (self.config.claim)(&env, &turn_id, self.now, LEASE_MS)
            .map_err(|e| format!("claim {turn_id}: {e}"))?;
        match decision {
            ClaimDecision::Claimed(next) => {
                self.note(
                    Some(c),
                    format!("claim {turn_id} decided at cursor {}", env.cursor),
                );
                let kind = WriteKind::Claim {
                    turn_id: turn_id.clone(),
                };
                let write = SessionWrite::on_loaded(kind, &env, expected, next, self.now);
                let op = Op::Claim {
                    turn_id,
                    at_ms: self.now,
                };
                self.clients[c] = Client::Prepared {
                    op,
                    write: Box::new(write),
                    lease: None,
                    running: false,
                };
                Ok(())
            }
            ClaimDecision::Busy {
                active_turn_id,
                expires_at_ms,
            } => {
                tally.busy += 1;
                self.note(
                    Some(c),
                    format!(
                        "claim {turn_id}: busy ({active_turn_id} until t+{})",
                        expires_at_ms.saturating_sub(START_MS)
                    ),
                );
                if expires_at_ms <= self.now {
                    return fail(format!(
                        "{turn_id} refused as busy at t+{} by {active_turn_id}, at or after that \
                         lease's recorded expiry t+{}",
                        self.now - START_MS,
                        expires_at_ms.saturating_sub(START_MS)
                    ));
                }
                match self.claimed.get(&active_turn_id) {
                    Some(at) if *at == expires_at_ms => Ok(()),
                    recorded => fail(format!(
                        "busy names lease {active_turn_id} until {expires_at_ms}, but its claim recorded {recorded:?}"
                    )),
                }
            }
            ClaimDecision::Replayed { outcome } => {
                tally.replays += 1;
                self.note(Some(c), format!("claim {turn_id}: replayed ({outcome:?})"));
                if self.history.contains(&(turn_id.clone(), outcome)) {
                    Ok(())
                } else {
                    fail(format!(
                        "{turn_id} refused as a replay ({outcome:?}) but it is not in the history"
                    ))
                }
            }
        }
    }

    /// A holder's plain save during its turn: decided on its own last write (fenced), or on a
    /// fresh load (`Config::fenced` false, to show why not).
    fn advance_write(&self, lease: &Lease) -> Result<SessionWrite, String> {
        let (base, expected) = if self.config.fenced {
            let written = lease.0.envelope().clone();
            let cursor = written.cursor;
            (written, Some(cursor))
        } else {
            self.resume()?
        };
        let next = advance_cursor(&base, self.now).map_err(|e| format!("advance: {e}"))?;
        Ok(SessionWrite::on_loaded(
            WriteKind::Keep,
            &base,
            expected,
            next,
            self.now,
        ))
    }

    /// A holder's release: `HeldLease::release` (fenced), or `release_turn` on a fresh load.
    fn release_write(&self, lease: &Lease, outcome: TurnOutcome) -> Result<SessionWrite, String> {
        if self.config.fenced {
            let settlement = TurnSettlement {
                outcome,
                resolved: None,
                proposed: &[],
            };
            let (write, _) = lease
                .0
                .release(settlement, self.now)
                .map_err(|e| format!("release: {e}"))?;
            return Ok(write);
        }
        let (env, expected) = self.resume()?;
        let turn_id = lease.turn_id().to_owned();
        let next =
            release_turn(&env, &turn_id, outcome, self.now).map_err(|e| format!("release: {e}"))?;
        let kind = WriteKind::Release { turn_id };
        Ok(SessionWrite::on_loaded(
            kind, &env, expected, next, self.now,
        ))
    }

    /// A client holding a lease ends its turn (release) or saves again during it.
    fn continue_turn(&mut self, c: usize, lease: Lease) -> Check {
        if self.rng.below(4) < 3 {
            let outcome = if self.rng.below(3) == 0 {
                TurnOutcome::Indeterminate
            } else {
                TurnOutcome::Completed
            };
            return self.release(c, lease, outcome, true);
        }
        let write = self.advance_write(&lease)?;
        self.note(
            Some(c),
            format!(
                "advance {} decided at cursor {}",
                lease.turn_id(),
                write.base.cursor
            ),
        );
        self.clients[c] = Client::Prepared {
            op: Op::Advance,
            write: Box::new(write),
            lease: Some(lease),
            running: true,
        };
        Ok(())
    }

    /// Decides the release of `lease` (`running`: the first attempt, else a retry).
    fn release(&mut self, c: usize, lease: Lease, outcome: TurnOutcome, running: bool) -> Check {
        let write = self.release_write(&lease, outcome)?;
        let again = if running { "" } else { " again" };
        self.note(
            Some(c),
            format!(
                "release {}{again} decided at cursor {}",
                lease.turn_id(),
                write.base.cursor
            ),
        );
        self.clients[c] = Client::Prepared {
            op: Op::Release(lease.turn_id().to_owned(), outcome),
            write: Box::new(write),
            lease: Some(lease),
            running,
        };
        Ok(())
    }

    /// Sends `write` through the one commit site, the store under test behind `inject`. A
    /// claim runs under a request deadline (one that never fires), a holder's write under its
    /// cleanup budget, as in the chat handler. `Err` when the commit refused a write the rules
    /// decided (an assertion fired): that is a failure of the run.
    fn commit(&self, write: SessionWrite, inject: Inject) -> Result<Result<bool, String>, String> {
        let storage = Injecting {
            inner: self.store,
            inject: Cell::new(inject),
        };
        let ports = SessionPorts {
            storage: &storage,
            clock: &At(self.now),
            sleep: &Never,
            faults: &IgnoreFaults,
            cleanup_budget_ms: CLEANUP_BUDGET_MS,
        };
        let deadline = Interrupt::new();
        let budget = match write.kind {
            WriteKind::Claim { .. } => WriteBudget::Deadline(&deadline),
            _ => WriteBudget::Cleanup,
        };
        match block_on(commit_session(&ports, write, budget)) {
            Ok(Saved::Written) => Ok(Ok(true)),
            Ok(Saved::Conflict) => Ok(Ok(false)),
            Err(SaveFailure::Store(e)) => Ok(Err(e.message)),
            Err(other) => Err(format!("the commit refused a decided write: {other:?}")),
        }
    }

    /// The save of a decided write, with the fault this save draws.
    fn save(
        &mut self,
        c: usize,
        op: Op,
        write: SessionWrite,
        lease: Option<Lease>,
        tally: &mut Tally,
    ) -> Check {
        let fault = self.draw_fault();
        if let Fault::Conflict = fault {
            self.outside_write()?;
        }
        let before = self.stored.take();
        let inject = match fault {
            Fault::FailedWrite => {
                tally.failed_writes += 1;
                Inject::FailedWrite
            }
            Fault::LostAck => {
                tally.lost_acks += 1;
                Inject::LostAck
            }
            Fault::None | Fault::Conflict => Inject::Nothing,
        };
        let next = write.next.clone();
        let written = lease.as_ref().map(|l| l.0.stored(&write));
        let answer = self.commit(write, inject)?;
        match fault {
            Fault::FailedWrite => self.stored = before.clone(), // storage was not called
            _ => self.reload()?,
        }
        let applied = self.stored.as_ref() == Some(&next) && before.as_ref() != Some(&next);
        self.note(
            Some(c),
            format!(
                "save {op:?} -> {answer:?}{}",
                if applied { ", written" } else { "" }
            ),
        );
        if answer == Ok(true) && !applied {
            return fail(format!("storage acknowledged {op:?} but does not hold it"));
        }
        if applied {
            self.cursor += 1;
            self.applied(&op, before.as_ref(), &next, tally)?;
        }
        if answer == Ok(false) {
            tally.conflicts += 1;
        }
        let lease = || lease.clone().ok_or("a holder's save without a lease");
        self.clients[c] = match (op, answer) {
            (Op::Claim { turn_id, .. }, Ok(true)) => {
                tally.claims += 1;
                Client::Holding(Lease(HeldLease::new(&turn_id, next)))
            }
            // Lost the race, or the request failed: if the write happened anyway, the lease is
            // nobody's and lapses at its expiry.
            (Op::Claim { .. }, _) => Client::Idle,
            // Released, or someone else wrote since this holder's last save: its fenced
            // release can never succeed, so the lease lapses (the chat handler's behaviour).
            (Op::Release(..), Ok(_)) => Client::Idle,
            // After an error the turn is over: retry the release later (a lost acknowledgement
            // makes the retry a conflict), or give up and let the lease lapse.
            (Op::Release(..), Err(_)) if self.rng.below(2) == 0 => Client::Idle,
            (Op::Release(_, outcome), Err(_)) => Client::Releasing(lease()?, outcome),
            (Op::Advance, Ok(true)) => {
                Client::Holding(Lease(written.ok_or("an advance without a lease")?))
            }
            // A lost acknowledgement may have written it, but the client cannot know.
            (Op::Advance, _) => Client::Holding(lease()?),
        };
        Ok(())
    }

    fn draw_fault(&mut self) -> Fault {
        let f = self.faults;
        let roll = self.rng.below(100);
        if roll < f.conflict {
            Fault::Conflict
        } else if roll < f.conflict + f.lost_ack {
            Fault::LostAck
        } else if roll < f.conflict + f.lost_ack + f.failed_write {
            Fault::FailedWrite
        } else {
            Fault::None
        }
    }

    /// Another request saves the session (a confirmation write, say): cursor + 1, nothing else.
    fn outside_write(&mut self) -> Check {
        let Some(env) = &self.stored else {
            return Ok(());
        };
        let next = advance_cursor(env, self.now).map_err(|e| format!("advance: {e}"))?;
        let saved = block_on(
            self.store
                .save(&next.to_value(), Some(env.cursor), &self.cancel),
        );
        self.reload()?;
        if saved != Ok(true) {
            return fail(format!("an uncontended outside write answered {saved:?}"));
        }
        self.cursor += 1;
        self.note(None, format!("outside write, cursor {}", next.cursor));
        Ok(())
    }

    /// The model follows a write that storage really holds.
    fn applied(
        &mut self,
        op: &Op,
        before: Option<&SessionEnvelope>,
        next: &SessionEnvelope,
        tally: &mut Tally,
    ) -> Check {
        match op {
            Op::Claim { turn_id, at_ms } => {
                if self.history.iter().any(|(id, _)| id == turn_id) {
                    return fail(format!(
                        "{turn_id} ran again while it is in the terminal history"
                    ));
                }
                let expires_at = next.active_turn.as_ref().map_or(0, |a| a.expires_at);
                if expires_at != at_ms + LEASE_MS {
                    return fail(format!(
                        "{turn_id} decided at {at_ms} recorded expiry {expires_at}"
                    ));
                }
                if let Some(lapsed) = before.and_then(|b| b.active_turn.as_ref()) {
                    tally.lapsed_taken_over += 1; // a lease nobody released, past its expiry
                                                  // Its turn's outcome is unknown: it enters the history as indeterminate.
                    if lapsed.turn_id != *turn_id {
                        self.record(lapsed.turn_id.clone(), TurnOutcome::Indeterminate);
                    }
                }
                self.claimed.insert(turn_id.clone(), expires_at);
                self.unfinished.push(turn_id.clone());
            }
            Op::Release(turn_id, outcome) => {
                tally.releases += 1;
                self.released.push(turn_id.clone());
                self.record(turn_id.clone(), *outcome);
                self.unfinished.retain(|id| id != turn_id);
            }
            Op::Advance => {}
        }
        Ok(())
    }

    /// `turn_id` is the newest entry of the terminal history the model expects.
    fn record(&mut self, turn_id: String, outcome: TurnOutcome) {
        self.history.retain(|(id, _)| *id != turn_id);
        self.history.push_back((turn_id, outcome));
        if self.history.len() > TERMINAL_TURNS_MAX {
            self.history.pop_front();
        }
    }

    /// Invariants 1-3 against what storage holds now.
    fn check_storage(&mut self) -> Check {
        let stored = self.stored.as_ref().ok_or("the session disappeared")?;
        if stored.cursor != self.cursor {
            return fail(format!(
                "storage holds cursor {}, but {} writes were applied",
                stored.cursor, self.cursor
            ));
        }
        let history: Vec<(String, TurnOutcome)> = stored
            .terminal_turns
            .iter()
            .map(|t| (t.turn_id.clone(), t.outcome))
            .collect();
        if !history.iter().eq(self.history.iter()) {
            return fail(format!(
                "terminal history {history:?} is not the newest released turns {:?}",
                self.history
            ));
        }
        if stored.confirmations != self.confirmations {
            return fail("the pending confirmation changed");
        }
        let live: Vec<(usize, &Lease)> = self
            .clients
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.lease().map(|l| (i, l)))
            .filter(|(_, l)| l.expires_at() > self.now)
            .collect();
        if live.len() > 1 {
            return fail(format!(
                "{} clients hold a live lease: {live:?}",
                live.len()
            ));
        }
        if let Some((i, lease)) = live.first() {
            let held = stored
                .active_turn
                .as_ref()
                .map(|a| (a.turn_id.as_str(), a.expires_at));
            if held != Some((lease.turn_id(), lease.expires_at())) {
                return fail(format!(
                    "client {i} holds live lease {lease:?}, storage holds {held:?}"
                ));
            }
        }
        Ok(())
    }

    /// Invariant 4's end: at the recorded expiry of whatever lease storage still holds, a new
    /// turn is claimed and saved at once.
    fn check_a_new_turn_is_accepted(&mut self, tally: &mut Tally) -> Check {
        let stored = self.stored.as_ref().ok_or("the session disappeared")?;
        if let Some(active) = &stored.active_turn {
            self.now = self.now.max(active.expires_at);
        }
        let (env, expected) = self.resume()?;
        let turn_id = "final-turn";
        self.note(None, format!("final claim {turn_id}"));
        match (self.config.claim)(&env, turn_id, self.now, LEASE_MS) {
            Ok(ClaimDecision::Claimed(next)) => {
                let saved = block_on(self.store.save(&next.to_value(), expected, &self.cancel));
                if saved != Ok(true) {
                    return fail(format!("the final claim's save answered {saved:?}"));
                }
                tally.claims += 1;
                Ok(())
            }
            other => fail(format!(
                "at the lease's recorded expiry t+{} the session refused a new turn: {other:?}",
                self.now - START_MS
            )),
        }
    }
}

/// A holder's cleanup budget (never reached: storage answers at once, and [`Never`] sleeps).
const CLEANUP_BUDGET_MS: u64 = 5_000;

/// The fault the next save meets.
#[derive(Clone, Copy)]
enum Inject {
    Nothing,
    /// Not written, and the writer sees an error.
    FailedWrite,
    /// Written, but the writer sees an error.
    LostAck,
}

/// The store under test with this save's fault in front of it.
struct Injecting<'s, S> {
    inner: &'s S,
    inject: Cell<Inject>,
}

impl<S: SessionStorage> SessionStorage for Injecting<'_, S> {
    fn load<'a>(
        &'a self,
        id: &'a str,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Option<Value>, PortError>> {
        self.inner.load(id, cancel)
    }
    fn save<'a>(
        &'a self,
        snapshot: &'a Value,
        expected: Option<u64>,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<bool, PortError>> {
        let inject = self.inject.replace(Inject::Nothing);
        Box::pin(async move {
            match inject {
                Inject::FailedWrite => Err(PortError::new("failed write")),
                Inject::LostAck => {
                    let _ = self.inner.save(snapshot, expected, cancel).await;
                    Err(PortError::new("lost acknowledgement"))
                }
                Inject::Nothing => self.inner.save(snapshot, expected, cancel).await,
            }
        })
    }
}

/// The simulation's clock at one step.
struct At(u64);

impl Clock for At {
    fn now_ms(&self) -> u64 {
        self.0
    }
}

/// A sleep that never ends: no budget runs out in this simulation.
struct Never;

impl Sleep for Never {
    fn sleep(&self, _ms: u64) -> LocalFuture<'_, ()> {
        Box::pin(std::future::pending())
    }
}

/// Runs `seeds`, returning the first failure.
pub fn run_seeds<S: SessionStorage>(
    seeds: impl IntoIterator<Item = u64>,
    config: Config,
    store: impl Fn() -> S,
    tally: &mut Tally,
) -> Result<(), Failure> {
    for seed in seeds {
        simulate(&store(), seed, config, tally)?;
    }
    Ok(())
}

/// Storage wrappers that break the port's contract on purpose.
pub mod broken {
    use std::cell::{Cell, RefCell};

    use serde_json::Value;
    use turnkeep::ports::session::SessionStorage;
    use turnkeep::ports::{CancelToken, LocalFuture, PortError};
    use turnkeep::storage::MemorySessionStorage;

    type Saved<'a> = LocalFuture<'a, Result<bool, PortError>>;
    type Loaded<'a> = LocalFuture<'a, Result<Option<Value>, PortError>>;

    /// Last write wins: ignores the expected cursor.
    #[derive(Default)]
    pub struct LastWriteWins(RefCell<Option<Value>>);

    impl LastWriteWins {
        fn cursor(&self) -> Option<u64> {
            self.0.borrow().as_ref().and_then(|v| v["cursor"].as_u64())
        }
    }

    impl SessionStorage for LastWriteWins {
        fn load<'a>(&'a self, _: &'a str, _: &'a CancelToken) -> Loaded<'a> {
            Box::pin(std::future::ready(Ok(self.0.borrow().clone())))
        }
        fn save<'a>(
            &'a self,
            snapshot: &'a Value,
            _: Option<u64>,
            _: &'a CancelToken,
        ) -> Saved<'a> {
            *self.0.borrow_mut() = Some(snapshot.clone());
            Box::pin(std::future::ready(Ok(true)))
        }
    }

    /// Acknowledges every eleventh successful write without keeping it.
    #[derive(Default)]
    pub struct PhantomAcks {
        inner: MemorySessionStorage,
        writes: Cell<u64>,
    }

    impl SessionStorage for PhantomAcks {
        fn load<'a>(&'a self, id: &'a str, cancel: &'a CancelToken) -> Loaded<'a> {
            self.inner.load(id, cancel)
        }
        fn save<'a>(
            &'a self,
            snapshot: &'a Value,
            expected: Option<u64>,
            cancel: &'a CancelToken,
        ) -> Saved<'a> {
            self.writes.set(self.writes.get() + 1);
            if self.writes.get() % 11 == 0 && expected.is_some() {
                return Box::pin(std::future::ready(Ok(true)));
            }
            self.inner.save(snapshot, expected, cancel)
        }
    }

    /// Reports a CAS conflict correctly but writes the losing snapshot anyway.
    #[derive(Default)]
    pub struct WritesOnConflict(LastWriteWins);

    impl SessionStorage for WritesOnConflict {
        fn load<'a>(&'a self, id: &'a str, cancel: &'a CancelToken) -> Loaded<'a> {
            self.0.load(id, cancel)
        }
        fn save<'a>(
            &'a self,
            snapshot: &'a Value,
            expected: Option<u64>,
            cancel: &'a CancelToken,
        ) -> Saved<'a> {
            let stored = self.0.cursor();
            let _written = self.0.save(snapshot, expected, cancel);
            Box::pin(std::future::ready(Ok(stored == expected)))
        }
    }
}

/// Claim rules with the expiry boundary wrong on purpose.
pub mod broken_rules {
    use super::*;

    /// Treats a lease expiring exactly now as still live (`>=` instead of `>`).
    pub fn busy_at_expiry(
        env: &SessionEnvelope,
        turn_id: &str,
        now_ms: u64,
        lease_ms: u64,
    ) -> Result<ClaimDecision, LeaseError> {
        match &env.active_turn {
            Some(a) if a.expires_at == now_ms && env.terminal_turn(turn_id).is_none() => {
                Ok(ClaimDecision::Busy {
                    active_turn_id: a.turn_id.clone(),
                    expires_at_ms: a.expires_at,
                })
            }
            _ => claim_turn(env, turn_id, now_ms, lease_ms),
        }
    }

    /// Never lets a lease lapse: a lease nobody releases blocks the session for good.
    pub fn never_lapses(
        env: &SessionEnvelope,
        turn_id: &str,
        now_ms: u64,
        lease_ms: u64,
    ) -> Result<ClaimDecision, LeaseError> {
        match &env.active_turn {
            Some(a) if env.terminal_turn(turn_id).is_none() => Ok(ClaimDecision::Busy {
                active_turn_id: a.turn_id.clone(),
                expires_at_ms: a.expires_at,
            }),
            _ => claim_turn(env, turn_id, now_ms, lease_ms),
        }
    }
}
