//! The one log sender: chunks to a session log, in order, for the turn publisher
//! ([`super::publish`]) and for hosts that run their own model stream (`toChatResponse`,
//! [`super::external`]).
//!
//! - **Fenced** (a producer `(id, epoch)`): each chunk has its own seq, its index among the chunks
//!   this sender was given (a chunk keeps its seq and text across retries). A replay under the
//!   same `(id, epoch)` is deduplicated chunk by chunk by the log; a stale epoch ends the sender
//!   (`Fenced`). The first append goes alone, one chunk (it may create the stream, and its ack
//!   says whether the log gives item seqs), or, to a log known to give them
//!   (`SessionLog::gives_item_seqs`), with everything queued. Then, to a log with item seqs
//!   (`ports::log`: chunk `i` of an append has seq `seq + i`), one append at a time carries
//!   everything queued while the one before was on its way (up to `LOG_APPEND_CHUNKS_MAX` chunks
//!   and `LOG_APPEND_BATCH_BYTES_MAX` bytes): the chunks of one burst are one request and one
//!   transaction, each with the seq it would have had alone. To any other log, each chunk is its
//!   own producer batch, at most `LOG_APPENDS_IN_FLIGHT_MAX` in flight.
//! - **Unfenced** (no producer): one append at a time (order is all the log can go by), carrying
//!   everything queued so far as one batch. A retried append that had in fact been stored is
//!   stored twice: only a producer makes retries safe.
//!
//! Retryable failures (and a sequence gap behind an earlier chunk still in flight) are retried
//! with a growing pause, up to `LOG_APPEND_ATTEMPTS_MAX` attempts; anything else ends the sender.
//! Nothing is sent once the optional deadline has passed (a turn whose lease lapsed must not
//! write after another claim may own the session).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use serde_json::Value;

use turnkeep_core::limits::{
    LOG_APPENDS_IN_FLIGHT_MAX, LOG_APPEND_ATTEMPTS_MAX, LOG_APPEND_BATCH_BYTES_MAX,
    LOG_APPEND_CHUNKS_MAX, LOG_APPEND_RETRY_BACKOFF_MS, LOG_CHUNKS_QUEUED_MAX,
};
use turnkeep_core::projection::merge_queued;
use turnkeep_ports::chat::{Clock, Sleep};
use turnkeep_ports::log::{AppendAck, LogError, ProducerStamp, SessionLog};
use turnkeep_ports::CancelToken;

/// How a sender ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendEnd {
    /// Every chunk was acknowledged by the log.
    Drained,
    /// A newer epoch wrote under this producer id: this writer is fenced.
    Fenced { current_epoch: u64 },
    /// The log refused or kept failing (the last error); chunks after it were not sent.
    Failed(LogError),
    /// More chunks were queued than `LOG_CHUNKS_QUEUED_MAX`: the log fell too far behind.
    Overflow,
    /// The deadline passed before every chunk was sent; the rest was not sent.
    Lapsed,
}

/// Who writes: the producer's id and epoch (seqs are the sender's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Producer {
    pub id: String,
    pub epoch: u64,
}

/// How the sender behaves (see the module doc).
pub struct SendOptions {
    pub producer: Option<Producer>,
    /// Merge text (and tool-argument) deltas that are still queued (the publisher, whose seqs
    /// need not repeat across runs). Off where a replay must give every chunk the same seq.
    pub merge_deltas: bool,
    /// `(clock, at_ms)`: nothing is sent from `at_ms` on.
    pub deadline: Option<(Rc<dyn Clock>, u64)>,
    /// The seq of the first chunk (a sender that continues another one's sequence).
    pub first_seq: u64,
}

/// Chunk texts on their way: their seq once sent (fenced) and how often they were tried.
struct Pending {
    texts: Vec<String>,
    seq: u64,
    attempts: u32,
}

struct State {
    /// Chunks not yet sent (no seq yet).
    queue: VecDeque<Value>,
    /// Sent chunks to send again, lowest seq first.
    retry: VecDeque<Pending>,
    next_seq: u64,
    /// The highest seq sent so far (fenced): a first send takes the next one, a retry earlier
    /// ones, so no seq is skipped or sent with two contents.
    highest_sent: Option<u64>,
    in_flight: usize,
    /// An append was acknowledged: the stream exists and knows this producer.
    acknowledged: bool,
    /// The last acknowledgement said the log gives item seqs (fenced appends may carry several
    /// chunks).
    item_seqs: bool,
    /// No more chunks will be pushed.
    closed: bool,
    ended: Option<SendEnd>,
    /// The pump, and whoever waits for room in the queue.
    wakers: Vec<Waker>,
}

pub struct LogSender {
    log: Rc<dyn SessionLog>,
    sleep: Rc<dyn Sleep>,
    options: SendOptions,
    /// Fires when the sender gives up, cancelling appends in flight.
    cancel: CancelToken,
    state: RefCell<State>,
}

/// What became of one send: `None` when it was not sent because the deadline had passed.
type Sent = Option<Result<AppendAck, LogError>>;
type Append<'a> = Pin<Box<dyn Future<Output = (Pending, Sent)> + 'a>>;

impl LogSender {
    pub fn new(log: Rc<dyn SessionLog>, sleep: Rc<dyn Sleep>, options: SendOptions) -> Self {
        let first_seq = options.first_seq;
        Self {
            log,
            sleep,
            options,
            cancel: CancelToken::new(),
            state: RefCell::new(State {
                queue: VecDeque::new(),
                retry: VecDeque::new(),
                next_seq: first_seq,
                highest_sent: None,
                in_flight: 0,
                acknowledged: false,
                item_seqs: false,
                closed: false,
                ended: None,
                wakers: Vec::new(),
            }),
        }
    }

    /// Queues chunks behind the others. Ignored once the sender ended or was closed.
    pub fn push(&self, chunks: Vec<Value>) {
        if chunks.is_empty() {
            return;
        }
        let overflow = {
            let mut st = self.state.borrow_mut();
            if st.ended.is_some() || st.closed {
                return;
            }
            for chunk in chunks {
                if self.options.merge_deltas {
                    merge_queued(&mut st.queue, chunk);
                } else {
                    st.queue.push_back(chunk);
                }
            }
            st.queue.len() > LOG_CHUNKS_QUEUED_MAX
        };
        if overflow {
            self.end_with(SendEnd::Overflow);
        }
        self.wake();
    }

    /// No more chunks follow: the pump ends once everything queued was acknowledged.
    pub fn close(&self) {
        self.state.borrow_mut().closed = true;
        self.wake();
    }

    /// True once the sender ended or was closed (pushing does nothing then).
    pub fn is_closed(&self) -> bool {
        let st = self.state.borrow();
        st.closed || st.ended.is_some()
    }

    /// How the sender ended, if it did.
    pub fn ended(&self) -> Option<SendEnd> {
        self.state.borrow().ended.clone()
    }

    /// Gives up: nothing more is sent, appends in flight are cancelled. The first end stays.
    pub(crate) fn end_with(&self, end: SendEnd) {
        {
            let mut st = self.state.borrow_mut();
            if st.ended.is_some() {
                return;
            }
            st.queue.clear();
            st.retry.clear();
            st.ended = Some(end);
        }
        self.cancel.cancel();
        self.wake();
    }

    /// Resolves once fewer than `max` chunks wait to be sent (or the sender ended): a source
    /// that is read only as fast as the log takes its chunks.
    pub async fn room(&self, max: usize) {
        std::future::poll_fn(|cx| {
            let mut st = self.state.borrow_mut();
            if st.ended.is_some() || st.queue.len() + st.retry.len() + st.in_flight < max {
                return Poll::Ready(());
            }
            st.wakers.push(cx.waker().clone());
            Poll::Pending
        })
        .await
    }

    /// Resolves once the sender ended (drained or gave up).
    pub async fn finished(&self) {
        std::future::poll_fn(|cx| {
            let mut st = self.state.borrow_mut();
            if st.ended.is_some() {
                return Poll::Ready(());
            }
            st.wakers.push(cx.waker().clone());
            Poll::Pending
        })
        .await
    }

    /// The seq the next new chunk gets.
    pub(crate) fn next_seq(&self) -> u64 {
        self.state.borrow().next_seq
    }

    fn wake(&self) {
        let wakers = std::mem::take(&mut self.state.borrow_mut().wakers);
        for waker in wakers {
            waker.wake();
        }
    }

    fn lapsed(&self) -> bool {
        self.options
            .deadline
            .as_ref()
            .is_some_and(|(clock, at_ms)| clock.now_ms() >= *at_ms)
    }

    fn has_unsent(&self) -> bool {
        let st = self.state.borrow();
        !st.queue.is_empty() || !st.retry.is_empty()
    }

    /// One append until the first is acknowledged (it may create the stream, and appends that
    /// all find it missing would race to create it and then arrive out of order), then up to
    /// `LOG_APPENDS_IN_FLIGHT_MAX` when fenced without item seqs (with them, one append carries
    /// what those would).
    fn in_flight_max(&self) -> usize {
        let st = self.state.borrow();
        match self.options.producer {
            Some(_) if st.acknowledged && !st.item_seqs => LOG_APPENDS_IN_FLIGHT_MAX,
            _ => 1,
        }
    }

    /// Sends queued chunks until the sender was closed and every chunk acknowledged, or it
    /// gave up.
    pub async fn pump(&self) -> SendEnd {
        let mut in_flight: Vec<Append<'_>> = Vec::new();
        std::future::poll_fn(|cx: &mut Context<'_>| loop {
            if let Some(end) = self.state.borrow().ended.clone() {
                return Poll::Ready(end);
            }
            if self.lapsed() && self.has_unsent() {
                self.end_with(SendEnd::Lapsed);
                continue;
            }
            while in_flight.len() < self.in_flight_max() {
                match self.next_to_send() {
                    Some(pending) => match self.check_seq(&pending) {
                        Ok(()) => in_flight.push(self.send(pending)),
                        Err(broken) => {
                            self.end_with(SendEnd::Failed(broken));
                            break;
                        }
                    },
                    None => break,
                }
            }
            if self.state.borrow().ended.is_some() {
                continue;
            }
            self.state.borrow_mut().in_flight = in_flight.len();
            let mut progressed = false;
            let mut index = 0;
            while index < in_flight.len() {
                match in_flight[index].as_mut().poll(cx) {
                    Poll::Ready((pending, result)) => {
                        drop(in_flight.remove(index)); // in seq order: the next poll tries the oldest first
                        self.state.borrow_mut().in_flight = in_flight.len();
                        self.settle(pending, result);
                        progressed = true;
                    }
                    Poll::Pending => index += 1,
                }
            }
            if progressed {
                self.wake(); // room for a source that waits
                continue;
            }
            let st = &mut *self.state.borrow_mut();
            if st.ended.is_none()
                && st.closed
                && st.queue.is_empty()
                && st.retry.is_empty()
                && in_flight.is_empty()
            {
                st.ended = Some(SendEnd::Drained);
                return Poll::Ready(SendEnd::Drained);
            }
            st.wakers.push(cx.waker().clone());
            return Poll::Pending;
        })
        .await
    }

    /// The next append: a retry first (it holds earlier seqs), else the oldest queued chunk
    /// (fenced: it gets the next seq now), what is queued (fenced, to a log with item seqs: each
    /// chunk the next seq) or everything queued (unfenced).
    fn next_to_send(&self) -> Option<Pending> {
        let mut st = self.state.borrow_mut();
        if let Some(pending) = st.retry.pop_front() {
            return Some(pending);
        }
        let item_seqs = match st.acknowledged {
            true => st.item_seqs,
            false => self.log.gives_item_seqs(),
        };
        let texts: Vec<String> = match self.options.producer {
            Some(_) if item_seqs => take_batch(&mut st.queue)?,
            Some(_) => vec![st.queue.pop_front()?.to_string()],
            None if st.queue.is_empty() => return None,
            None => st.queue.drain(..).map(|c| c.to_string()).collect(),
        };
        let seq = st.next_seq;
        st.next_seq += match self.options.producer {
            Some(_) => texts.len() as u64,
            None => 1,
        };
        Some(Pending {
            texts,
            seq,
            attempts: 0,
        })
    }

    /// Asserted before a fenced append: chunks sent for the first time take the seqs right
    /// after the highest sent (none skipped, none reused: a reused seq would be deduplicated by
    /// the log and its chunk silently lost), a retry seqs already sent.
    fn check_seq(&self, pending: &Pending) -> Result<(), LogError> {
        if self.options.producer.is_none() {
            return Ok(());
        }
        let mut st = self.state.borrow_mut();
        let first = pending.attempts == 0;
        let last = pending.seq + (pending.texts.len() as u64).saturating_sub(1);
        let expected = st.highest_sent.map_or(self.options.first_seq, |h| h + 1);
        let holds = if first {
            pending.seq == expected
        } else {
            st.highest_sent.is_some_and(|h| last <= h)
        };
        if !holds {
            return Err(invariant(format!(
                "seqs {}..={last} sent {} (the highest sent is {:?})",
                pending.seq,
                if first { "first" } else { "again" },
                st.highest_sent
            )));
        }
        if first {
            st.highest_sent = Some(last);
        }
        Ok(())
    }

    fn send(&self, mut pending: Pending) -> Append<'_> {
        let stamp = self.options.producer.as_ref().map(|p| ProducerStamp {
            id: p.id.clone(),
            epoch: p.epoch,
            seq: pending.seq,
            item_seqs: true,
        });
        let backoff_ms = u64::from(pending.attempts) * LOG_APPEND_RETRY_BACKOFF_MS;
        pending.attempts += 1;
        Box::pin(async move {
            if backoff_ms > 0 {
                self.sleep.sleep(backoff_ms).await;
            }
            // Checked at the last moment: a retry may have waited past the deadline.
            if self.lapsed() {
                return (pending, None);
            }
            let result = self
                .log
                .append(&pending.texts, stamp.as_ref(), &self.cancel)
                .await;
            (pending, Some(result))
        })
    }

    fn settle(&self, pending: Pending, sent: Sent) {
        let Some(result) = sent else {
            return self.end_with(SendEnd::Lapsed);
        };
        match result {
            Ok(ack) => {
                let mut st = self.state.borrow_mut();
                st.acknowledged = true;
                st.item_seqs = ack.item_seqs;
                return;
            }
            Err(LogError::StaleEpoch { current_epoch }) => {
                return self.end_with(SendEnd::Fenced { current_epoch });
            }
            // The log's answer names another append than the one sent: nothing it says holds.
            Err(LogError::SequenceGap { received, .. }) if received != pending.seq => {
                return self.end_with(SendEnd::Failed(invariant(format!(
                    "the log answered seq {} with a gap for seq {received}",
                    pending.seq
                ))));
            }
            // An earlier chunk is still on its way (appends in flight can arrive out of order).
            Err(LogError::SequenceGap { expected, received }) if expected < received => {
                if pending.attempts >= LOG_APPEND_ATTEMPTS_MAX {
                    return self.end_with(SendEnd::Failed(LogError::SequenceGap {
                        expected,
                        received,
                    }));
                }
            }
            Err(error @ LogError::Retryable(_)) => {
                if pending.attempts >= LOG_APPEND_ATTEMPTS_MAX {
                    return self.end_with(SendEnd::Failed(error));
                }
            }
            Err(error) => return self.end_with(SendEnd::Failed(error)),
        }
        let mut st = self.state.borrow_mut();
        let at = st.retry.iter().position(|p| p.seq > pending.seq);
        match at {
            Some(i) => st.retry.insert(i, pending),
            None => st.retry.push_back(pending),
        }
    }
}

/// The oldest queued chunks, as texts, up to `LOG_APPEND_CHUNKS_MAX` of them and
/// `LOG_APPEND_BATCH_BYTES_MAX` bytes (the first always, however large); `None` when none is queued.
fn take_batch(queue: &mut VecDeque<Value>) -> Option<Vec<String>> {
    let mut texts = vec![queue.pop_front()?.to_string()];
    let mut bytes = texts[0].len();
    while texts.len() < LOG_APPEND_CHUNKS_MAX {
        let Some(next) = queue.front() else {
            break;
        };
        let text = next.to_string();
        if bytes + text.len() > LOG_APPEND_BATCH_BYTES_MAX {
            break;
        }
        bytes += text.len();
        texts.push(text);
        queue.pop_front();
    }
    Some(texts)
}

/// A broken invariant of the sender or its log, as the reason it ends (reported with its cause).
fn invariant(detail: String) -> LogError {
    LogError::Failed(turnkeep_ports::PortError::new(format!(
        "log sender stopped, an invariant broke: {detail}"
    )))
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use turnkeep_ports::log::LogRead;
    use turnkeep_ports::LocalFuture;

    /// A log that answers every append with `answer(seq)`, recording the seqs it was sent.
    struct Answering {
        answer: fn(u64) -> Result<AppendAck, LogError>,
        seqs: RefCell<Vec<u64>>,
    }

    impl SessionLog for Answering {
        fn append<'a>(
            &'a self,
            _chunks: &'a [String],
            producer: Option<&'a ProducerStamp>,
            _cancel: &'a CancelToken,
        ) -> LocalFuture<'a, Result<AppendAck, LogError>> {
            let seq = producer.map_or(0, |p| p.seq);
            self.seqs.borrow_mut().push(seq);
            Box::pin(std::future::ready((self.answer)(seq)))
        }
        fn read<'a>(
            &'a self,
            _from: turnkeep_ports::log::ReadFrom<'a>,
            _wait_ms: u64,
            _cancel: &'a CancelToken,
        ) -> LocalFuture<'a, Result<LogRead, LogError>> {
            Box::pin(std::future::pending())
        }
    }

    struct AtOnce;
    impl Sleep for AtOnce {
        fn sleep(&self, _ms: u64) -> LocalFuture<'_, ()> {
            Box::pin(std::future::ready(()))
        }
    }

    fn acked(_seq: u64) -> Result<AppendAck, LogError> {
        Ok(AppendAck {
            offset: "0".into(),
            duplicate: false,
            item_seqs: false,
        })
    }

    fn sender(answer: fn(u64) -> Result<AppendAck, LogError>) -> (Rc<Answering>, LogSender) {
        let log = Rc::new(Answering {
            answer,
            seqs: RefCell::new(Vec::new()),
        });
        let options = SendOptions {
            producer: Some(Producer {
                id: "p".into(),
                epoch: 1,
            }),
            merge_deltas: false,
            deadline: None,
            first_seq: 0,
        };
        (log.clone(), LogSender::new(log, Rc::new(AtOnce), options))
    }

    fn broke_invariant(end: &SendEnd) -> bool {
        matches!(end, SendEnd::Failed(LogError::Failed(e)) if e.message.contains("an invariant broke"))
    }

    #[test]
    fn seqs_go_out_one_after_another() {
        let (log, sender) = sender(acked);
        sender.push((0..4).map(|i| serde_json::json!({ "i": i })).collect());
        sender.close();
        assert_eq!(block_on(sender.pump()), SendEnd::Drained);
        assert_eq!(*log.seqs.borrow(), [0, 1, 2, 3]);
    }

    /// A seq handed out twice (here: the counter moved back, as a bug would) is refused before
    /// it is sent: the log would take it for a duplicate and drop its chunk without a word.
    #[test]
    fn a_reused_seq_is_refused_before_it_is_sent() {
        let (log, sender) = sender(acked);
        sender.push(vec![
            serde_json::json!({ "i": 0 }),
            serde_json::json!({ "i": 1 }),
        ]);
        let mut first = Box::pin(sender.pump());
        let waker = std::task::Waker::noop();
        let _ = first.as_mut().poll(&mut Context::from_waker(waker));
        assert_eq!(*log.seqs.borrow(), [0, 1]);
        sender.state.borrow_mut().next_seq = 1; // broken: seq 1 again
        sender.push(vec![serde_json::json!({ "i": 2 })]);
        sender.close();
        let end = block_on(first);
        assert!(broke_invariant(&end), "{end:?}");
        assert_eq!(*log.seqs.borrow(), [0, 1], "nothing more was sent");
    }

    /// A gap answer that names another seq than the one sent is not retried: the log and the
    /// sender no longer agree on what was sent.
    #[test]
    fn a_gap_answer_for_another_seq_ends_the_sender() {
        fn gap_for_another(seq: u64) -> Result<AppendAck, LogError> {
            Err(LogError::SequenceGap {
                expected: 0,
                received: seq + 7,
            })
        }
        let (log, sender) = sender(gap_for_another);
        sender.push(vec![serde_json::json!({ "i": 0 })]);
        sender.close();
        let end = block_on(sender.pump());
        assert!(broke_invariant(&end), "{end:?}");
        assert_eq!(log.seqs.borrow().len(), 1, "not retried");
    }
}
