//! The SessionStorage conformance suite: the in-memory adapter passes it, and two broken
//! adapters fail exactly the cases that describe their bugs.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Waker};

use serde_json::{json, Value};
use turnkeep::ports::session::SessionStorage;
use turnkeep::ports::{CancelToken, LocalFuture, PortError};
use turnkeep::storage::conformance::*;
use turnkeep::storage::{check_session_storage, MemorySessionStorage};

fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
    }
}

fn key(snapshot: &Value) -> String {
    snapshot["sessionId"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Writes whatever it is given: the classic non-conformant store.
#[derive(Default)]
struct LastWriteWins(RefCell<HashMap<String, Value>>);

impl SessionStorage for LastWriteWins {
    fn load<'a>(
        &'a self,
        id: &'a str,
        _: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Option<Value>, PortError>> {
        Box::pin(std::future::ready(Ok(self.0.borrow().get(id).cloned())))
    }
    fn save<'a>(
        &'a self,
        snapshot: &'a Value,
        _: Option<u64>,
        _: &'a CancelToken,
    ) -> LocalFuture<'a, Result<bool, PortError>> {
        self.0.borrow_mut().insert(key(snapshot), snapshot.clone());
        Box::pin(std::future::ready(Ok(true)))
    }
}

/// Compares, awaits (as a remote store would), then writes: right in series, wrong in a race.
#[derive(Default)]
struct CheckThenAct(RefCell<HashMap<String, Value>>);

/// Pending once, then ready: one await point.
struct YieldOnce(Cell<bool>);

impl Future for YieldOnce {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.replace(true) {
            Poll::Ready(())
        } else {
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

impl SessionStorage for CheckThenAct {
    fn load<'a>(
        &'a self,
        id: &'a str,
        _: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Option<Value>, PortError>> {
        Box::pin(std::future::ready(Ok(self.0.borrow().get(id).cloned())))
    }
    fn save<'a>(
        &'a self,
        snapshot: &'a Value,
        expected: Option<u64>,
        _: &'a CancelToken,
    ) -> LocalFuture<'a, Result<bool, PortError>> {
        Box::pin(async move {
            let stored = self
                .0
                .borrow()
                .get(&key(snapshot))
                .map(|v| v["cursor"].as_u64());
            let ok = match (stored, expected) {
                (None, None) => true,
                (Some(c), Some(e)) => c == Some(e),
                _ => false,
            };
            YieldOnce(Cell::new(false)).await;
            if ok {
                self.0.borrow_mut().insert(key(snapshot), snapshot.clone());
            }
            Ok(ok)
        })
    }
}

#[test]
fn the_memory_adapter_passes_every_case() {
    let report = block_on(check_session_storage(MemorySessionStorage::new));
    assert_eq!(report.failed, vec![], "memory adapter failed");
    assert_eq!(report.passed, ALL_CASES.to_vec());
    assert_eq!(report.into_result(), Ok(()));
}

#[test]
fn last_write_wins_fails_every_conflict_case() {
    let report = block_on(check_session_storage(LastWriteWins::default));
    assert_eq!(
        report.failed_names(),
        vec![
            CASE_CREATE_ONCE,
            CASE_CAS_WRONG_CURSOR,
            CASE_CAS_STALE_CURSOR,
            CASE_CAS_ABSENT,
            CASE_CONCURRENT_CREATE,
            CASE_CONCURRENT_CAS,
        ]
    );
    assert_eq!(
        report.passed,
        vec![
            CASE_LOAD_ABSENT,
            CASE_ROUND_TRIP,
            CASE_CAS_SUCCESS,
            CASE_ISOLATION
        ]
    );
    let race = &report.failed[5].detail;
    assert!(race.contains("32 of 32 savers won"), "{race}");
    let errors = report.into_result().expect_err("not conformant");
    assert!(errors[0].starts_with(CASE_CREATE_ONCE));
}

#[test]
fn check_then_act_fails_only_the_races() {
    let report = block_on(check_session_storage_with(CheckThenAct::default, 8));
    assert_eq!(
        report.failed_names(),
        vec![CASE_CONCURRENT_CREATE, CASE_CONCURRENT_CAS]
    );
    assert!(
        report.failed[1].detail.contains("8 of 8 savers won"),
        "{}",
        report.failed[1].detail
    );
}

#[test]
fn memory_adapter_specifics() {
    let store = MemorySessionStorage::new();
    // A snapshot without a usable key is an error of the call, not a conflict.
    for bad in [
        json!({}),
        json!({"sessionId": "a b", "cursor": 1}),
        json!({"sessionId": "s", "cursor": -1}),
        json!("{"),
    ] {
        assert!(
            block_on(store.save(&bad, None, &CancelToken::new())).is_err(),
            "{bad}"
        );
    }
    assert!(store.is_empty());
    // JSON text is keyed like the object it encodes and stored as given.
    let text = Value::String(r#"{"sessionId":"s","cursor":1}"#.into());
    assert_eq!(
        block_on(store.save(&text, None, &CancelToken::new())),
        Ok(true)
    );
    assert_eq!(
        block_on(store.load("s", &CancelToken::new())),
        Ok(Some(text.clone()))
    );
    assert_eq!(
        block_on(store.save(
            &json!({"sessionId": "s", "cursor": 2}),
            Some(1),
            &CancelToken::new()
        )),
        Ok(true)
    );
    assert_eq!(store.len(), 1);
    assert!(store.delete("s"));
    assert_eq!(block_on(store.load("s", &CancelToken::new())), Ok(None));
}
