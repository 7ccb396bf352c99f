//! A tool with an effect, for the simulations' exactly-once check: the demo's `lookup`, which
//! applies an effect per execution (counted in a ledger outside turnkeep's stores, which every
//! crash leaves as it is), takes a moment, then records its idempotency key with its result. A
//! key it recorded gets that result again without a second effect, as a tool that keeps its
//! effects by key does. A run dropped in that moment (its process killed, or its turn stopped,
//! inside the tool) is noted: only such a key may take effect twice.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use serde_json::{Map, Value};
use turnkeep::core::chat::demo::{demo_tools, run_demo_tool};
use turnkeep::core::chat::ToolSpec;
use turnkeep::ports::chat::{Sleep, Tool, ToolContext, ToolFailure};
use turnkeep::ports::{LocalFuture, PortError};

use super::faults::Rng;
use super::SimSleep;

/// Every execution of the keyed tool, by key (survives crashes: it is not turnkeep's).
#[derive(Default)]
pub struct EffectLedger {
    /// Key → effects applied.
    pub effects: RefCell<BTreeMap<String, u32>>,
    /// Key → the result the tool recorded with it.
    done: RefCell<BTreeMap<String, String>>,
    /// Keys whose run was dropped between its effect and its own record.
    pub killed_inside: RefCell<BTreeSet<String>>,
    /// Runs without an idempotency key.
    pub keyless: Cell<u64>,
}

impl EffectLedger {
    /// What broke exactly-once: a key that took effect twice although no run of it was killed
    /// inside the tool, a turn whose tool took effect under more than one key (the demo model
    /// asks for one call per turn: a second key means the retry ran the model and the tool again
    /// instead of replaying the journal), a run without a key.
    pub fn violations(&self) -> Vec<String> {
        let mut found = Vec::new();
        let killed = self.killed_inside.borrow();
        let mut keys_per_turn: BTreeMap<String, Vec<&String>> = BTreeMap::new();
        let effects = self.effects.borrow();
        for (key, &count) in effects.iter() {
            if count > 1 && !killed.contains(key) {
                found.push(format!("tool call {key} took effect {count} times and no run of it was killed inside the tool"));
            }
            keys_per_turn.entry(turn_of(key)).or_default().push(key);
        }
        for (turn, keys) in keys_per_turn {
            if keys.len() > 1 {
                found.push(format!("turn {turn}'s one tool call took effect under {} keys: {keys:?}", keys.len()));
            }
        }
        if self.keyless.get() > 0 {
            found.push(format!("{} tool runs had no idempotency key", self.keyless.get()));
        }
        found
    }

    /// Keys that took effect more than once (each after a kill inside the tool).
    pub fn rerun_keys(&self) -> usize {
        self.effects.borrow().values().filter(|&&c| c > 1).count()
    }
}

/// `<session>:<turn>:<call>` → the turn id.
fn turn_of(key: &str) -> String {
    key.split(':').nth(1).unwrap_or(key).to_owned()
}

/// The keyed `lookup` (see the module doc).
pub struct KeyedLookup {
    spec: ToolSpec,
    pub ledger: Rc<EffectLedger>,
    sleep: SimSleep,
    rng: Rng,
}

impl KeyedLookup {
    pub fn new(ledger: Rc<EffectLedger>, sleep: SimSleep, rng: Rng) -> Self {
        let spec = demo_tools()
            .into_iter()
            .find(|t| t.name == "lookup")
            .expect("the demo has lookup");
        Self { spec, ledger, sleep, rng }
    }
}

/// Notes a run dropped between its effect and its record.
struct Inside<'a> {
    ledger: &'a EffectLedger,
    key: String,
    armed: bool,
}

impl Drop for Inside<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.ledger.killed_inside.borrow_mut().insert(self.key.clone());
        }
    }
}

impl Tool for KeyedLookup {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn execute(
        &self,
        args: Map<String, Value>,
        context: ToolContext,
    ) -> LocalFuture<'_, Result<String, ToolFailure>> {
        Box::pin(async move {
            let Some(key) = context.idempotency_key else {
                self.ledger.keyless.set(self.ledger.keyless.get() + 1);
                return Err(PortError::new("no idempotency key").into());
            };
            if let Some(result) = self.ledger.done.borrow().get(&key) {
                return Ok(result.clone());
            }
            let result = run_demo_tool(&self.spec.name, &args).map_err(PortError::new)?;
            *self.ledger.effects.borrow_mut().entry(key.clone()).or_default() += 1;
            let mut inside = Inside { ledger: &self.ledger, key: key.clone(), armed: true };
            self.sleep.sleep(self.rng.below(60)).await;
            inside.armed = false;
            self.ledger.done.borrow_mut().insert(key, result.clone());
            Ok(result)
        })
    }
}
