//! The `SessionStorage` conformance suite. Any adapter runs it with a factory of empty stores:
//! `check_session_storage(|| MyStorage::new()).await`. Each case gets a fresh store.
//!
//! The concurrency cases build every save future first and then poll them together, one step
//! each in turn, so an adapter that reads, yields, then writes (check-then-act) is caught as
//! surely as a last-write-wins one. Case names are shared with the JS twin,
//! `js/testing/session-storage-conformance.mjs`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::Value;

use turnkeep_core::session::{ActiveTurn, SessionEnvelope};
use turnkeep_ports::session::SessionStorage;
use turnkeep_ports::CancelToken;
use turnkeep_ports::LocalFuture;

/// How many savers race in the concurrency cases by default.
pub(crate) const CONCURRENT_SAVERS_DEFAULT: usize = 32;

pub const CASE_LOAD_ABSENT: &str = "load of an absent session is empty";
pub const CASE_CREATE_ONCE: &str = "create-if-absent succeeds once, then conflicts";
pub const CASE_ROUND_TRIP: &str = "save then load returns an equal value";
pub const CASE_CAS_SUCCESS: &str = "save with the stored cursor succeeds";
pub const CASE_CAS_WRONG_CURSOR: &str = "save with a wrong cursor conflicts and changes nothing";
pub const CASE_CAS_STALE_CURSOR: &str = "save with a stale cursor conflicts";
pub const CASE_CAS_ABSENT: &str = "save with a cursor on an absent session conflicts";
pub const CASE_ISOLATION: &str = "sessions do not see each other";
pub const CASE_CONCURRENT_CREATE: &str = "concurrent creates: exactly one wins";
pub const CASE_CONCURRENT_CAS: &str = "concurrent saves with one expected cursor: exactly one wins";

/// Every case of the suite, in the order they run.
pub const ALL_CASES: [&str; 10] = [
    CASE_LOAD_ABSENT,
    CASE_CREATE_ONCE,
    CASE_ROUND_TRIP,
    CASE_CAS_SUCCESS,
    CASE_CAS_WRONG_CURSOR,
    CASE_CAS_STALE_CURSOR,
    CASE_CAS_ABSENT,
    CASE_ISOLATION,
    CASE_CONCURRENT_CREATE,
    CASE_CONCURRENT_CAS,
];

/// Which cases passed and why the others failed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConformanceReport {
    pub passed: Vec<&'static str>,
    pub failed: Vec<CaseFailure>,
}

/// One failed case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseFailure {
    pub name: &'static str,
    pub detail: String,
}

impl ConformanceReport {
    pub fn is_conformant(&self) -> bool {
        self.failed.is_empty()
    }

    pub fn failed_names(&self) -> Vec<&'static str> {
        self.failed.iter().map(|f| f.name).collect()
    }

    /// `Err` lists `"<case>: <detail>"` for each failed case.
    pub fn into_result(self) -> Result<(), Vec<String>> {
        if self.failed.is_empty() {
            Ok(())
        } else {
            Err(self
                .failed
                .into_iter()
                .map(|f| format!("{}: {}", f.name, f.detail))
                .collect())
        }
    }

    fn record(&mut self, name: &'static str, outcome: Result<(), String>) {
        match outcome {
            Ok(()) => self.passed.push(name),
            Err(detail) => self.failed.push(CaseFailure { name, detail }),
        }
    }
}

/// Runs the whole suite with `CONCURRENT_SAVERS_DEFAULT` racing savers.
pub async fn check_session_storage<S: SessionStorage>(make: impl Fn() -> S) -> ConformanceReport {
    check_session_storage_with(make, CONCURRENT_SAVERS_DEFAULT).await
}

/// Runs the whole suite; `concurrent_savers` (at least 2) race in the concurrency cases.
pub async fn check_session_storage_with<S: SessionStorage>(
    make: impl Fn() -> S,
    concurrent_savers: usize,
) -> ConformanceReport {
    let savers = concurrent_savers.max(2);
    let mut report = ConformanceReport::default();
    report.record(CASE_LOAD_ABSENT, load_absent(&make()).await);
    report.record(CASE_CREATE_ONCE, create_once(&make()).await);
    report.record(CASE_ROUND_TRIP, round_trip(&make()).await);
    report.record(CASE_CAS_SUCCESS, cas_success(&make()).await);
    report.record(CASE_CAS_WRONG_CURSOR, cas_wrong_cursor(&make()).await);
    report.record(CASE_CAS_STALE_CURSOR, cas_stale_cursor(&make()).await);
    report.record(CASE_CAS_ABSENT, cas_absent(&make()).await);
    report.record(CASE_ISOLATION, isolation(&make()).await);
    report.record(
        CASE_CONCURRENT_CREATE,
        concurrent(&make(), savers, None).await,
    );
    report.record(
        CASE_CONCURRENT_CAS,
        concurrent(&make(), savers, Some(1)).await,
    );
    report
}

type CaseResult = Result<(), String>;

const SESSION_A: &str = "conformance-a";
const SESSION_B: &str = "conformance-b";

/// A valid envelope; `marker` becomes the active turn id so that racing snapshots differ.
fn snapshot(session_id: &str, cursor: u64, marker: &str) -> Value {
    SessionEnvelope {
        session_id: session_id.to_owned(),
        definition_id: "conformance".to_owned(),
        definition_revision: 1,
        updated_at: "2026-07-11T03:00:00.000Z".to_owned(),
        cursor,
        active_turn: Some(ActiveTurn {
            turn_id: marker.to_owned(),
            expires_at: 1_783_738_845_000,
        }),
        terminal_turns: Vec::new(),
        conversation: None,
        confirmations: Vec::new(),
        turn_journal: None,
    }
    .to_value()
}

async fn load<S: SessionStorage>(s: &S, session_id: &str) -> Result<Option<Value>, String> {
    let loaded = s
        .load(session_id, &CancelToken::new())
        .await
        .map_err(|e| format!("load failed: {e}"))?;
    Ok(loaded.filter(|v| !v.is_null()).map(normalize))
}

async fn save<S: SessionStorage>(
    s: &S,
    snapshot: &Value,
    expected: Option<u64>,
) -> Result<bool, String> {
    s.save(snapshot, expected, &CancelToken::new())
        .await
        .map_err(|e| format!("save failed: {e}"))
}

/// Storage may hand back JSON text; compare it as the value it encodes.
fn normalize(v: Value) -> Value {
    match &v {
        Value::String(text) => serde_json::from_str(text).unwrap_or(v),
        _ => v,
    }
}

fn expect(condition: bool, detail: impl FnOnce() -> String) -> CaseResult {
    if condition {
        Ok(())
    } else {
        Err(detail())
    }
}

async fn expect_stored<S: SessionStorage>(s: &S, expected: &Value, when: &str) -> CaseResult {
    let loaded = load(s, SESSION_A).await?;
    expect(loaded.as_ref() == Some(expected), || {
        format!(
            "{when}: stored {}, expected {expected}",
            loaded.map_or("nothing".into(), |v| v.to_string())
        )
    })
}

async fn load_absent<S: SessionStorage>(s: &S) -> CaseResult {
    let loaded = load(s, SESSION_A).await?;
    expect(loaded.is_none(), || {
        format!("expected nothing, loaded {loaded:?}")
    })
}

async fn create_once<S: SessionStorage>(s: &S) -> CaseResult {
    let first = snapshot(SESSION_A, 1, "first");
    expect(save(s, &first, None).await?, || {
        "the first create returned false".into()
    })?;
    let second = snapshot(SESSION_A, 1, "second");
    expect(!save(s, &second, None).await?, || {
        "a second create over an existing record returned true".into()
    })?;
    expect_stored(s, &first, "after the refused second create").await
}

async fn round_trip<S: SessionStorage>(s: &S) -> CaseResult {
    let value = snapshot(SESSION_A, 1, "round-trip");
    expect(save(s, &value, None).await?, || {
        "create returned false".into()
    })?;
    expect_stored(s, &value, "after create").await
}

async fn cas_success<S: SessionStorage>(s: &S) -> CaseResult {
    expect(save(s, &snapshot(SESSION_A, 1, "one"), None).await?, || {
        "create returned false".into()
    })?;
    let next = snapshot(SESSION_A, 2, "two");
    expect(save(s, &next, Some(1)).await?, || {
        "save with the stored cursor 1 returned false".into()
    })?;
    expect_stored(s, &next, "after the CAS save").await
}

async fn cas_wrong_cursor<S: SessionStorage>(s: &S) -> CaseResult {
    let first = snapshot(SESSION_A, 1, "one");
    expect(save(s, &first, None).await?, || {
        "create returned false".into()
    })?;
    let wrong = snapshot(SESSION_A, 8, "wrong");
    expect(!save(s, &wrong, Some(7)).await?, || {
        "save expecting cursor 7 over stored 1 returned true".into()
    })?;
    expect_stored(s, &first, "after the refused save").await
}

async fn cas_stale_cursor<S: SessionStorage>(s: &S) -> CaseResult {
    expect(save(s, &snapshot(SESSION_A, 1, "one"), None).await?, || {
        "create returned false".into()
    })?;
    let current = snapshot(SESSION_A, 2, "two");
    expect(save(s, &current, Some(1)).await?, || {
        "save with the stored cursor returned false".into()
    })?;
    let stale = snapshot(SESSION_A, 2, "stale");
    expect(!save(s, &stale, Some(1)).await?, || {
        "a second save expecting the old cursor 1 returned true".into()
    })?;
    expect_stored(s, &current, "after the refused stale save").await
}

async fn cas_absent<S: SessionStorage>(s: &S) -> CaseResult {
    let value = snapshot(SESSION_A, 1, "one");
    expect(!save(s, &value, Some(0)).await?, || {
        "save expecting cursor 0 on an absent record returned true".into()
    })?;
    load_absent(s)
        .await
        .map_err(|d| format!("after the refused save: {d}"))
}

async fn isolation<S: SessionStorage>(s: &S) -> CaseResult {
    let a = snapshot(SESSION_A, 1, "a");
    let b = snapshot(SESSION_B, 1, "b");
    expect(save(s, &a, None).await?, || {
        "create of session a returned false".into()
    })?;
    expect(save(s, &b, None).await?, || {
        "create of session b next to session a returned false".into()
    })?;
    let loaded_b = load(s, SESSION_B).await?;
    expect(loaded_b.as_ref() == Some(&b), || {
        format!("session b loaded as {loaded_b:?}")
    })?;
    expect_stored(s, &a, "next to session b").await
}

/// `savers` saves race with the same expected cursor (`None`: all create; `Some(1)`: all
/// update a record created at cursor 1). Exactly one must win, and its snapshot is stored.
async fn concurrent<S: SessionStorage>(s: &S, savers: usize, expected: Option<u64>) -> CaseResult {
    if expected.is_some() {
        expect(
            save(s, &snapshot(SESSION_A, 1, "base"), None).await?,
            || "create returned false".into(),
        )?;
    }
    let next_cursor = expected.map_or(1, |c| c + 1);
    let snapshots: Vec<Value> = (0..savers)
        .map(|i| snapshot(SESSION_A, next_cursor, &format!("saver-{i}")))
        .collect();
    let token = CancelToken::new();
    let futures = snapshots
        .iter()
        .map(|snap| s.save(snap, expected, &token))
        .collect();
    let results = JoinAll::new(futures).await;
    let mut winners = Vec::new();
    for (i, result) in results.into_iter().enumerate() {
        if result.map_err(|e| format!("saver {i} failed: {e}"))? {
            winners.push(i);
        }
    }
    expect(winners.len() == 1, || {
        format!(
            "{} of {savers} savers won (expected exactly 1)",
            winners.len()
        )
    })?;
    expect_stored(s, &snapshots[winners[0]], "after the race").await
}

/// Polls every future once per round, in order, until all are done: a hand-written join that
/// interleaves the savers at each of their await points. Passes the caller's waker on, so it
/// works under any executor (including the wasm one, where saves await JS promises).
struct JoinAll<'a, T> {
    pending: Vec<Option<LocalFuture<'a, T>>>,
    results: Vec<Option<T>>,
}

impl<'a, T> JoinAll<'a, T> {
    fn new(futures: Vec<LocalFuture<'a, T>>) -> Self {
        let results = futures.iter().map(|_| None).collect();
        Self {
            pending: futures.into_iter().map(Some).collect(),
            results,
        }
    }
}

// Results are only moved, never pinned, and the futures are boxed: no structural pinning.
impl<T> Unpin for JoinAll<'_, T> {}

impl<T> Future for JoinAll<'_, T> {
    type Output = Vec<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Vec<T>> {
        let this = self.get_mut();
        for (slot, result) in this.pending.iter_mut().zip(this.results.iter_mut()) {
            if let Some(future) = slot {
                if let Poll::Ready(value) = future.as_mut().poll(cx) {
                    *result = Some(value);
                    *slot = None;
                }
            }
        }
        if this.pending.iter().any(Option::is_some) {
            return Poll::Pending;
        }
        Poll::Ready(this.results.iter_mut().filter_map(Option::take).collect())
    }
}
