//! A simulated world for whole-turn tests on the host: a virtual clock, timers that fire only
//! when every task is waiting (time jumps to the next timer), counter ids, and a tiny
//! single-threaded executor that runs several tasks side by side — a turn, a second client, a
//! fault injector — deterministically. Nothing here reads the real clock.
#![allow(dead_code)]

pub mod effects;
pub mod faults;

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use turnkeep::core::chat::controller::ChatConfig;
use turnkeep::core::chat::demo::demo_tools;
use turnkeep::core::protocol::{BoundaryError, Message};
use turnkeep::core::session::SessionIdentity;
use turnkeep::ports::chat::{ChatMemory, Clock, Ids, Sleep, Tool};
use turnkeep::ports::log::SessionLog;
use turnkeep::ports::session::SessionStorage;
use turnkeep::ports::LocalFuture;
use turnkeep::storage::{MemoryChatMemory, MemoryLogStore, MemorySessionStorage, StoreLog};
use turnkeep::turn::summary::TurnSummary;
use turnkeep::turn::{
    ChatSetup, DemoModel, DemoTool, Fault, FaultReport, Ports, Submission, TurnLimits, TurnSink,
};

pub const START_MS: u64 = 1_783_738_800_000;

/// Virtual time and its timers.
#[derive(Default)]
pub struct World {
    now: Cell<u64>,
    timers: RefCell<BTreeMap<(u64, u64), Waker>>,
    next_timer: Cell<u64>,
    ids: Cell<u64>,
}

impl World {
    pub fn new() -> Rc<Self> {
        let world = Rc::new(World::default());
        world.now.set(START_MS);
        world
    }

    pub fn now(&self) -> u64 {
        self.now.get()
    }

    /// Moves the clock (a jump); timers due by then fire at the next step.
    pub fn advance(&self, ms: u64) {
        self.now.set(self.now.get() + ms);
    }

    /// Fires the earliest timer, moving the clock to it. False when there is none.
    fn fire_next_timer(&self) -> bool {
        let first = self.timers.borrow().keys().next().copied();
        let Some(key) = first else {
            return false;
        };
        let waker = self.timers.borrow_mut().remove(&key).expect("timer");
        if key.0 > self.now.get() {
            self.now.set(key.0);
        }
        waker.wake();
        true
    }
}

impl Clock for World {
    fn now_ms(&self) -> u64 {
        self.now.get()
    }
}

impl Ids for World {
    fn next_id(&self, prefix: &str) -> String {
        self.ids.set(self.ids.get() + 1);
        format!("{prefix}-{}", self.ids.get())
    }
}

/// `Sleep` on the world's clock.
#[derive(Clone)]
pub struct SimSleep(pub Rc<World>);

impl Sleep for SimSleep {
    fn sleep(&self, ms: u64) -> LocalFuture<'_, ()> {
        let world = self.0.clone();
        let at = world.now() + ms;
        let id = world.next_timer.get();
        world.next_timer.set(id + 1);
        Box::pin(std::future::poll_fn(move |cx| {
            if world.now() >= at {
                world.timers.borrow_mut().remove(&(at, id));
                return Poll::Ready(());
            }
            world
                .timers
                .borrow_mut()
                .insert((at, id), cx.waker().clone());
            Poll::Pending
        }))
    }
}

struct Flag(AtomicBool);
impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

pub type Task<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// Runs `tasks` to completion: polls until none makes progress, then lets time jump to the next
/// timer. Panics if the tasks wait on nothing (a deadlock) or take more than `steps_max` rounds.
pub fn run_all(world: &World, mut tasks: Vec<Task<'_>>) {
    let flag = Arc::new(Flag(AtomicBool::new(true)));
    let waker = Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    for _round in 0..1_000_000 {
        flag.0.store(false, Ordering::SeqCst);
        tasks.retain_mut(|task| task.as_mut().poll(&mut cx).is_pending());
        if tasks.is_empty() {
            return;
        }
        if !flag.0.load(Ordering::SeqCst) && !world.fire_next_timer() {
            panic!("{} task(s) wait on nothing: deadlock", tasks.len());
        }
    }
    panic!("tasks did not finish within the round bound");
}

/// Runs one future to completion in the world.
pub fn block_on<T>(world: &World, fut: impl Future<Output = T>) -> T {
    let out = RefCell::new(None);
    run_all(
        world,
        vec![Box::pin(async { *out.borrow_mut() = Some(fut.await) })],
    );
    out.into_inner().expect("finished")
}

/// Faults reported by a turn, and the summaries of the turns that ended.
#[derive(Default)]
pub struct Faults(pub RefCell<Vec<Fault>>, pub RefCell<Vec<TurnSummary>>);

impl FaultReport for Faults {
    fn report(&self, fault: &Fault) {
        self.0.borrow_mut().push(fault.clone());
    }

    fn turn_ended(&self, summary: &TurnSummary) {
        self.1.borrow_mut().push(summary.clone());
    }
}

/// The sender's side: counts states and keeps the closing line.
#[derive(Default)]
pub struct Sink {
    pub changes: Cell<u64>,
    pub closed: RefCell<Option<Option<BoundaryError>>>,
}

impl TurnSink for Sink {
    fn changed(&self) {
        self.changes.set(self.changes.get() + 1);
    }
    fn close(&self, last: Option<BoundaryError>) {
        *self.closed.borrow_mut() = Some(last);
    }
}

/// One session's stores, shared by every turn and client of the test.
pub struct Session {
    pub world: Rc<World>,
    pub storage: Rc<MemorySessionStorage>,
    pub memory: Rc<MemoryChatMemory>,
    pub log_store: MemoryLogStore,
    pub log: Rc<StoreLog<MemoryLogStore>>,
    pub faults: Rc<Faults>,
}

impl Session {
    pub fn new(world: &Rc<World>) -> Self {
        let log_store = MemoryLogStore::new();
        Self {
            world: world.clone(),
            storage: Rc::new(MemorySessionStorage::new()),
            memory: Rc::new(MemoryChatMemory::new()),
            log: Rc::new(StoreLog::new(
                log_store.clone(),
                Rc::new(SimSleep(world.clone())),
            )),
            log_store,
            faults: Rc::new(Faults::default()),
        }
    }

    /// Ports over this session's stores, with the demo model pausing `chunk_delay_ms`.
    pub fn ports(&self, with_log: bool, chunk_delay_ms: u64) -> Ports {
        let sleep: Rc<dyn Sleep> = Rc::new(SimSleep(self.world.clone()));
        let tools: Vec<Box<dyn Tool>> = DemoTool::all()
            .into_iter()
            .map(|t| Box::new(t) as Box<dyn Tool>)
            .collect();
        Ports {
            storage: self.storage.clone() as Rc<dyn SessionStorage>,
            memory: self.memory.clone() as Rc<dyn ChatMemory>,
            log: with_log.then(|| self.log.clone() as Rc<dyn SessionLog>),
            model: Rc::new(DemoModel::new(Some(sleep.clone()), chunk_delay_ms)),
            tools: Rc::new(tools),
            clock: self.world.clone(),
            ids: self.world.clone(),
            sleep,
            faults: self.faults.clone(),
        }
    }

    /// Everything the log holds, projected.
    pub fn projected(&self) -> Vec<Message> {
        let mut projection = turnkeep::core::projection::Projection::new();
        projection.feed_all(&self.log_store.chunks());
        projection.to_messages()
    }

    pub fn saved(&self) -> Vec<Message> {
        self.memory.messages()
    }
}

pub fn chat_setup(session_id: &str) -> ChatSetup {
    ChatSetup {
        identity: SessionIdentity {
            session_id: session_id.into(),
            definition_id: "demo".into(),
            definition_revision: 1,
            conversation: None,
        },
        config: ChatConfig {
            tools: demo_tools(),
            ..ChatConfig::default()
        },
        initial_messages: Vec::new(),
    }
}

pub fn submission(session_id: &str, turn_id: &str, input: &str) -> Submission {
    Submission::text(session_id, turn_id, input)
}

pub const LIMITS: TurnLimits = TurnLimits {
    lease_ms: 45_000,
    cleanup_budget_ms: 5_000,
    confirmation_ttl_ms: 60_000,
    model_stall_ms: 10_000,
};

/// The demo `transfer` tool (it requires confirmation), counting every run and the idempotency
/// key it was given, so a test can say how often the tool ran.
pub struct CountingTransfer {
    spec: turnkeep::core::chat::ToolSpec,
    pub runs: RefCell<Vec<Option<String>>>,
}

impl CountingTransfer {
    pub fn new() -> Rc<Self> {
        let spec = demo_tools()
            .into_iter()
            .find(|t| t.name == "transfer")
            .expect("the demo has transfer");
        Rc::new(Self {
            spec,
            runs: RefCell::new(Vec::new()),
        })
    }

    pub fn count(&self) -> usize {
        self.runs.borrow().len()
    }
}

/// The demo tools with `transfer` counted: `lookup` as the demo has it, then `transfer`.
pub fn tools_counting(transfer: &Rc<CountingTransfer>) -> Rc<Vec<Box<dyn Tool>>> {
    let lookup = DemoTool::all().into_iter().next().expect("lookup");
    Rc::new(vec![
        Box::new(lookup) as Box<dyn Tool>,
        Box::new(Shared(transfer.clone())),
    ])
}

/// How many seeds a simulation runs: `TURNKEEP_SIM_SEEDS`, else `default`.
/// Shards a wide run is split into (one test each, so the harness runs them in parallel).
pub const SIM_SHARDS: u64 = 4;

/// The seeds of shard `shard` of a run over `1..=seeds(default)`.
pub fn shard_seeds(shard: u64, default: u64) -> impl Iterator<Item = u64> {
    (1..=seeds(default)).filter(move |seed| seed % SIM_SHARDS == shard)
}

/// Runs one shard of a wide simulation in its batches, each checked by `run` on its own: on
/// shard 0 first the `regression` seeds and `TURNKEEP_SIM_SEED` (if any); then, unless one seed
/// was asked for, the shard's share of `seeds(default)`.
pub fn run_wide_shard(
    shard: u64,
    default: u64,
    regression: &[u64],
    mut run: impl FnMut(&mut dyn Iterator<Item = u64>),
) {
    if shard == 0 && (!regression.is_empty() || only_seed().is_some()) {
        run(&mut regression.iter().copied().chain(only_seed()));
    }
    if only_seed().is_none() {
        run(&mut shard_seeds(shard, default));
    }
}

/// The message of a failing seed: the seed, what broke, and how to keep it as a regression.
pub fn failing_seed(sim: &str, seed: u64, violations: &[String]) -> String {
    format!(
        "{sim}: seed {seed} failed: {violations:#?}\nreplay it alone with \
         TURNKEEP_SIM_SEED={seed}; with the fix, add {seed} to REGRESSION_SEEDS in tests/{sim}.rs"
    )
}

/// `TURNKEEP_SIM_SEED=N`: run only that seed (replaying a failure).
pub fn only_seed() -> Option<u64> {
    std::env::var("TURNKEEP_SIM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
}

pub fn seeds(default: u64) -> u64 {
    std::env::var("TURNKEEP_SIM_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// A shared tool behind a `Box<dyn Tool>` (the ports own their tools).
pub struct Shared<T: Tool>(pub Rc<T>);

impl<T: Tool> Tool for Shared<T> {
    fn spec(&self) -> &turnkeep::core::chat::ToolSpec {
        self.0.spec()
    }
    fn execute(
        &self,
        args: serde_json::Map<String, serde_json::Value>,
        context: turnkeep::ports::chat::ToolContext,
    ) -> LocalFuture<'_, Result<String, turnkeep::ports::chat::ToolFailure>> {
        self.0.execute(args, context)
    }
}

impl Tool for CountingTransfer {
    fn spec(&self) -> &turnkeep::core::chat::ToolSpec {
        &self.spec
    }
    fn execute(
        &self,
        args: serde_json::Map<String, serde_json::Value>,
        context: turnkeep::ports::chat::ToolContext,
    ) -> LocalFuture<'_, Result<String, turnkeep::ports::chat::ToolFailure>> {
        self.runs.borrow_mut().push(context.idempotency_key.clone());
        let result = turnkeep::core::chat::demo::run_demo_tool("transfer", &args)
            .map_err(|e| turnkeep::ports::PortError::new(e).into());
        Box::pin(async move { result })
    }
}

/// Session storage whose every call takes `lag_ms` of virtual time, so that concurrent clients
/// all read before any of them writes (a real race on the compare-and-set), and whose saves fail
/// from the moment `fail_saves` is set.
pub struct LaggyStorage {
    pub inner: Rc<MemorySessionStorage>,
    pub sleep: SimSleep,
    pub lag_ms: u64,
    pub fail_saves: Cell<bool>,
}

impl LaggyStorage {
    pub fn new(world: &Rc<World>, inner: Rc<MemorySessionStorage>, lag_ms: u64) -> Rc<Self> {
        Rc::new(Self {
            inner,
            sleep: SimSleep(world.clone()),
            lag_ms,
            fail_saves: Cell::new(false),
        })
    }
}

impl SessionStorage for LaggyStorage {
    fn load<'a>(
        &'a self,
        session_id: &'a str,
        cancel: &'a turnkeep::ports::CancelToken,
    ) -> LocalFuture<'a, Result<Option<serde_json::Value>, turnkeep::ports::PortError>> {
        Box::pin(async move {
            self.sleep.sleep(self.lag_ms).await;
            self.inner.load(session_id, cancel).await
        })
    }
    fn save<'a>(
        &'a self,
        snapshot: &'a serde_json::Value,
        expected_cursor: Option<u64>,
        cancel: &'a turnkeep::ports::CancelToken,
    ) -> LocalFuture<'a, Result<bool, turnkeep::ports::PortError>> {
        Box::pin(async move {
            self.sleep.sleep(self.lag_ms).await;
            if self.fail_saves.get() {
                return Err(turnkeep::ports::PortError::new(
                    "injected: the store is down",
                ));
            }
            self.inner.save(snapshot, expected_cursor, cancel).await
        })
    }
}
