//! Seeded faults shared by the simulations: a PRNG, session storage that fails writes and
//! loses acknowledgements (or, for the negative control, has no compare-and-set), and chat
//! memory whose saves fail.

use std::cell::Cell;
use std::rc::Rc;

use serde_json::Value;
use turnkeep::ports::chat::{ChatMemory, Sleep};
use turnkeep::ports::session::SessionStorage;
use turnkeep::ports::{CancelToken, LocalFuture, PortError};
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

/// Memory whose saves sometimes fail (the turn's outcome is then `indeterminate`).
pub struct FaultyMemory {
    pub inner: MemoryChatMemory,
    pub rng: Rng,
}

impl ChatMemory for FaultyMemory {
    fn load<'a>(
        &'a self,
        c: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Vec<turnkeep::core::protocol::Message>, PortError>> {
        self.inner.load(c)
    }
    fn save<'a>(
        &'a self,
        m: &'a [turnkeep::core::protocol::Message],
        c: &'a CancelToken,
    ) -> LocalFuture<'a, Result<(), PortError>> {
        Box::pin(async move {
            if self.rng.chance(20) {
                return Err(PortError::new("injected: memory save failed"));
            }
            self.inner.save(m, c).await
        })
    }
}
