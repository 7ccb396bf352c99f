//! The assertions after a read and before a log write, each fed a state that breaks it (the
//! session write's own are in tests/session_commit.rs, the log sender's in src/turn/send.rs):
//!
//! - a session loaded again within one request never shows a lower cursor than before
//!   (`core::session::check_reread`), and a confirmation decided on such a read is refused as
//!   internal with the violation for the operator, nothing written;
//! - an item-log commit moves the head by one commit and each producer's seq by one
//!   (`core::streams::item_log::check_item_commit`), and a head read never goes back
//!   (`check_head_read`): `StoreLog` refuses the append instead of deciding on it.
#![cfg(not(target_arch = "wasm32"))] // host-only: wasm-pack test builds every test file for wasm32

mod turn_support;

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use serde_json::{json, Map, Value};
use turn_support::{block_on, chat_setup, Session, SimSleep, World, LIMITS};
use turnkeep::core::protocol::BoundaryError;
use turnkeep::core::session::{
    check_reread, new_session, propose_confirmation, ConfirmationProposal, ReadViolation,
};
use turnkeep::core::streams::item_log::{
    check_head_read, check_item_commit, LogHead, LogViolation,
};
use turnkeep::core::streams::producer::{ProducerHeaders, ProducerState};
use turnkeep::ports::log::{LogError, ProducerStamp, SessionLog};
use turnkeep::ports::session::SessionStorage;
use turnkeep::ports::{CancelToken, LocalFuture, PortError};
use turnkeep::storage::{LogStore, MemoryLogStore, MemorySessionStorage, StoreLog};
use turnkeep::turn::{resolve, Interrupt, ResolveRequest, Stage};

const SESSION: &str = "s1";

#[test]
fn a_reread_cursor_never_goes_back() {
    // (seen before, loaded now) -> what the next load is checked against, or the violation.
    type Case = (Option<u64>, Option<u64>, Result<Option<u64>, ReadViolation>);
    let cases: [Case; 6] = [
        (None, None, Ok(None)),
        (None, Some(4), Ok(Some(4))),
        (Some(4), Some(4), Ok(Some(4))),
        (Some(4), Some(9), Ok(Some(9))),
        // The host deleted the record: a new session, not a step back.
        (Some(4), None, Ok(None)),
        (
            Some(4),
            Some(3),
            Err(ReadViolation::CursorWentBack { seen: 4, loaded: 3 }),
        ),
    ];
    for (seen, loaded, expected) in cases {
        assert_eq!(
            check_reread(seen, loaded),
            expected,
            "{seen:?} then {loaded:?}"
        );
    }
}

/// Session storage that loses every race and, from the second load on, answers with the
/// stored envelope's cursor one lower: a store that lost an acknowledged write.
struct GoesBack {
    inner: MemorySessionStorage,
    loads: Cell<u32>,
    saves: Cell<u32>,
}

impl SessionStorage for GoesBack {
    fn load<'a>(
        &'a self,
        id: &'a str,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Option<Value>, PortError>> {
        Box::pin(async move {
            self.loads.set(self.loads.get() + 1);
            let mut stored = self.inner.load(id, cancel).await?;
            if self.loads.get() > 1 {
                if let Some(cursor) = stored.as_mut().map(|v| &mut v["cursor"]) {
                    *cursor = json!(cursor.as_u64().unwrap_or(1) - 1);
                }
            }
            Ok(stored)
        })
    }
    fn save<'a>(
        &'a self,
        _snapshot: &'a Value,
        _expected: Option<u64>,
        _cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<bool, PortError>> {
        self.saves.set(self.saves.get() + 1);
        Box::pin(std::future::ready(Ok(false)))
    }
}

#[test]
fn a_confirmation_decided_on_a_cursor_that_went_back_is_refused() {
    let world = World::new();
    let session = Session::new(&world);
    // A session at cursor 5 holding one pending confirmation.
    let mut env = new_session(&chat_setup(SESSION).identity, world.now());
    env.cursor = 4;
    let proposal = ConfirmationProposal {
        suffix: "x1".into(),
        action: "transfer".into(),
        input: Map::from_iter([("amount".to_string(), json!(5))]),
    };
    let (env, record) =
        propose_confirmation(&env, proposal, true, world.now(), 300_000).expect("propose");
    let inner = MemorySessionStorage::new();
    assert_eq!(
        futures::executor::block_on(inner.save(&env.to_value(), None, &CancelToken::new())),
        Ok(true)
    );
    let storage = Rc::new(GoesBack {
        inner,
        loads: Cell::new(0),
        saves: Cell::new(0),
    });
    let mut ports = session.ports(false, 0);
    ports.storage = storage.clone();
    let request = ResolveRequest {
        session_id: SESSION.into(),
        token: record.token.clone(),
        approve: true,
        reason: None,
    };
    let chat = chat_setup(SESSION);
    let resolved = block_on(&world, async {
        resolve(&ports, &chat, &request, &LIMITS, &Interrupt::new()).await
    });
    let Err(refusal) = resolved else {
        panic!("resolved on a read that went back")
    };
    assert_eq!(refusal.error, BoundaryError::Internal);
    let fault = refusal.fault.expect("the operator hears of it");
    assert_eq!(fault.stage, Stage::SessionLoad);
    assert!(
        fault.error.message.contains("went back from 5 to 4"),
        "{}",
        fault.error.message
    );
    assert_eq!(
        storage.loads.get(),
        2,
        "the first claim lost, the reload went back"
    );
    assert_eq!(
        storage.saves.get(),
        1,
        "nothing was written after the bad read"
    );
}

fn head(version: u64, length: u64, producers: &[(&str, u64, u64)]) -> LogHead {
    LogHead {
        version,
        length,
        producers: producers
            .iter()
            .map(|&(id, epoch, last_seq)| (id.to_owned(), ProducerState { epoch, last_seq }))
            .collect::<BTreeMap<_, _>>(),
    }
}

#[test]
fn an_item_log_commit_moves_the_head_and_each_producer_by_the_rules() {
    let stored = head(3, 5, &[("p", 1, 4), ("q", 2, 0)]);
    let p = |epoch, seq| ProducerHeaders {
        id: "p".into(),
        epoch,
        seq,
        items: None,
    };
    // With item seqs (Producer-Seq-Count `n`): the request's items take seqs `seq..seq + n`.
    let pn = |epoch, seq, n| ProducerHeaders {
        items: Some(n),
        ..p(epoch, seq)
    };
    let moved = || Err(LogViolation::ProducerMoved { id: "p".into() });
    let not_advanced = |to| {
        Err(LogViolation::HeadNotAdvanced {
            from: (3, 5),
            to,
            items: 2,
        })
    };
    // (what, the producer's headers, the head to commit, expected)
    type Case = (
        &'static str,
        Option<ProducerHeaders>,
        LogHead,
        Result<(), LogViolation>,
    );
    let cases: Vec<Case> = vec![
        (
            "the next seq",
            Some(p(1, 5)),
            head(4, 7, &[("p", 1, 5), ("q", 2, 0)]),
            Ok(()),
        ),
        (
            "a new epoch at 0",
            Some(p(3, 0)),
            head(4, 7, &[("p", 3, 0), ("q", 2, 0)]),
            Ok(()),
        ),
        (
            "item seqs: two new items",
            Some(pn(1, 5, 2)),
            head(4, 7, &[("p", 1, 6), ("q", 2, 0)]),
            Ok(()),
        ),
        (
            "item seqs: the first of three stored before, two new",
            Some(pn(1, 4, 3)),
            head(4, 7, &[("p", 1, 6), ("q", 2, 0)]),
            Ok(()),
        ),
        (
            "item seqs: the last seq not the request's",
            Some(pn(1, 5, 2)),
            head(4, 7, &[("p", 1, 5), ("q", 2, 0)]),
            moved(),
        ),
        (
            "no producer",
            None,
            head(4, 7, &[("p", 1, 4), ("q", 2, 0)]),
            Ok(()),
        ),
        (
            "version + 2",
            Some(p(1, 5)),
            head(5, 7, &[("p", 1, 5), ("q", 2, 0)]),
            not_advanced((5, 7)),
        ),
        (
            "an item lost",
            Some(p(1, 5)),
            head(4, 6, &[("p", 1, 5), ("q", 2, 0)]),
            not_advanced((4, 6)),
        ),
        (
            "a seq skipped",
            Some(p(1, 6)),
            head(4, 7, &[("p", 1, 6), ("q", 2, 0)]),
            moved(),
        ),
        (
            "a seq reused",
            Some(p(1, 4)),
            head(4, 7, &[("p", 1, 4), ("q", 2, 0)]),
            moved(),
        ),
        (
            "another seq than sent",
            Some(p(1, 5)),
            head(4, 7, &[("p", 1, 6), ("q", 2, 0)]),
            moved(),
        ),
        (
            "a new epoch not at 0",
            Some(p(3, 2)),
            head(4, 7, &[("p", 3, 2), ("q", 2, 0)]),
            moved(),
        ),
        (
            "an older epoch",
            Some(p(0, 0)),
            head(4, 7, &[("p", 0, 0), ("q", 2, 0)]),
            moved(),
        ),
        (
            "the producer forgotten",
            Some(p(1, 5)),
            head(4, 7, &[("q", 2, 0)]),
            moved(),
        ),
        (
            "another producer touched",
            Some(p(1, 5)),
            head(4, 7, &[("p", 1, 5), ("q", 2, 1)]),
            Err(LogViolation::ProducerMoved { id: "q".into() }),
        ),
        (
            "a producer made up without one",
            None,
            head(4, 7, &[("p", 1, 4), ("q", 2, 0), ("r", 0, 0)]),
            Err(LogViolation::ProducerMoved { id: "r".into() }),
        ),
    ];
    for (what, producer, next, expected) in cases {
        assert_eq!(
            check_item_commit(&stored, 2, producer.as_ref(), &next),
            expected,
            "{what}"
        );
    }
}

#[test]
fn a_log_head_read_never_goes_back() {
    let at = |version| head(version, version, &[]);
    assert_eq!(check_head_read(None, None), Ok(Some(0)));
    assert_eq!(check_head_read(Some(0), Some(&at(2))), Ok(Some(2)));
    assert_eq!(check_head_read(Some(2), Some(&at(2))), Ok(Some(2)));
    assert_eq!(
        check_head_read(Some(2), Some(&at(1))),
        Err(LogViolation::HeadWentBack { seen: 2, loaded: 1 })
    );
    assert_eq!(
        check_head_read(Some(2), None),
        Err(LogViolation::HeadWentBack { seen: 2, loaded: 0 })
    );
}

/// The memory log store, whose head can be made to answer an older state (a lost commit).
struct Rewinding {
    inner: MemoryLogStore,
    rewound: RefCell<Option<Option<LogHead>>>,
}

impl LogStore for Rewinding {
    fn head<'a>(
        &'a self,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Option<LogHead>, PortError>> {
        match self.rewound.borrow().clone() {
            Some(head) => Box::pin(std::future::ready(Ok(head))),
            None => self.inner.head(cancel),
        }
    }
    fn commit<'a>(
        &'a self,
        expected_version: Option<u64>,
        items: &'a [String],
        next: &'a LogHead,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<bool, PortError>> {
        self.inner.commit(expected_version, items, next, cancel)
    }
    fn items<'a>(
        &'a self,
        from: u64,
        limit: usize,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Vec<String>, PortError>> {
        self.inner.items(from, limit, cancel)
    }
}

#[test]
fn a_store_log_refuses_to_decide_on_a_head_that_went_back() {
    let world = World::new();
    let store = Rewinding {
        inner: MemoryLogStore::new(),
        rewound: RefCell::new(None),
    };
    let log = StoreLog::new(store, Rc::new(SimSleep(world.clone())));
    let stamp = |seq| ProducerStamp {
        id: "p".into(),
        epoch: 1,
        seq,
        item_seqs: false,
    };
    let chunk = vec![json!({ "type": "x" }).to_string()];
    let cancel = CancelToken::new();
    let first = block_on(&world, log.append(&chunk, Some(&stamp(0)), &cancel));
    assert!(first.is_ok(), "{first:?}");
    // The store loses that commit; a resend of seq 0 is decided on the head the log wrote (a
    // duplicate), then on a fresh read, which went back.
    *log.store().rewound.borrow_mut() = Some(None);
    let again = block_on(&world, log.append(&chunk, Some(&stamp(0)), &cancel));
    match again {
        Err(LogError::Failed(e)) => assert!(
            e.message.contains("went back from version 1 to 0"),
            "{}",
            e.message
        ),
        other => panic!("decided on a head that went back: {other:?}"),
    }
    assert_eq!(
        log.store().inner.chunks().len(),
        1,
        "nothing more was stored"
    );
}
