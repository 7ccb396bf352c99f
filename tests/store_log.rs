//! The store-backed log (`StoreLog`) over a store whose every call is a round trip (1 ms of
//! virtual time before it reads or writes, as a Redis or Postgres store takes): appends on one
//! log are applied one at a time in call order, so a fenced writer with several appends in
//! flight (a publisher to a log without item seqs keeps up to 5) never has its own later seqs
//! refused as gaps, and a whole sender drains with a single head read: the log decides each
//! append on the head it wrote last, and reads the store's again only when that commit lost.
//! With item seqs (the store log gives them), chunks queued together go in one commit.
#![cfg(not(target_arch = "wasm32"))]

mod turn_support;

use std::cell::Cell;
use std::rc::Rc;

use serde_json::{json, Value};
use turn_support::{block_on, run_all, SimSleep, Task, World};
use turnkeep::core::streams::item_log::{position_offset, LogHead};
use turnkeep::ports::chat::Sleep;
use turnkeep::ports::log::{AppendAck, LogError, ProducerStamp, SessionLog};
use turnkeep::ports::{CancelToken, LocalFuture, PortError};
use turnkeep::storage::{LogStore, MemoryLogStore, StoreLog};
use turnkeep::turn::race::{join, race, Either};
use turnkeep::turn::send::{LogSender, Producer, SendEnd, SendOptions};

/// The memory store behind a round trip; counts head reads, commits, and commits that lost.
struct RoundTrip {
    inner: MemoryLogStore,
    sleep: SimSleep,
    heads: Cell<u32>,
    commits: Cell<u32>,
    lost: Cell<u32>,
}

const ROUND_TRIP_MS: u64 = 1;

impl LogStore for RoundTrip {
    fn head<'a>(
        &'a self,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Option<LogHead>, PortError>> {
        Box::pin(async move {
            self.sleep.sleep(ROUND_TRIP_MS).await;
            self.heads.set(self.heads.get() + 1);
            self.inner.head(cancel).await
        })
    }

    fn commit<'a>(
        &'a self,
        expected_version: Option<u64>,
        items: &'a [String],
        next: &'a LogHead,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<bool, PortError>> {
        Box::pin(async move {
            self.sleep.sleep(ROUND_TRIP_MS).await;
            let written = self
                .inner
                .commit(expected_version, items, next, cancel)
                .await?;
            self.commits.set(self.commits.get() + 1);
            if !written {
                self.lost.set(self.lost.get() + 1);
            }
            Ok(written)
        })
    }

    fn items<'a>(
        &'a self,
        from: u64,
        limit: usize,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Vec<String>, PortError>> {
        Box::pin(async move {
            self.sleep.sleep(ROUND_TRIP_MS).await;
            self.inner.items(from, limit, cancel).await
        })
    }
}

fn round_trip_log(world: &Rc<World>) -> (Rc<StoreLog<RoundTrip>>, MemoryLogStore) {
    let inner = MemoryLogStore::new();
    let store = RoundTrip {
        inner: inner.clone(),
        sleep: SimSleep(world.clone()),
        heads: Cell::new(0),
        commits: Cell::new(0),
        lost: Cell::new(0),
    };
    let log = StoreLog::new(store, Rc::new(SimSleep(world.clone())));
    (Rc::new(log), inner)
}

fn chunk(n: u64) -> String {
    json!({ "type": "CUSTOM", "name": "n", "value": n }).to_string()
}

fn values(store: &MemoryLogStore) -> Vec<Value> {
    store.chunks().iter().map(|c| c["value"].clone()).collect()
}

#[test]
fn appends_started_together_are_applied_in_call_order() {
    let world = World::new();
    let (log, stored) = round_trip_log(&world);
    let results = std::cell::RefCell::new(Vec::new());
    let tasks: Vec<Task<'_>> = (0..5u64)
        .map(|seq| {
            let (log, results) = (&log, &results);
            Box::pin(async move {
                let text = [chunk(seq)];
                let stamp = ProducerStamp {
                    id: "writer".into(),
                    epoch: 0,
                    seq,
                    item_seqs: false,
                };
                let answer = log.append(&text, Some(&stamp), &CancelToken::new()).await;
                results.borrow_mut().push((seq, answer));
            }) as Task<'_>
        })
        .collect();
    run_all(&world, tasks);
    for (seq, answer) in results.into_inner() {
        let ack = answer.unwrap_or_else(|e| panic!("seq {seq} was refused: {e}"));
        assert!(!ack.duplicate, "seq {seq}");
    }
    assert_eq!(values(&stored), [0, 1, 2, 3, 4].map(Value::from));
    let store = log.store();
    assert_eq!(
        (store.heads.get(), store.lost.get()),
        (1, 0),
        "one head read, no commit lost"
    );
}

#[test]
fn a_fenced_sender_drains_a_burst_in_one_commit() {
    let world = World::new();
    let (log, stored) = round_trip_log(&world);
    let sleep: Rc<dyn Sleep> = Rc::new(SimSleep(world.clone()));
    let sender = LogSender::new(
        log.clone(),
        sleep,
        SendOptions {
            producer: Some(Producer {
                id: "chat-turn:s:t".into(),
                epoch: 3,
            }),
            merge_deltas: false,
            deadline: None,
            first_seq: 0,
        },
    );
    let chunks: Vec<Value> = (0..40u64)
        .map(|n| serde_json::from_str(&chunk(n)).unwrap())
        .collect();
    sender.push(chunks);
    sender.close();
    let end = block_on(&world, sender.pump());
    assert_eq!(end, SendEnd::Drained);
    assert_eq!(
        values(&stored),
        (0..40u64).map(Value::from).collect::<Vec<_>>()
    );
    let store = log.store();
    assert_eq!(
        (store.heads.get(), store.commits.get(), store.lost.get()),
        (1, 1, 0),
        "one head read; the 40 queued in one commit (the store log gives item seqs)"
    );
}

/// Appends chunk `n` as producer `(id, epoch, seq)`.
async fn append_as(
    log: &dyn SessionLog,
    n: u64,
    (id, epoch, seq): (&str, u64, u64),
) -> Result<AppendAck, LogError> {
    let stamp = ProducerStamp {
        id: id.into(),
        epoch,
        seq,
        item_seqs: false,
    };
    log.append(&[chunk(n)], Some(&stamp), &CancelToken::new())
        .await
}

#[test]
fn another_writer_costs_a_lost_commit_and_a_fresh_read_never_a_wrong_answer() {
    let world = World::new();
    let (ours, stored) = round_trip_log(&world);
    let theirs = StoreLog::new(stored.clone(), Rc::new(SimSleep(world.clone())));
    block_on(&world, async {
        append_as(&*ours, 0, ("a", 0, 0)).await.unwrap();
        append_as(&theirs, 1, ("b", 0, 0)).await.unwrap();
        // Ours remembers the head before b's append: its commit loses, it reads again.
        let ack = append_as(&*ours, 2, ("a", 0, 1)).await.unwrap();
        assert_eq!(ack.offset, position_offset(3));
        // a's next seq written elsewhere: on the remembered head seq 3 would be a gap; the log
        // reads the stored head before it answers anything but an append.
        append_as(&theirs, 3, ("a", 0, 2)).await.unwrap();
        let ack = append_as(&*ours, 4, ("a", 0, 3)).await.unwrap();
        assert_eq!(ack.offset, position_offset(5));
        // A newer epoch of a, written elsewhere: the remembered head lets epoch 0 through, the
        // commit loses, and the stored head refuses it.
        append_as(&theirs, 5, ("a", 1, 0)).await.unwrap();
        let stale = append_as(&*ours, 6, ("a", 0, 4)).await;
        assert_eq!(stale, Err(LogError::StaleEpoch { current_epoch: 1 }));
    });
    assert_eq!(values(&stored), [0, 1, 2, 3, 4, 5].map(Value::from));
    assert_eq!(
        ours.store().lost.get(),
        2,
        "two commits lost to the other writer"
    );
}

#[test]
fn an_append_dropped_while_it_waits_gives_up_its_place() {
    let world = World::new();
    let (log, stored) = round_trip_log(&world);
    let sleep = SimSleep(world.clone());
    let outcomes = std::cell::RefCell::new(Vec::new());
    let tasks: Vec<Task<'_>> = vec![
        Box::pin(async {
            let first = append_as(&*log, 0, ("w", 0, 0)).await;
            outcomes.borrow_mut().push(("first", first.is_ok()));
        }),
        Box::pin(async {
            // Waits behind the first (two round trips), and is given up after one.
            let waiting = append_as(&*log, 1, ("x", 0, 0));
            let gave_up = race(waiting, sleep.sleep(ROUND_TRIP_MS)).await;
            outcomes
                .borrow_mut()
                .push(("second", matches!(gave_up, Either::Left(_))));
        }),
        Box::pin(async {
            let third = append_as(&*log, 2, ("y", 0, 0)).await;
            outcomes.borrow_mut().push(("third", third.is_ok()));
        }),
    ];
    run_all(&world, tasks);
    assert_eq!(
        outcomes.into_inner(),
        [("second", false), ("first", true), ("third", true)]
    );
    assert_eq!(values(&stored), [0, 2].map(Value::from));
}

/// A log that records every acknowledged append (its chunks and their seqs) and stops answering
/// at its `crash_at`-th append (0-based): the writer's process is gone from then on. With
/// `item_seqs` off it is a log of the protocol as written (one seq per append).
struct Crashing {
    inner: Rc<StoreLog<RoundTrip>>,
    item_seqs: bool,
    crash_at: Cell<Option<usize>>,
    appends: Cell<usize>,
    /// (seq, chunk) of every chunk an acknowledged append carried.
    acked: std::cell::RefCell<Vec<(u64, String)>>,
}

impl SessionLog for Crashing {
    fn append<'a>(
        &'a self,
        chunks: &'a [String],
        producer: Option<&'a ProducerStamp>,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<AppendAck, LogError>> {
        Box::pin(async move {
            let n = self.appends.get();
            self.appends.set(n + 1);
            if self.crash_at.get().is_some_and(|at| n >= at) {
                return Err(LogError::Failed(PortError::new(
                    "the writer's process died",
                )));
            }
            let stamp = producer.map(|p| ProducerStamp {
                item_seqs: p.item_seqs && self.item_seqs,
                ..p.clone()
            });
            let ack = self.inner.append(chunks, stamp.as_ref(), cancel).await?;
            if let Some(p) = &stamp {
                let mut acked = self.acked.borrow_mut();
                for (i, chunk) in chunks.iter().enumerate() {
                    let seq = if p.item_seqs { p.seq + i as u64 } else { p.seq };
                    acked.push((seq, chunk.clone()));
                }
            }
            Ok(ack)
        })
    }

    fn read<'a>(
        &'a self,
        from: turnkeep::ports::log::ReadFrom<'a>,
        wait_ms: u64,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<turnkeep::ports::log::LogRead, LogError>> {
        self.inner.read(from, wait_ms, cancel)
    }
}

fn crashing(world: &Rc<World>, item_seqs: bool) -> (Rc<Crashing>, MemoryLogStore) {
    let (inner, stored) = round_trip_log(world);
    let log = Crashing {
        inner,
        item_seqs,
        crash_at: Cell::new(None),
        appends: Cell::new(0),
        acked: Default::default(),
    };
    (Rc::new(log), stored)
}

/// A fenced sender of the 40 chunks `0..40`, pushed in bursts of `burst` with a pause between.
fn send_bursts(world: &Rc<World>, log: Rc<dyn SessionLog>, burst: usize) -> SendEnd {
    let sleep: Rc<dyn Sleep> = Rc::new(SimSleep(world.clone()));
    let sender = LogSender::new(
        log,
        sleep.clone(),
        SendOptions {
            producer: Some(Producer {
                id: "chat-turn:s:t".into(),
                epoch: 7,
            }),
            merge_deltas: false,
            deadline: None,
            first_seq: 0,
        },
    );
    let chunks: Vec<Value> = (0..40u64)
        .map(|n| serde_json::from_str(&chunk(n)).unwrap())
        .collect();
    let feed = async {
        for part in chunks.chunks(burst) {
            sender.push(part.to_vec());
            sleep.sleep(3).await;
        }
        sender.close();
    };
    let (end, ()) = block_on(world, join(sender.pump(), feed));
    end
}

#[test]
fn every_chunk_keeps_its_seq_with_item_seqs_or_without() {
    let seqs = |item_seqs: bool| {
        let world = World::new();
        let (log, stored) = crashing(&world, item_seqs);
        assert_eq!(send_bursts(&world, log.clone(), 7), SendEnd::Drained);
        assert_eq!(
            values(&stored),
            (0..40u64).map(Value::from).collect::<Vec<_>>()
        );
        let mut acked = log.acked.borrow().clone();
        acked.sort();
        acked.dedup();
        (acked, log.appends.get())
    };
    let (one_per_append, appends_without) = seqs(false);
    let (with_item_seqs, appends_with) = seqs(true);
    // Chunk n has seq n either way: the fencing sequence per chunk is unchanged.
    assert_eq!(with_item_seqs, one_per_append);
    assert!(with_item_seqs.iter().all(|(seq, c)| *c == chunk(*seq)));
    assert_eq!(appends_without, 40);
    assert!(
        appends_with <= 7,
        "{appends_with} appends for 6 bursts (the first chunk alone)"
    );
}

#[test]
fn a_crash_between_batches_loses_nothing_acknowledged() {
    for crash_at in 1..6 {
        let world = World::new();
        let (log, stored) = crashing(&world, true);
        log.crash_at.set(Some(crash_at));
        let end = send_bursts(&world, log.clone(), 7);
        assert!(
            matches!(end, SendEnd::Failed(_)),
            "crash at append {crash_at}: {end:?}"
        );
        // What was acknowledged is stored, in order, each chunk once; nothing of the batch that
        // was not acknowledged.
        let acked: Vec<Value> = log
            .acked
            .borrow()
            .iter()
            .map(|(_, c)| serde_json::from_str::<Value>(c).unwrap()["value"].clone())
            .collect();
        assert_eq!(values(&stored), acked, "crash at append {crash_at}");
        assert!(!acked.is_empty());
        // The same writer again (a retry of the turn's publishing under the same producer and
        // epoch, its bursts cut the same or not): only what is missing is appended.
        let again = Crashing {
            inner: log.inner.clone(),
            item_seqs: true,
            crash_at: Cell::new(None),
            appends: Cell::new(0),
            acked: Default::default(),
        };
        assert_eq!(send_bursts(&world, Rc::new(again), 5), SendEnd::Drained);
        assert_eq!(
            values(&stored),
            (0..40u64).map(Value::from).collect::<Vec<_>>(),
            "crash at append {crash_at}, then the replay"
        );
    }
}
