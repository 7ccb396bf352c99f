//! Test hooks of the demo Worker (feature `test-hooks`, and only while the Worker's `TEST_HOOKS`
//! setting is `1`): places a crash test can stop the Worker at, and the isolate's memory.
//!
//! **Holds.** A turn whose id starts with `hold-<point>-` parks for good at that point of its
//! pipeline, after printing `turnkeep-test-hold <point> <sessionId> <turnId>` to the console.
//! `tests/workerd/crash-restart.test.mjs` waits for that line, then SIGKILLs workerd, so the
//! kill lands exactly there. The points are the session's durable writes, in turn order:
//!
//! | point | parks |
//! |---|---|
//! | `claim-before` | before the claim's CAS write is sent |
//! | `claim-after` | after the claim's CAS write was acknowledged (the lease is stored) |
//! | `save-before` | at cleanup, before the messages are saved |
//! | `release-before` | at cleanup, after the messages were saved, before the release |
//! | `release-after` | after the release was acknowledged, before the response ends |
//!
//! Three more points park a turn that runs the ledger tool (below), around its one tool call:
//!
//! | point | parks |
//! |---|---|
//! | `tool-inside` | inside the tool, after the ledger counted its run, before it returns |
//! | `record-before` | after the tool returned, before the journal record of its result is sent |
//! | `record-after` | after that record was acknowledged, before the model reads the result |
//!
//! They park only the first run of the call: a retry of the turn (same turn id, so the same hold
//! prefix) that runs the tool again, as the ledger tells it, goes on to its end.
//!
//! Parking is a future that never resolves: the rest of the turn's machinery (its deadline, its
//! cleanup budgets) still runs, so a hold that waits longer than those budgets is overtaken by
//! them; the crash test kills well within them.
//!
//! **The ledger tool.** With `TEST_LEDGER_PORT` set, the demo's `lookup` reports every run to a
//! ledger the crash test serves on that port of 127.0.0.1 (outside workerd, so it survives every
//! kill): `POST {key, turnId, toolCallId, result}` → `{ result, runs }`, the result it recorded
//! first for the key and how many runs of the key it has counted. The tool answers with that
//! result: a tool that keeps its effects by idempotency key, whose runs per key the crash test
//! counts (tests/support/crash-restart.mjs).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};

use crate::core::protocol::Message;
use crate::ports::chat::ChatMemory;
use crate::ports::session::SessionStorage;
use crate::ports::{CancelToken, LocalFuture, PortError};
use crate::turn::Ports;

/// Where a held turn parks (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HoldPoint {
    ClaimBefore,
    ClaimAfter,
    SaveBefore,
    ReleaseBefore,
    ReleaseAfter,
    ToolInside,
    RecordBefore,
    RecordAfter,
}

impl HoldPoint {
    const ALL: [HoldPoint; 8] = [
        HoldPoint::ClaimBefore,
        HoldPoint::ClaimAfter,
        HoldPoint::SaveBefore,
        HoldPoint::ReleaseBefore,
        HoldPoint::ReleaseAfter,
        HoldPoint::ToolInside,
        HoldPoint::RecordBefore,
        HoldPoint::RecordAfter,
    ];

    pub fn name(self) -> &'static str {
        match self {
            HoldPoint::ClaimBefore => "claim-before",
            HoldPoint::ClaimAfter => "claim-after",
            HoldPoint::SaveBefore => "save-before",
            HoldPoint::ReleaseBefore => "release-before",
            HoldPoint::ReleaseAfter => "release-after",
            HoldPoint::ToolInside => "tool-inside",
            HoldPoint::RecordBefore => "record-before",
            HoldPoint::RecordAfter => "record-after",
        }
    }

    /// The point a turn id names (`hold-<point>-…`), if any.
    pub fn of_turn(turn_id: &str) -> Option<HoldPoint> {
        let rest = turn_id.strip_prefix("hold-")?;
        Self::ALL.into_iter().find(|p| {
            rest.strip_prefix(p.name())
                .is_some_and(|r| r.starts_with('-'))
        })
    }
}

/// `ports` with the session storage and memory wrapped so the turn parks at `point`.
pub fn hold_ports(mut ports: Ports, point: HoldPoint, session_id: &str, turn_id: &str) -> Ports {
    let label = Rc::new(format!("{} {session_id} {turn_id}", point.name()));
    ports.storage = Rc::new(HoldingStorage {
        inner: ports.storage,
        point,
        saves: Cell::new(0),
        label: label.clone(),
    });
    ports.memory = Rc::new(HoldingMemory {
        inner: ports.memory,
        point,
        label,
    });
    ports
}

/// Prints the hold line, then never returns.
async fn park(label: &str) {
    web_sys::console::log_1(&format!("turnkeep-test-hold {label}").into());
    std::future::pending::<()>().await;
}

struct HoldingStorage {
    inner: Rc<dyn SessionStorage>,
    point: HoldPoint,
    /// Saves so far: the turn's first is its claim, its second its release.
    saves: Cell<u32>,
    label: Rc<String>,
}

impl SessionStorage for HoldingStorage {
    fn load<'a>(
        &'a self,
        session_id: &'a str,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Option<Value>, PortError>> {
        self.inner.load(session_id, cancel)
    }

    fn save<'a>(
        &'a self,
        snapshot: &'a Value,
        expected_cursor: Option<u64>,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<bool, PortError>> {
        let n = self.saves.get() + 1;
        self.saves.set(n);
        // Not the first save: that is the claim, which carries a retry's journal as it found it.
        let records_result = n > 1 && records_a_result(snapshot) && !rerun(&self.label);
        let (before, after) = match (self.point, n) {
            (HoldPoint::ClaimBefore, 1) | (HoldPoint::ReleaseBefore, 2) => (true, false),
            (HoldPoint::ClaimAfter, 1) | (HoldPoint::ReleaseAfter, 2) => (false, true),
            (HoldPoint::RecordBefore, _) => (records_result, false),
            (HoldPoint::RecordAfter, _) => (false, records_result),
            _ => (false, false),
        };
        Box::pin(async move {
            if before {
                park(&self.label).await;
            }
            let written = self.inner.save(snapshot, expected_cursor, cancel).await;
            if after && matches!(written, Ok(true)) {
                park(&self.label).await;
            }
            written
        })
    }
}

/// True for a journal record that holds a tool's result (a `tool` message).
fn records_a_result(snapshot: &Value) -> bool {
    snapshot["turnJournal"]["messages"]
        .as_array()
        .is_some_and(|messages| messages.iter().any(|m| m["role"] == "tool"))
}

thread_local! {
    /// Turn ids whose tool the ledger has seen run more than once: a retry, which no hold parks.
    static RERUN: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Whether the turn of a hold label (`<point> <sessionId> <turnId>`) is a retry that ran its tool again.
fn rerun(label: &str) -> bool {
    let turn_id = label.rsplit(' ').next().unwrap_or_default();
    RERUN.with(|r| r.borrow().iter().any(|t| t == turn_id))
}

/// The ledger tool (see the module doc): the demo's `lookup`, its runs reported to the ledger.
pub struct LedgerLookup {
    spec: crate::core::chat::ToolSpec,
    port: String,
}

impl LedgerLookup {
    /// The ledger tool when the Worker's `TEST_LEDGER_PORT` names a port.
    pub fn from_setting(port: Option<String>) -> Option<Self> {
        let port = port.filter(|p| p.parse::<u16>().is_ok())?;
        let spec = crate::core::chat::demo::demo_tools()
            .into_iter()
            .find(|t| t.name == "lookup")?;
        Some(Self { spec, port })
    }

    /// Reports one run; the ledger's `{ result, runs }`.
    async fn report(&self, body: String) -> Result<Value, PortError> {
        let failed = |what: &str| PortError::new(format!("the test ledger: {what}"));
        let global = js_sys::global();
        let fetch = crate::web::js::get_fn(&global, "fetch").ok_or_else(|| failed("no fetch"))?;
        let init = js_sys::Object::new();
        let set = |k: &str, v: &JsValue| js_sys::Reflect::set(&init, &k.into(), v).ok();
        set("method", &"POST".into());
        set("body", &body.into());
        let url = JsValue::from_str(&format!("http://127.0.0.1:{}/run", self.port));
        let response = crate::web::js::resolve(fetch.call2(&global, &url, &init))
            .await
            .map_err(|_| failed("fetch failed"))?;
        let text = crate::web::js::get_fn(&response, "text").ok_or_else(|| failed("no text"))?;
        let text = crate::web::js::resolve(text.call0(&response))
            .await
            .map_err(|_| failed("no body"))?;
        serde_json::from_str(&text.as_string().unwrap_or_default()).map_err(|_| failed("not JSON"))
    }
}

impl crate::ports::chat::Tool for LedgerLookup {
    fn spec(&self) -> &crate::core::chat::ToolSpec {
        &self.spec
    }

    fn execute(
        &self,
        args: serde_json::Map<String, Value>,
        context: crate::ports::chat::ToolContext,
    ) -> LocalFuture<'_, Result<String, crate::ports::chat::ToolFailure>> {
        Box::pin(async move {
            let result = crate::core::chat::demo::run_demo_tool(&self.spec.name, &args)
                .map_err(PortError::new)?;
            let key = context.idempotency_key.unwrap_or_default();
            let mut parts = key.splitn(3, ':');
            let (session_id, turn_id) = (parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
            let body = serde_json::json!({
                "key": key, "turnId": turn_id, "toolCallId": context.tool_call_id, "result": result,
            });
            let answer = self.report(body.to_string()).await?;
            let runs = answer["runs"].as_u64().unwrap_or(0);
            if runs > 1 {
                RERUN.with(|r| r.borrow_mut().push(turn_id.to_owned()));
            } else if HoldPoint::of_turn(turn_id) == Some(HoldPoint::ToolInside) {
                park(&format!("tool-inside {session_id} {turn_id}")).await;
            }
            Ok(answer["result"].as_str().unwrap_or(&result).to_owned())
        })
    }
}

struct HoldingMemory {
    inner: Rc<dyn ChatMemory>,
    point: HoldPoint,
    label: Rc<String>,
}

impl ChatMemory for HoldingMemory {
    fn load<'a>(
        &'a self,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Vec<Message>, PortError>> {
        self.inner.load(cancel)
    }

    fn save<'a>(
        &'a self,
        messages: &'a [Message],
        fence: Option<u64>,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<(), PortError>> {
        Box::pin(async move {
            if self.point == HoldPoint::SaveBefore {
                park(&self.label).await;
            }
            self.inner.save(messages, fence, cancel).await
        })
    }
}

/// `{ wasmMemoryBytes, heapLiveBytes, liveObjects }`: the size of this isolate's wasm linear memory (where
/// every Rust allocation of the Worker and of the objects it hosts lives; it grows, never
/// shrinks, so it is the high-water mark of the heap), the heap's live bytes, and how many Durable Object instances of
/// each class this isolate holds now (built and not yet dropped: the runtime drops an evicted
/// object once its JS wrapper is collected) — what tells memory kept per session from memory
/// kept per turn.
pub fn memory_report() -> String {
    let memory: js_sys::WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
    let bytes = js_sys::ArrayBuffer::from(memory.buffer()).byte_length();
    let live = |kind: ObjectKind| LIVE.with(|l| l[kind as usize].get());
    serde_json::json!({
        "wasmMemoryBytes": bytes,
        "heapLiveBytes": HEAP_LIVE_BYTES.load(Ordering::Relaxed),
        "liveObjects": {
            "chatSession": live(ObjectKind::ChatSession),
            "sessionStream": live(ObjectKind::SessionStream),
        },
    })
    .to_string()
}

/// Bytes allocated and not yet freed by the Rust heap of this isolate (the Worker and every
/// object it hosts), counted by the test-hooks build's allocator: unlike the linear memory's
/// size, it goes down when memory is freed, so it tells memory kept from memory once needed.
static HEAP_LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting live bytes (test-hooks builds only; the npm build has none).
struct CountingAllocator;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

// SAFETY: every call is passed unchanged to `System`, which upholds the `GlobalAlloc` contract;
// the counter only observes the sizes.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = System.alloc(layout);
        if !ptr.is_null() {
            HEAP_LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        HEAP_LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let moved = System.realloc(ptr, layout, new_size);
        if !moved.is_null() {
            HEAP_LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
            HEAP_LIVE_BYTES.fetch_add(new_size, Ordering::Relaxed);
        }
        moved
    }
}

/// The Durable Object classes counted by [`LiveObject`].
#[derive(Clone, Copy)]
pub enum ObjectKind {
    ChatSession = 0,
    SessionStream = 1,
}

thread_local! {
    static LIVE: [Cell<u64>; 2] = const { [Cell::new(0), Cell::new(0)] };
    static CONSTRUCTED: [Cell<u64>; 2] = const { [Cell::new(0), Cell::new(0)] };
}

/// Held by each Durable Object instance: counts it live from construction to drop, and marks
/// it with a random id drawn at construction — an in-memory marker: a different one means
/// the runtime dropped the instance (evicted, hibernated) and built a new one.
pub struct LiveObject {
    kind: ObjectKind,
    pub marker: String,
}

impl LiveObject {
    pub fn new(kind: ObjectKind) -> Self {
        LIVE.with(|l| l[kind as usize].set(l[kind as usize].get() + 1));
        CONSTRUCTED.with(|c| c[kind as usize].set(c[kind as usize].get() + 1));
        Self {
            kind,
            marker: crate::cloudflare::env::random_id(),
        }
    }
}

/// How many instances of `kind` this isolate has built so far.
pub fn constructed(kind: ObjectKind) -> u64 {
    CONSTRUCTED.with(|c| c[kind as usize].get())
}

impl Drop for LiveObject {
    fn drop(&mut self) {
        let kind = self.kind as usize;
        LIVE.with(|l| l[kind].set(l[kind].get().saturating_sub(1)));
    }
}
