//! Session logs over a generic store: [`StoreLog`] implements the `SessionLog` port on any
//! [`LogStore`] (numbered items plus a head record, changed by one conditional commit), deciding
//! every append with `core::streams::item_log` — the same producer fencing the Durable Object
//! server applies. [`MemoryLogStore`] is the in-memory store (**not durable**: tests, demos,
//! simulations); hosts back the same port with Redis or Postgres through the JS store interface.
//!
//! Appends on one `StoreLog` run one at a time, in call order. Every commit is a compare-and-set
//! on the one head version, so appends in flight together could only race each other: a writer
//! with several fenced appends in flight (the turn publisher keeps up to
//! `LOG_APPENDS_IN_FLIGHT_MAX`) would have its later seqs read a head without the earlier ones
//! and be refused as gaps, retry after retry, on any store whose calls take a round trip.
//! Each append first decides on the head as this log last wrote it, so a log with one writer
//! (a turn) costs one round trip per append, the commit; the head is read again only when that
//! commit lost (another writer appended) or the decision on it was anything but an append.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::task::{Poll, Waker};

use serde_json::Value;

use turnkeep_core::limits::{LOG_COMMIT_ATTEMPTS_MAX, LOG_POLL_INTERVAL_MS, LOG_READ_ITEMS_MAX};
use turnkeep_core::streams::item_log::{
    check_head_read, check_item_commit, decide_item_append, offset_position, position_offset,
    ItemAppendDecision, LogHead, LogViolation,
};
use turnkeep_core::streams::producer::ProducerHeaders;
use turnkeep_ports::chat::Sleep;
use turnkeep_ports::log::{AppendAck, LogError, LogRead, ProducerStamp, ReadFrom, SessionLog};
use turnkeep_ports::{CancelToken, LocalFuture, PortError};

/// The storage primitive a [`StoreLog`] is built on.
pub trait LogStore {
    /// The head, or `None` for a log never written.
    fn head<'a>(
        &'a self,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Option<LogHead>, PortError>>;

    /// Atomically: if the stored head's version is `expected_version` (`None`: no head yet),
    /// store `items` at positions `next.length - items.len() ..` and the head `next`; `true`.
    /// Otherwise change nothing; `false`.
    fn commit<'a>(
        &'a self,
        expected_version: Option<u64>,
        items: &'a [String],
        next: &'a LogHead,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<bool, PortError>>;

    /// Up to `limit` items from position `from`, in order.
    fn items<'a>(
        &'a self,
        from: u64,
        limit: usize,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Vec<String>, PortError>>;

    /// Resolves once the head's version is past `version` (a commit happened). Stores without
    /// change notification return `None`, and readers poll instead.
    fn changed<'a>(&'a self, _version: u64) -> Option<LocalFuture<'a, ()>> {
        None
    }
}

/// A boxed store is a store: the wasm shell keeps its stores (memory, JS item stores) behind one
/// `StoreLog<Box<dyn LogStore>>`, so the log's code is compiled once, not once per store type
/// (measured: ~5 kB less wasm).
impl LogStore for Box<dyn LogStore> {
    fn head<'a>(
        &'a self,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Option<LogHead>, PortError>> {
        (**self).head(cancel)
    }

    fn commit<'a>(
        &'a self,
        expected_version: Option<u64>,
        items: &'a [String],
        next: &'a LogHead,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<bool, PortError>> {
        (**self).commit(expected_version, items, next, cancel)
    }

    fn items<'a>(
        &'a self,
        from: u64,
        limit: usize,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Vec<String>, PortError>> {
        (**self).items(from, limit, cancel)
    }

    fn changed<'a>(&'a self, version: u64) -> Option<LocalFuture<'a, ()>> {
        (**self).changed(version)
    }
}

/// A `SessionLog` over a [`LogStore`].
pub struct StoreLog<S> {
    store: S,
    /// Pauses between polls of a long-poll read on a store without change notification.
    sleep: Rc<dyn Sleep>,
    /// Appends waiting for their turn, the one running first.
    appends: Fifo,
    /// The head this log's last commit wrote (`None`: read it from the store). Only appends
    /// touch it, one at a time; a stale one costs a lost compare-and-set, never a wrong answer.
    written: RefCell<Option<Option<LogHead>>>,
    /// The highest head version this log's appends read or committed: a head read below it means
    /// the store lost a commit (`check_head_read`).
    seen_version: Cell<Option<u64>>,
}

impl<S: LogStore> StoreLog<S> {
    pub fn new(store: S, sleep: Rc<dyn Sleep>) -> Self {
        Self {
            store,
            sleep,
            appends: Fifo::default(),
            written: RefCell::new(None),
            seen_version: Cell::new(None),
        }
    }

    pub fn store(&self) -> &S {
        &self.store
    }

    async fn append_now(
        &self,
        chunks: &[String],
        producer: Option<&ProducerStamp>,
        cancel: &CancelToken,
    ) -> Result<AppendAck, LogError> {
        let place = self.appends.join();
        place.reached().await;
        // Item seqs when asked (`core::streams::producer`): chunk `i` has seq `p.seq + i`.
        let item_seqs = producer.is_some_and(|p| p.item_seqs);
        let producer = producer.map(|p| ProducerHeaders {
            id: p.id.clone(),
            epoch: p.epoch,
            seq: p.seq,
            items: p.item_seqs.then_some(chunks.len() as u64),
        });
        for _ in 0..LOG_COMMIT_ATTEMPTS_MAX {
            let remembered = self.written.borrow_mut().take();
            let fresh = remembered.is_none();
            let head = match remembered {
                Some(head) => head,
                None => {
                    let head = self.store.head(cancel).await.map_err(LogError::Retryable)?;
                    let seen = check_head_read(self.seen_version.get(), head.as_ref());
                    self.seen_version.set(seen.map_err(refused)?);
                    head
                }
            };
            let current = head.clone().unwrap_or_default();
            let items = chunks.len() as u64;
            let decision = decide_item_append(&current, items, producer.as_ref());
            if !fresh && !matches!(decision, ItemAppendDecision::Append { .. }) {
                continue; // answer only from the stored head
            }
            let (next, skip) = match decision {
                ItemAppendDecision::Append { next, skip } => {
                    let stored = items.saturating_sub(skip);
                    check_item_commit(&current, stored, producer.as_ref(), &next)
                        .map_err(refused)?;
                    (next, skip as usize)
                }
                ItemAppendDecision::Duplicate => {
                    return Ok(AppendAck {
                        offset: position_offset(current.length),
                        duplicate: true,
                        item_seqs,
                    })
                }
                ItemAppendDecision::StaleEpoch { current_epoch } => {
                    return Err(LogError::StaleEpoch { current_epoch })
                }
                ItemAppendDecision::SequenceGap { expected, received } => {
                    return Err(LogError::SequenceGap { expected, received })
                }
                ItemAppendDecision::NewEpochSeqNotZero => {
                    return Err(LogError::Failed(PortError::new(
                        "a new producer epoch must start at seq 0",
                    )))
                }
                ItemAppendDecision::ProducerTableFull => {
                    return Err(LogError::Failed(PortError::new(
                        "the log remembers too many producer ids",
                    )))
                }
                ItemAppendDecision::Refused(why) => {
                    return Err(LogError::Failed(PortError::new(why)))
                }
            };
            let expected = head.map(|h| h.version);
            if self
                .store
                .commit(expected, &chunks[skip..], &next, cancel)
                .await
                .map_err(LogError::Retryable)?
            {
                let offset = position_offset(next.length);
                self.seen_version.set(Some(next.version));
                *self.written.borrow_mut() = Some(Some(next));
                return Ok(AppendAck {
                    offset,
                    duplicate: false,
                    item_seqs,
                });
            }
        }
        Err(LogError::Retryable(PortError::new(
            "the log kept changing under this append",
        )))
    }

    async fn read_now(
        &self,
        from: ReadFrom<'_>,
        wait_ms: u64,
        cancel: &CancelToken,
    ) -> Result<LogRead, LogError> {
        let mut waited_ms = 0;
        loop {
            let head = self.store.head(cancel).await.map_err(LogError::Retryable)?;
            let (version, length) = head.map_or((0, 0), |h| (h.version, h.length));
            let position = match from {
                ReadFrom::Start => 0,
                ReadFrom::Now => length,
                ReadFrom::After(offset) => offset_position(offset).ok_or_else(|| {
                    LogError::Failed(PortError::new("the offset was not minted by this log"))
                })?,
            };
            if position > length {
                return Err(LogError::Failed(PortError::new(
                    "the offset is beyond the tail",
                )));
            }
            if position < length || wait_ms <= waited_ms || cancel.is_cancelled() {
                return self.read_items(position, length, cancel).await;
            }
            match self.store.changed(version) {
                Some(changed) => {
                    let sleep = self.sleep.sleep(wait_ms - waited_ms);
                    let _ = turnkeep_turn::race::race(changed, sleep).await;
                    waited_ms = wait_ms; // one more look, then answer whatever is there
                }
                None => {
                    let step = LOG_POLL_INTERVAL_MS.min(wait_ms - waited_ms);
                    self.sleep.sleep(step).await;
                    waited_ms += step;
                }
            }
        }
    }

    async fn read_items(
        &self,
        position: u64,
        length: u64,
        cancel: &CancelToken,
    ) -> Result<LogRead, LogError> {
        if position == length {
            return Ok(LogRead {
                chunks: Vec::new(),
                offset: (length > 0 || position > 0).then(|| position_offset(position)),
                up_to_date: true,
            });
        }
        let texts = self
            .store
            .items(position, LOG_READ_ITEMS_MAX, cancel)
            .await
            .map_err(LogError::Retryable)?;
        let mut chunks = Vec::with_capacity(texts.len());
        for text in &texts {
            let chunk: Value = serde_json::from_str(text).map_err(|_| {
                LogError::Failed(PortError::new("the log holds an item that is not JSON"))
            })?;
            chunks.push(chunk);
        }
        let next = position + chunks.len() as u64;
        Ok(LogRead {
            chunks,
            offset: Some(position_offset(next)),
            up_to_date: next >= length,
        })
    }
}

impl<S: LogStore> SessionLog for StoreLog<S> {
    fn append<'a>(
        &'a self,
        chunks: &'a [String],
        producer: Option<&'a ProducerStamp>,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<AppendAck, LogError>> {
        Box::pin(self.append_now(chunks, producer, cancel))
    }

    /// Item seqs are the core's rule here (`decide_item_append`), whenever a stamp asks.
    fn gives_item_seqs(&self) -> bool {
        true
    }

    fn read<'a>(
        &'a self,
        from: ReadFrom<'a>,
        wait_ms: u64,
        cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<LogRead, LogError>> {
        Box::pin(self.read_now(from, wait_ms, cancel))
    }
}

/// A first-in, first-out queue of tasks on one thread: each waits until every task that joined
/// before it has left (finished, or was dropped: a cancelled append gives up its place).
#[derive(Default)]
struct Fifo {
    inner: RefCell<FifoInner>,
}

#[derive(Default)]
struct FifoInner {
    joined: u64,
    /// Places still held, in joining order, each with the waker of the task waiting there; the
    /// first one runs.
    places: VecDeque<(u64, Option<Waker>)>,
}

/// A place in a [`Fifo`], left when dropped.
struct FifoPlace<'a> {
    fifo: &'a Fifo,
    id: u64,
}

impl Fifo {
    fn join(&self) -> FifoPlace<'_> {
        let mut inner = self.inner.borrow_mut();
        inner.joined += 1;
        let id = inner.joined;
        inner.places.push_back((id, None));
        FifoPlace { fifo: self, id }
    }
}

impl FifoPlace<'_> {
    /// Resolves once this place is the first.
    async fn reached(&self) {
        std::future::poll_fn(|cx| {
            let mut inner = self.fifo.inner.borrow_mut();
            if inner.places.front().map(|(id, _)| *id) == Some(self.id) {
                return Poll::Ready(());
            }
            if let Some((_, waker)) = inner.places.iter_mut().find(|(id, _)| *id == self.id) {
                *waker = Some(cx.waker().clone());
            }
            Poll::Pending
        })
        .await
    }
}

impl Drop for FifoPlace<'_> {
    fn drop(&mut self) {
        let next = {
            let mut inner = self.fifo.inner.borrow_mut();
            inner.places.retain(|(id, _)| *id != self.id);
            inner.places.front_mut().and_then(|(_, waker)| waker.take())
        };
        if let Some(waker) = next {
            waker.wake();
        }
    }
}

/// Items and head in memory, with change notification. Cloning shares the log.
#[derive(Clone, Default)]
pub struct MemoryLogStore {
    inner: Rc<RefCell<MemoryLogInner>>,
}

#[derive(Default)]
struct MemoryLogInner {
    head: Option<LogHead>,
    items: Vec<String>,
    waiters: Vec<Waker>,
}

impl MemoryLogStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every item stored, as JSON values (tests).
    pub fn chunks(&self) -> Vec<Value> {
        self.inner
            .borrow()
            .items
            .iter()
            .filter_map(|t| serde_json::from_str(t).ok())
            .collect()
    }
}

impl LogStore for MemoryLogStore {
    fn head<'a>(
        &'a self,
        _cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Option<LogHead>, PortError>> {
        let head = self.inner.borrow().head.clone();
        Box::pin(std::future::ready(Ok(head)))
    }

    fn commit<'a>(
        &'a self,
        expected_version: Option<u64>,
        items: &'a [String],
        next: &'a LogHead,
        _cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<bool, PortError>> {
        let mut inner = self.inner.borrow_mut();
        let written = inner.head.as_ref().map(|h| h.version) == expected_version
            && inner.items.len() as u64 + items.len() as u64 == next.length;
        if written {
            inner.items.extend(items.iter().cloned());
            inner.head = Some(next.clone());
            for waker in inner.waiters.drain(..) {
                waker.wake();
            }
        }
        Box::pin(std::future::ready(Ok(written)))
    }

    fn items<'a>(
        &'a self,
        from: u64,
        limit: usize,
        _cancel: &'a CancelToken,
    ) -> LocalFuture<'a, Result<Vec<String>, PortError>> {
        let inner = self.inner.borrow();
        let from = (from as usize).min(inner.items.len());
        let to = from.saturating_add(limit).min(inner.items.len());
        Box::pin(std::future::ready(Ok(inner.items[from..to].to_vec())))
    }

    fn changed<'a>(&'a self, version: u64) -> Option<LocalFuture<'a, ()>> {
        let inner = self.inner.clone();
        Some(Box::pin(std::future::poll_fn(move |cx| {
            let mut inner = inner.borrow_mut();
            if inner.head.as_ref().map_or(0, |h| h.version) > version {
                return std::task::Poll::Ready(());
            }
            inner.waiters.push(cx.waker().clone());
            std::task::Poll::Pending
        })))
    }
}

/// The in-memory session log (**not durable**).
pub type MemorySessionLog = StoreLog<MemoryLogStore>;

/// A broken invariant as the log's answer: not retryable, the cause for the operator.
fn refused(violation: LogViolation) -> LogError {
    LogError::Failed(PortError::new(violation.to_string()))
}
