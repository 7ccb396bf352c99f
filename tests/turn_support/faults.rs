//! Seeded faults shared by the simulations: a PRNG, session storage that fails writes and
//! loses acknowledgements (or, for the negative control, has no compare-and-set), and chat
//! memory whose saves fail or land late.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde_json::Value;
use turnkeep::ports::chat::{ChatMemory, Sleep};
use turnkeep::ports::session::SessionStorage;
use turnkeep::ports::{CancelToken, LocalFuture, PortError};
use turnkeep::core::protocol::Message;
use turnkeep::storage::{MemoryChatMemory, MemorySessionStorage};

use super::SimSleep;

/// A small seeded PRNG (xorshift*), shared by every fault and schedule decision of one seed.
#[derive(Clone)]
pub struct Rng(pub Rc<Cell<u64>>);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(Rc::new(Cell::new(
            seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
        )))
    }
    pub fn next(&self) -> u64 {
        let mut x = self.0.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn chance(&self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }
}

/// Storage whose writes sometimes fail (not applied) or lose their acknowledgement (applied,
/// but the writer sees an error). `cas: false` makes it last-write-wins (must trip check 1).
pub struct FaultyStorage {
    pub inner: MemorySessionStorage,
    pub rng: Rng,
    pub cas: bool,
    /// The session id a last-write-wins store reads the current cursor of.
    pub session_id: &'static str,
    /// A few milliseconds of latency per call, so that concurrent clients interleave.
    pub sleep: SimSleep,
    /// While set, nothing is injected (a final pass that must be able to write).
    pub calm: Cell<bool>,
}

impl SessionStorage for FaultyStorage {
    fn load<'a>(
        &'a self,
        id: &'a str,
        c: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Option<Value>, PortError>> {
        Box::pin(async move {
            self.sleep.sleep(self.rng.below(5)).await;
            self.inner.load(id, c).await
        })
    }
    fn save<'a>(
        &'a self,
        snapshot: &'a Value,
        expected: Option<u64>,
        c: &'a CancelToken,
    ) -> LocalFuture<'a, Result<bool, PortError>> {
        Box::pin(async move {
            self.sleep.sleep(self.rng.below(5)).await;
            let inject = !self.calm.get();
            if inject && self.rng.chance(30) {
                return Err(PortError::new("injected: write failed"));
            }
            let expected = if self.cas {
                expected
            } else {
                // Last-write-wins: compare against whatever is stored now.
                let stored = self.inner.load(self.session_id, c).await?;
                stored.and_then(|s| s["cursor"].as_u64())
            };
            let written = self.inner.save(snapshot, expected, c).await?;
            if written && inject && self.rng.chance(30) {
                return Err(PortError::new("injected: acknowledgement lost"));
            }
            Ok(written)
        })
    }
}

/// Memory whose saves sometimes fail (the turn's outcome is then `indeterminate`), and
/// sometimes stall: such a save lands up to `LATE_LANDING_MS_MAX` after it was made, as a write
/// already on its way to a store does, and answers a timeout only after that (its caller's
/// budget or deadline has usually given up on it by then). A late save lands at the first access after its time (or at
/// [`FaultyMemory::land_all`]), through the fence the turn gave it; with `fences` off (the
/// negative control) it lands as an unfenced save, as over a store without fences.
pub struct FaultyMemory {
    pub inner: MemoryChatMemory,
    pub rng: Rng,
    pub sleep: SimSleep,
    pub fences: Cell<bool>,
    late: RefCell<Vec<LateSave>>,
}

struct LateSave {
    at_ms: u64,
    messages: Vec<Message>,
    fence: Option<u64>,
}

/// How long after it was made a stalled save may land: longer than a lease, so that it can
/// land after the next turn's save.
pub const LATE_LANDING_MS_MAX: u64 = 8_000;

impl FaultyMemory {
    pub fn new(rng: Rng, sleep: SimSleep) -> Self {
        Self {
            inner: MemoryChatMemory::new(),
            rng,
            sleep,
            fences: Cell::new(true),
            late: RefCell::default(),
        }
    }

    /// Lands every stalled save whose time has come (all of them with `everything`).
    fn land(&self, everything: bool) {
        let now = self.sleep.0.now();
        let due: Vec<LateSave> = {
            let mut late = self.late.borrow_mut();
            let (due, waiting) = late.drain(..).partition(|s| everything || s.at_ms <= now);
            *late = waiting;
            due
        };
        let token = CancelToken::new();
        for save in due {
            // Nobody waits for a late save: a refused one (a newer fence saved) is just dropped.
            let fence = save.fence.filter(|_| self.fences.get());
            let _ = futures::executor::block_on(self.inner.save(&save.messages, fence, &token));
        }
    }

    /// Lands every stalled save still on its way (the end of a run).
    pub fn land_all(&self) {
        self.land(true);
    }
}

impl ChatMemory for FaultyMemory {
    fn load<'a>(&'a self, c: &'a CancelToken) -> LocalFuture<'a, Result<Vec<Message>, PortError>> {
        self.land(false);
        self.inner.load(c)
    }
    fn save<'a>(
        &'a self,
        messages: &'a [Message],
        fence: Option<u64>,
        c: &'a CancelToken,
    ) -> LocalFuture<'a, Result<(), PortError>> {
        self.land(false);
        if self.rng.chance(20) {
            return Box::pin(async { Err(PortError::new("injected: memory save failed")) });
        }
        if self.rng.chance(15) {
            let delay_ms = 1 + self.rng.below(LATE_LANDING_MS_MAX);
            self.late.borrow_mut().push(LateSave {
                at_ms: self.sleep.0.now() + delay_ms,
                messages: messages.to_vec(),
                fence,
            });
            // Its answer, when a caller still waits for it, is a timeout, after it landed.
            return Box::pin(async move {
                self.sleep.sleep(delay_ms + 1).await;
                Err(PortError::new("injected: memory save timed out (it landed)"))
            });
        }
        self.inner.save(messages, fence, c)
    }
}
